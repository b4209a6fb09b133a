#!/usr/bin/env python3
"""Checks `sleeplab explain -- CMD` against a program that knows its own waits
(scripts/program-target.c): each of the program's waits is looked up among the waits
explain found (same thread and call, the kernel's entry and return inside the program's
own clock reads around the call), and their lateness compared: the program's, from its
clock read after the call to its deadline, against explain's, from the call's return to
the deadline the kernel kept. The two differ by the way into the kernel (the program's
deadline counts from its clock read before the call, the kernel's from its own, later)
and the way back out (the return to the program's clock read), which is why they agree
within a bound, not exactly.

Writes, per call: the waits the program made, how many explain found (and how they
ended), how many of those agree within AGREE_NS, the median and p99 of the difference,
and the medians of its three parts: the way in (the program's clock read to the call's
entry), the deadline's shift (the kernel's deadline less the program's: the kernel
counts a relative timeout from its own clock read, after the entry) and the way out
(the call's return to the program's next clock read). Then the verdicts: every wait
found (count equal, or the gap within the events the kernel reported lost), at least
95 % agreeing within AGREE_NS, judged over blocks of BLOCK waits (the share's interval
over blocks), and, with SLACK_NS, the slack the program set read on every timer the
kernel arms with the thread's slack (futex_waitv arms its timer with none), and the
traps named where the program fell into them and nowhere else: the timer slack on every
call armed with the thread's (the program sets the default), the millisecond timeout on
the millisecond APIs (it asks them for 1 ms).

With --hog, a second run of the program beside a known cause (scripts/program-hog.c: a
SCHED_FIFO thread on the same CPU spinning in bursts it logs from its own clock): the
run-queue time explain books to the hog by its name, summed over the waits, against the
time the hog's bursts overlapped each wait between its timer's hard expiry and its
return (where a woken waiter waits for the CPU), two-sided: within HOG_SHARE either way.

Usage: explain_program.py DOC "COMMAND" TRUTH.csv EXPLAIN.json [SLACK_NS]
                          [--hog "COMMAND" HOG.csv TRUTH.csv EXPLAIN.json]
       explain_program.py --self-test
"""
import csv
import json
import sys

import bench_doc
from quantiles import quantile

AGREE_NS = 2_000      # explain's lateness within this of the program's own
SHARE = 0.95          # the share of waits that must agree
BLOCK = 50            # waits per block for the share's interval
HOG_SHARE = 0.10      # the hog's booked run-queue time within this of its bursts' overlap
HOG = "program-hog"   # its name, as the kernel keeps it
MILLIS_CALLS = ("poll", "epoll_wait", "epoll_pwait")   # the program asks them for 1 ms


def load_truth(path):
    with open(path) as f:
        return [{"call": r["call"], "tid": int(r["tid"]), "before": int(r["before_ns"]),
                 "after": int(r["after_ns"]), "deadline": int(r["deadline_ns"])}
                for r in csv.DictReader(f)]


def match(truth, found):
    """Each truth row with the explain wait inside its clock reads (or None)."""
    by_tid = {}
    for w in found:
        by_tid.setdefault((w["tid"], w["call"]), []).append(w)
    out = []
    for t in truth:
        cands = [w for w in by_tid.get((t["tid"], t["call"]), [])
                 if t["before"] <= w["enter_ns"] and w["exit_ns"] <= t["after"]]
        out.append((t, cands[0] if cands else None))
    return out


def lateness(w):
    """explain's lateness of a wait its timer ended, else None."""
    if w is None or w["ending"]["by"] != "timer" or w["deadline_ns"] is None:
        return None
    return w["exit_ns"] - w["deadline_ns"]


#: Calls whose timer the kernel arms without the thread's timer slack (a timerfd's
#: timer is armed by timerfd_settime with none).
NO_SLACK = ("futex_waitv", "timerfd_read")


def parts(pairs):
    """Per call: the medians of the way in, the deadline's shift and the way out, ns."""
    out = {}
    for t, w in pairs:
        if lateness(w) is None:
            continue
        out.setdefault(t["call"], []).append((w["enter_ns"] - t["before"],
                                             w["deadline_ns"] - t["deadline"],
                                             t["after"] - w["exit_ns"]))
    return {c: tuple(quantile([v[k] for v in vs], 0.5) for k in range(3))
            for c, vs in out.items()}


def rows(pairs):
    """Per call: (call, made, found, by timer, agreeing, diffs)."""
    calls = []
    for t, _ in pairs:
        if t["call"] not in calls:
            calls.append(t["call"])
    out = []
    for c in calls:
        ps = [(t, w) for t, w in pairs if t["call"] == c]
        found = [w for _, w in ps if w is not None]
        diffs = [abs((t["after"] - t["deadline"]) - lateness(w)) for t, w in ps
                 if lateness(w) is not None]
        agree = sum(1 for d in diffs if d <= AGREE_NS)
        timer = sum(1 for w in found if w["ending"]["by"] == "timer")
        out.append((c, len(ps), len(found), timer, agree, diffs))
    return out


def us(ns):
    return "–" if ns is None else f"{ns / 1000:.2f} µs"


def scaled(ns):
    """A duration in the unit that fits it (ns, µs, ms, s)."""
    for unit, size in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= size:
            return f"{ns / size:.2f} {unit}"
    return f"{ns:.0f} ns"


def report(command, truth, doc, slack=None):
    pairs = match(truth, doc["waits"])
    table = ["| call | waits made | found | ended by timer | agree within "
             f"{AGREE_NS / 1000:.0f} µs | p50 difference | p99 difference | p50 way in | "
             "p50 deadline shift | p50 way out |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    split = parts(pairs)
    for c, made, found, timer, agree, diffs in rows(pairs):
        way_in, shift, way_out = split.get(c, (None, None, None))
        table.append(f"| {c} | {made} | {found} | {timer} | {agree} | "
                     f"{us(quantile(diffs, 0.5))} | {us(quantile(diffs, 0.99))} | "
                     f"{us(way_in)} | {us(shift)} | {us(way_out)} |")
    made = len(pairs)
    found = sum(1 for _, w in pairs if w is not None)
    lost = doc["lost_events"]
    # Blocks of BLOCK consecutive waits: k agreeing of the n with a lateness.
    units = []
    for i in range(0, made, BLOCK):
        block = pairs[i:i + BLOCK]
        ds = [abs((t["after"] - t["deadline"]) - lateness(w)) for t, w in block
              if lateness(w) is not None]
        units.append((sum(1 for d in ds if d <= AGREE_NS), len(ds)))
    share = bench_doc.share_outcome(units, SHARE)
    counted = "met" if found == made or (lost > 0 and made - found <= lost) else "missed"
    slack_line = ""
    if slack is not None:
        def slacks_of(pick):
            return [w["hard_ns"] - w["deadline_ns"] for t, w in pairs
                    if w is not None and pick(t["call"]) and w["deadline_ns"] is not None
                    and w["hard_ns"] is not None]
        slacks = slacks_of(lambda c: c not in NO_SLACK)
        right = sum(1 for s in slacks if s == slack)
        none = slacks_of(lambda c: c in NO_SLACK)
        slack_line = (f"- {bench_doc.mark('met' if slacks and right == len(slacks) else 'missed')} "
                      f"the timer slack set ({slack} ns) on every timer armed with the thread's "
                      f"slack: {right} of {len(slacks)}; {', '.join(NO_SLACK)} (armed without it): "
                      f"{sum(1 for s in none if s == 0)} of {len(none)} with none\n")
    trap_line = traps_line(doc, [t["call"] for t, _ in pairs]) if slack is not None else ""
    return (f"Run {doc.get('seconds', 0):.1f} s (`{command}`): the program made {made} waits, "
            f"explain found {found} ({doc['untimed_calls']} calls without a timeout, "
            f"{doc['unpaired_calls']} unpaired, {lost} events lost).\n\n"
            + "\n".join(table) + "\n\n"
            f"- {bench_doc.mark(counted)} every wait found: {found} of {made}"
            f"{'' if found == made else f' ({lost} events lost)'}\n"
            f"- {bench_doc.mark(share)} at least {SHARE:.0%} of the waits agree within "
            f"{AGREE_NS / 1000:.0f} µs: {bench_doc.share_text(units, 'blocks')}\n"
            + slack_line + trap_line)


def traps_line(doc, calls):
    """The traps named where the program fell into them, and nowhere else."""
    named = {(t["trap"], t.get("call")) for t in doc.get("traps", [])}
    made = sorted(set(calls))
    slack_want = {c for c in made if c not in NO_SLACK}
    slack_got = {c for k, c in named if k == "slack"}
    millis_want = {c for c in made if c in MILLIS_CALLS}
    millis_got = {c for k, c in named if k == "millis"}
    ok = slack_got == slack_want and millis_got == millis_want
    return (f"- {bench_doc.mark('met' if ok else 'missed')} the traps named where the program "
            f"fell into them and nowhere else: the default timer slack on "
            f"{len(slack_got & slack_want)} of the {len(slack_want)} calls armed with it "
            f"({len(slack_got - slack_want)} named elsewhere), the millisecond timeout on "
            f"{len(millis_got & millis_want)} of the {len(millis_want)} millisecond APIs "
            f"({len(millis_got - millis_want)} named elsewhere)\n")


def load_bursts(path):
    with open(path) as f:
        return [(int(r["start_ns"]), int(r["end_ns"])) for r in csv.DictReader(f)]


def hog_overlap(w, bursts):
    """How long the hog's bursts held the CPU between wait w's hard expiry (its timer
    fires and wakes it, even inside a burst) and its return, ns."""
    if lateness(w) is None or w["hard_ns"] is None:
        return 0
    lo, hi = w["hard_ns"], w["exit_ns"]
    return sum(max(0, min(e, hi) - max(s, lo)) for s, e in bursts if s < hi and e > lo)


def hog_report(command, bursts, truth, doc):
    """The run beside the hog: explain's run-queue time booked to it against its bursts."""
    pairs = match(truth, doc["waits"])
    waits = [w for _, w in pairs if w is not None]
    expected = sum(hog_overlap(w, bursts) for w in waits)
    hit = sum(1 for w in waits if hog_overlap(w, bursts) > 0)
    booked, others = 0, 0
    for c in doc["calls"]:
        for h in c.get("holders", []):
            if h["comm"] == HOG:
                booked += h["run_queue_ns"]
            else:
                others += h["run_queue_ns"]
    ratio = booked / expected if expected else None
    ok = ratio is not None and abs(ratio - 1) <= HOG_SHARE
    return (f"Beside a known cause (`{command}`): {len(bursts)} bursts of the hog, "
            f"{len(waits)} of the program's {len(pairs)} waits found, {hit} of them "
            f"overlapped by a burst after their timer fired.\n\n"
            f"- {bench_doc.mark('met' if ok else 'missed')} the run-queue time booked to "
            f"{HOG} by its name, {scaled(booked)}, within {HOG_SHARE:.0%} either way of the time "
            f"its bursts held the CPU between the waits' hard expiries and their returns, "
            f"{scaled(expected)} (ratio {'–' if ratio is None else f'{ratio:.3f}'}); "
            f"booked to other tasks: {scaled(others)}\n")


def self_test():
    truth = [{"call": "nanosleep", "tid": 7, "before": 1000, "after": 1_100_000,
              "deadline": 1_001_000},
             {"call": "poll", "tid": 7, "before": 2_000_000, "after": 3_100_000,
              "deadline": 3_000_000}]
    found = [{"tid": 7, "call": "nanosleep", "enter_ns": 1500, "exit_ns": 1_099_000,
              "deadline_ns": 1_001_500, "hard_ns": 1_051_500, "ending": {"by": "timer"}},
             {"tid": 7, "call": "poll", "enter_ns": 1_000, "exit_ns": 3_000_000,
              "deadline_ns": None, "hard_ns": None, "ending": {"by": "timer"}}]
    pairs = match(truth, found)
    assert pairs[0][1] is found[0] and pairs[1][1] is None, "outside the clock reads"
    # Program: 99 000 late; explain: 97 500: 1.5 µs apart.
    (c, made, n, timer, agree, diffs), _ = rows(pairs)
    assert (c, made, n, timer, agree, diffs) == ("nanosleep", 1, 1, 1, 1, [1500])
    doc = {"waits": found, "lost_events": 0, "untimed_calls": 0, "unpaired_calls": 0,
           "seconds": 1.0}
    text = report("cmd", truth, doc, slack=50_000)
    assert "❌ every wait found: 1 of 2" in text, text
    # Traps: slack on the calls armed with it, not futex_waitv; millis on poll only.
    line = traps_line({"traps": [{"trap": "slack", "call": "nanosleep"},
                                 {"trap": "slack", "call": "poll"},
                                 {"trap": "millis", "call": "poll"}]},
                      ["nanosleep", "poll", "futex_waitv"])
    assert line.startswith("- ✅") and "on 2 of the 2 calls armed with it (0 named elsewhere)" \
        in line, line
    line = traps_line({"traps": [{"trap": "slack", "call": "futex_waitv"}]},
                      ["nanosleep", "futex_waitv"])
    assert line.startswith("- ❌") and "on 0 of the 1 calls" in line and "(1 named elsewhere)" \
        in line, line
    # The hog: a burst from 1_060_000 to 1_090_000 overlaps nanosleep's [1_051_500,
    # 1_099_000] by 30 µs; a burst wholly before it does not count.
    bursts = [(1_000_000, 1_040_000), (1_060_000, 1_090_000)]
    assert [scaled(v) for v in (999, 1_500, 36_133_470, 2e9)] == \
        ["999 ns", "1.50 µs", "36.13 ms", "2.00 s"]
    assert hog_overlap(found[0], bursts) == 30_000
    assert hog_overlap(found[1], bursts) == 0, "no timer lateness, nothing expected"
    hog_doc = dict(doc, calls=[{"holders": [{"comm": HOG, "run_queue_ns": 32_000},
                                            {"comm": "kworker/0:1", "run_queue_ns": 500}]}])
    hog_text = hog_report("hog", bursts, truth, hog_doc)
    assert "- ✅" in hog_text and "ratio 1.067" in hog_text and "other tasks: 500 ns" \
        in hog_text, hog_text
    hog_doc["calls"][0]["holders"][0]["run_queue_ns"] = 34_000
    assert "- ❌" in hog_report("hog", bursts, truth, hog_doc), "over-booked beyond 10 %"
    assert "on every timer armed with the thread's slack: 1 of 1" in text, text
    assert parts(pairs) == {"nanosleep": (500, 500, 1000)}, parts(pairs)
    print("explain_program: self-test ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    hog = None
    if "--hog" in argv:
        i = argv.index("--hog")
        hog, argv = argv[i + 1:], argv[:i]
        if len(hog) != 4:
            bench_doc.die("--hog takes COMMAND HOG.csv TRUTH.csv EXPLAIN.json")
    if len(argv) not in (5, 6):
        bench_doc.die("usage: explain_program.py DOC COMMAND TRUTH.csv EXPLAIN.json [SLACK_NS]"
                      " [--hog COMMAND HOG.csv TRUTH.csv EXPLAIN.json]")
    doc_path, command, truth_path, json_path = argv[1:5]
    slack = int(argv[5]) if len(argv) == 6 else None
    truth = load_truth(truth_path)
    with open(json_path) as f:
        doc = json.load(f)
    text = report(command, truth, doc, slack)
    if hog is not None:
        with open(hog[3]) as f:
            hog_doc = json.load(f)
        text += "\n" + hog_report(hog[0], load_bursts(hog[1]), load_truth(hog[2]), hog_doc)
    print(text)
    bench_doc.write_section(doc_path, "explain-program",
                            bench_doc.wrapped("explain-program", text))


if __name__ == "__main__":
    main(sys.argv)
