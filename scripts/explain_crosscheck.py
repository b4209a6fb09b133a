"""The cross-check of `sleeplab explain`'s run queue against an independent tool, for
scripts/explain-crosscheck.sh: the run queue `explain` measured per wake (its
`idle_wakeup` + `run_queue` components: from sched_waking to the switch onto the CPU,
and any preemption) against `perf sched timehist`'s "sch delay" of the same run (perf
recorded the scheduler's tracepoints with CLOCK_MONOTONIC timestamps, as explain's
tracer does).

Each explain wake (deadline_ns, end_ns] is matched to the measuring thread's switch-ins
that timehist shows in it (normally one: the wake's own; more when the thread was
preempted after it), each one's sch delay counted from the deadline on, as explain
counts: timehist's lines are printed when the thread leaves the CPU, so a switch-in is
the line's time less its run time. timehist prints µs (truncated), so one switch-in is
placed to ±1 µs and its delay is up to 1 µs short: agreement is read within 2 µs, and a
cell agrees per wake when the 95 % interval of its share of agreeing wakes, taken over
explain's rounds (the wakes of one round share its moment), lies at or above AGREE_SHARE
(disagrees when it lies below; undecided between; not judged below 8 rounds). Quantiles
and their intervals (over rounds too): scripts/quantiles.py.

The run queue alone is explain's rule "another task held the CPU, for so long": perf's
own record of it is its `sched_switch` records of the CPU the thread came on, read to
the ns (`perf script --ns`: timehist's µs, truncated at both ends of every other task's
run, could put perf's figure beyond 2 µs of a correct one), so per switch-in the time
every task but the thread and the idle task held that CPU, from the thread's
`sched_waking` before it (after a preemption, from its switch-out) and from the
deadline on, is perf's run queue, compared with explain's `run_queue` the same way.

    python3 scripts/explain_crosscheck.py EXPLAIN.csv TIMEHIST.txt SWITCHES.txt COMMAND [PERF_NOTES]
    python3 scripts/explain_crosscheck.py --self-test

Prints the section's body (Markdown) on stdout; scripts/bench_doc.py puts it in
docs/BENCHMARKS.md.
"""
import bisect
import csv
import re
import sys
from decimal import Decimal

from bench_doc import mark, outcome_counts, overall_outcome, share_outcome, share_text
from quantiles import INDISTINGUISHABLE, by_unit, counted_by_unit, fmt_ci, quantile, units_ci

# The measuring thread's name as the kernel keeps it (15 bytes of "sleeplab-explain").
THREAD = "sleeplab-explai"
# Per-wake agreement: within this many ns (timehist's µs truncation, twice; the run
# queue alone, read to the ns, is held to the same).
AGREE_NS = 2_000
# A cell agrees per wake when at least this share of its wakes agree.
AGREE_SHARE = 0.95

LINE = re.compile(
    r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.+?)\[(\d+)(?:/(\d+))?\]\s+"
    r"(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)")


def ns_of(text, scale):
    """A decimal string in units of `scale` ns as integer ns (no float rounding)."""
    return int(Decimal(text) * scale)


SWITCH = re.compile(
    r"^\s*\d+\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+sched:sched_switch:\s+prev_comm=(.*?) "
    r"prev_pid=(\d+) .*==> next_comm=(.*?) next_pid=(\d+)")
WAKING = re.compile(
    r"^\s*\d+\s+\[(\d+)\]\s+(\d+)\.(\d{9}):\s+sched:sched_waking:\s+comm=(.*?) pid=(\d+)")


def switches(script, thread=THREAD):
    """perf's switches at ns (`perf script --ns -F cpu,tid,time,event,trace`): per CPU,
    the sorted (time, whether the task that came on is another task than `thread` and
    the idle task); and `thread`'s own (time, cpu) switch-ins, its switch-out times and
    its wake-up (`sched_waking`) times, each sorted."""
    held = {}
    ins, outs, wakings = [], [], []
    for line in script.splitlines():
        m = SWITCH.match(line)
        if m:
            cpu, t = int(m.group(1)), int(m.group(2)) * 1_000_000_000 + int(m.group(3))
            nxt, nxt_pid = m.group(6), int(m.group(7))
            held.setdefault(cpu, []).append((t, nxt != thread and nxt_pid != 0))
            if nxt == thread:
                ins.append((t, cpu))
            if m.group(4) == thread:
                outs.append(t)
            continue
        m = WAKING.match(line)
        if m and m.group(4) == thread:
            wakings.append(int(m.group(2)) * 1_000_000_000 + int(m.group(3)))
    for seq in held.values():
        seq.sort()
    return {"held": held, "ins": sorted(ins), "outs": sorted(outs), "wakings": sorted(wakings)}


def held_between(seq, lo, hi):
    """The time in [lo, hi] that `seq` (a CPU's sorted (time, another task holds it))
    says another task held the CPU."""
    i = bisect.bisect_right(seq, (lo, True)) - 1
    holding, since, total = i >= 0 and seq[i][1], lo, 0
    for t, other in seq[i + 1:]:
        if t >= hi:
            break
        total += (t - since) if holding else 0
        holding, since = other, t
    return total + ((hi - since) if holding else 0)


def last_before(times, t):
    """The last of the sorted `times` before `t`, or None."""
    i = bisect.bisect_left(times, t)
    return times[i - 1] if i else None


def run_queue_pairs(wakes, sw):
    """For each wake (deadline, end, explain run_queue ns, round) with switch-ins of the
    thread in (deadline, end]: (perf ns, explain ns, round), perf's being the time
    another task than the thread and the idle task held the CPU of each switch-in, from
    the thread's wake-up before it (after a preemption, from its switch-out), and from
    the deadline on, by perf's switches `sw` (`switches`); also the number of wakes with
    none."""
    times = [t for t, _ in sw["ins"]]
    pairs, unmatched = [], 0
    for deadline, end, explain, rnd in wakes:
        ins = sw["ins"][bisect.bisect_right(times, deadline):bisect.bisect_right(times, end)]
        if not ins:
            unmatched += 1
            continue
        held = 0
        for k, (on, cpu) in enumerate(ins):
            since = last_before(sw["wakings"] if k == 0 else sw["outs"], on)
            lo = deadline if since is None else max(since, deadline)
            held += held_between(sw["held"].get(cpu, []), lo, on)
        pairs.append((held, explain, rnd))
    return pairs, unmatched


def switch_ins(timehist, thread=THREAD):
    """(switch-in ns, sch delay ns) of every line of `thread` in timehist's output,
    sorted by time: a line is printed when the thread leaves the CPU, with its run
    time since it came on."""
    out = []
    for line in timehist.splitlines():
        m = LINE.match(line)
        if not m or m.group(3).strip() != thread:
            continue
        t_out = ns_of(m.group(1), 1_000_000_000)
        delay = ns_of(m.group(7), 1_000_000)
        run = ns_of(m.group(8), 1_000_000)
        out.append((t_out - run, delay))
    out.sort()
    return out


def match(wakes, ins):
    """For each wake (deadline, end, explain ns, round) with switch-ins in (deadline,
    end]: (timehist ns, explain ns, round), timehist's delays summed and each cut at the
    deadline; also the number of wakes with none."""
    times = [t for t, _ in ins]
    pairs, unmatched = [], 0
    for deadline, end, explain, rnd in wakes:
        i = bisect.bisect_right(times, deadline)
        j = bisect.bisect_right(times, end)
        if i == j:
            unmatched += 1
            continue
        th = sum(min(d, t - deadline) for t, d in ins[i:j])
        pairs.append((th, explain, rnd))
    return pairs, unmatched


def us(ns):
    if ns is None:
        return "–"
    return f"{ns / 1e3:.2f} µs" if abs(ns) < 1e6 else f"{ns / 1e6:.3f} ms"


def cells(rows):
    """Explain's CSV rows by cell (mechanism, requested_ns, load), in order; a wake is
    (deadline, end, idle_wakeup + run_queue ns, round: 0 where the CSV has no `round`),
    and in `rq` the same with run_queue alone. Wakes not fully traced or that never
    blocked are counted apart."""
    out = {}
    for r in rows:
        key = (r["mechanism"], int(r["requested_ns"]), int(r["load"]))
        c = out.setdefault(key, {"wakes": [], "rq": [], "skipped": 0})
        if r["traced"] != "true" or r["blocked"] != "true":
            c["skipped"] += 1
            continue
        d, e, rnd = int(r["deadline_ns"]), int(r["end_ns"]), int(r.get("round") or 0)
        c["wakes"].append((d, e, int(r["idle_wakeup_ns"]) + int(r["run_queue_ns"]), rnd))
        c["rq"].append((d, e, int(r["run_queue_ns"]), rnd))
    return out


def agreeing(pairs):
    """Per round, (wakes within AGREE_NS, wakes) of `pairs` (timehist, explain, round)."""
    return counted_by_unit(((r, a - b) for a, b, r in pairs), lambda d: abs(d) <= AGREE_NS)


def agreement(units):
    """Whether at least AGREE_SHARE of the wakes agree, judged over rounds (`units`: per
    round, agreeing wakes and wakes): bench_doc.share_outcome ("met", "missed",
    undecided, None without wakes or below 8 rounds)."""
    return share_outcome(units, AGREE_SHARE)


def table_rows(lines: list, by_cell: dict, row_of) -> list:
    """Appends `row_of(key, cell)`'s row for every cell to `lines`; its outcomes, in order."""
    outcomes = []
    for key, cell in by_cell.items():
        row, outcome = row_of(key, cell)
        lines.append(row)
        outcomes.append(outcome)
    return outcomes


def cell_row(key, cell, ins):
    """The table row of one cell, and its per-wake agreement (`agreement`)."""
    mech, req, load = key
    pairs, unmatched = match(cell["wakes"], ins)
    th = [p[0] for p in pairs]
    ex = [p[1] for p in pairs]
    diff = [a - b for a, b, _ in pairs]
    units = agreeing(pairs)
    n = len(pairs)
    outcome = agreement(units)
    diff_ci = units_ci(by_unit((r, a - b) for a, b, r in pairs), 0.5)
    dist = lambda v: " / ".join(us(quantile(v, q)) for q in (0.5, 0.9, 0.99))
    row = (f"| {mech} | {us(req)} | {load} | {n} (of {len(cell['wakes']) + cell['skipped']}; "
           f"{unmatched} unmatched, {cell['skipped']} not fully traced) | "
           f"{us(quantile(diff, 0.5))} {fmt_ci(diff_ci, us)} | {us(quantile(diff, 0.99))} | "
           f"{mark(outcome)} {share_text(units)} | {dist(th)} | {dist(ex)} |")
    return row, outcome


def rq_row(key, cell, sw):
    """The run-queue table's row of one cell, and its per-wake agreement."""
    mech, req, load = key
    pairs, unmatched = run_queue_pairs(cell["rq"], sw)
    units = agreeing(pairs)
    outcome = agreement(units)
    dist = lambda v: " / ".join(us(quantile(v, q)) for q in (0.5, 0.99))
    row = (f"| {mech} | {us(req)} | {load} | {len(pairs)} ({unmatched} unmatched) | "
           f"{mark(outcome)} {share_text(units)} | {dist([p[0] for p in pairs])} | "
           f"{dist([p[1] for p in pairs])} |")
    return row, outcome


def section(csv_text, timehist, script, command, perf_notes=""):
    """The section's body: the command, the tables, the verdicts."""
    ins = switch_ins(timehist)
    sw = switches(script)
    by_cell = cells(csv.DictReader(csv_text.splitlines()))
    lines = [
        f"Command: `{command}`",
        "",
        f"{len(ins)} switch-ins of `{THREAD}` in `perf sched timehist`. Per wake: "
        "timehist's sch delay − explain's idle wakeup + run queue (median with its 95 % "
        f"interval over rounds, p99) and how many agree within {us(AGREE_NS)} (the share's "
        f"95 % interval over rounds: ✅ at or above {100 * AGREE_SHARE:.0f} %, ❌ below, "
        "⚪ undecided, – not judged: fewer than 8 rounds); in "
        "distribution: p50 / p90 / p99 of each (– where n is too small: p90 needs 10 wakes, "
        "p99 100).",
        "",
        "| mechanism | requested | load | wakes compared | difference p50 [95 %] | difference p99 | "
        f"within {us(AGREE_NS)} | timehist sch delay p50 / p90 / p99 | "
        "explain idle wakeup + run queue p50 / p90 / p99 |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    outcomes = table_rows(lines, by_cell, lambda key, cell: cell_row(key, cell, ins))
    lines += [
        "",
        "The run queue alone, against perf's own record of who held the CPU: per switch-in "
        "of the thread, the time every other task but the idle task held that CPU from the "
        "thread's wake-up (`sched_waking`; after a preemption, from its switch-out; from the "
        "deadline on), read from perf's switches to the ns (`perf script --ns`), against "
        f"explain's run_queue; within {us(AGREE_NS)} as above, and p50 / p99 of each.",
        "",
        f"| mechanism | requested | load | wakes compared | within {us(AGREE_NS)} | "
        "perf: other tasks' run time p50 / p99 | explain run_queue p50 / p99 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rq_outcomes = table_rows(lines, by_cell, lambda key, cell: rq_row(key, cell, sw))
    lines.append("")
    lines.append(f"- {mark(overall_outcome(outcomes))} per wake (a cell agrees when at least "
                 f"{100 * AGREE_SHARE:.0f} % of its wakes lie within {us(AGREE_NS)}): "
                 + outcome_counts(outcomes, "cells agree"))
    lines.append(f"- {mark(overall_outcome(rq_outcomes))} run queue alone, per wake: "
                 + outcome_counts(rq_outcomes, "cells agree"))
    if perf_notes.strip():
        lines.append(f"- perf: {perf_notes.strip()}")
    return "\n".join(lines)


def self_test():
    th = """
           time    cpu  task name                       wait time  sch delay   run time
                        [tid/pid]                          (msec)     (msec)     (msec)
    --------------- ------  ------------------------------  ---------  ---------  ---------
    6917.752606 [0001]  kworker/1:0[55]                     0.000      0.000      0.008
    6917.752625 [0001]  sleeplab-explai[8994/8991]          1.084      0.012      0.019
    6917.752700 [0001]  cc1[77]                             0.000      0.000      0.070
    6917.753720 [0000]  sleeplab-explai[8994/8991]          1.072      0.013      0.015
    6917.753750 [0000]  sleeplab-explai[8994/8991]          0.000      0.020      0.010
"""
    ins = switch_ins(th)
    # 752.625 − 0.019 ms: on at 752.606; 753.720 − 0.015: 753.705; 753.750 − 0.010: 753.740.
    assert ins == [(6917752606000, 12000), (6917753705000, 13000), (6917753740000, 20000)], ins
    wakes = [
        (6917752500000, 6917752611000, 12_849, 0),  # one switch-in: 12 µs vs 12.849
        (6917753600000, 6917753745000, 30_000, 0),  # the wake's 13 µs and a preemption's 20 µs
        (6917753698000, 6917753705000, 9_000, 1),   # 13 µs cut at the deadline, 7 µs before
        (6917754000000, 6917754100000, 1_000, 1),   # no switch-in: unmatched
    ]
    pairs, unmatched = match(wakes, ins)
    assert pairs == [(12000, 12849, 0), (33000, 30000, 0), (7000, 9000, 1)], pairs
    assert unmatched == 1
    assert agreeing(pairs) == [(1, 2), (1, 1)]
    rows = [{"mechanism": "nanosleep", "requested_ns": "1000000", "load": "0",
             "deadline_ns": str(d), "end_ns": str(e), "idle_wakeup_ns": str(x),
             "run_queue_ns": "0", "traced": "true", "blocked": "true", "round": str(r)}
            for d, e, x, r in wakes]
    rows.append(dict(rows[0], traced="false"))
    c = cells(rows)
    assert list(c) == [("nanosleep", 1_000_000, 0)] and c[("nanosleep", 1_000_000, 0)]["skipped"] == 1
    row, outcome = cell_row(("nanosleep", 1_000_000, 0), c[("nanosleep", 1_000_000, 0)], ins)
    # Differences −0.849, 3 and −2 µs over two rounds: two of three within 2 µs, but two
    # rounds are too few for an interval: not judged.
    assert outcome is None
    assert ("| 3 (of 5; 1 unmatched, 1 not fully traced) | -0.85 µs [–] | – | "
            "– 2 of 3 (66.7 %; no interval: 2 rounds, fewer than 8) |") in row, row
    # Over rounds: ten rounds all agreeing meet the target; ten at 90 % miss it; nine
    # at 100 % and one at 60 % leave it undecided (one bad round widens the interval).
    assert agreement([]) is None and agreement([(5, 5)] * 7) is None
    assert agreement([(100, 100)] * 10) == "met"
    assert agreement([(90, 100)] * 10) == "missed"
    assert agreement([(100, 100)] * 9 + [(60, 100)]) == INDISTINGUISHABLE
    # The run queue alone, from perf's switches to the ns. CPU 1: the thread woke at
    # 752.594, the CPU idle until kworker came on at 752.598 and held it until the
    # thread came on at 752.606: 8 µs, where explain says 8.3; cc1 ran after the thread
    # left. CPU 0: the second wake's thread, woken at 753.692, came on at 753.705 after
    # the hog held the CPU from 753.695 (10 µs), was preempted at 753.720 by the hog and
    # came back at 753.730 (10 µs more: from its switch-out, not again from its wake-up). The fourth woke at 754.900 while the hog held CPU 0, but its
    # deadline was 754.904: 6 µs to its switch-in at 754.910. The third has none.
    def sw_line(cpu, t, prev, prev_pid, nxt, nxt_pid):
        return (f" {prev_pid} [{cpu:03}] {t}:       sched:sched_switch: prev_comm={prev} "
                f"prev_pid={prev_pid} prev_prio=120 prev_state=R ==> next_comm={nxt} "
                f"next_pid={nxt_pid} next_prio=120")

    def wk_line(cpu, t):
        return (f" 0 [{cpu:03}] {t}:       sched:sched_waking: comm={THREAD} pid=8994 "
                f"prio=120 target_cpu={cpu:03}")
    me = (THREAD, 8994)
    script = "\n".join([
        sw_line(1, "6917.752500000", "cc1", 77, "swapper/1", 0),
        wk_line(1, "6917.752594000"),
        sw_line(1, "6917.752598000", "swapper/1", 0, "kworker/1:0", 55),
        sw_line(1, "6917.752606000", "kworker/1:0", 55, *me),
        sw_line(1, "6917.752625000", *me, "cc1", 77),
        wk_line(0, "6917.753692000"),
        sw_line(0, "6917.753695000", "swapper/0", 0, "hog", 99),
        sw_line(0, "6917.753705000", "hog", 99, *me),
        sw_line(0, "6917.753720000", *me, "hog", 99),
        sw_line(0, "6917.753730000", "hog", 99, *me),
        sw_line(0, "6917.753740000", *me, "swapper/0", 0),
        sw_line(0, "6917.754890000", "swapper/0", 0, "hog", 99),
        wk_line(0, "6917.754900000"),
        sw_line(0, "6917.754910000", "hog", 99, *me),
    ])
    sw = switches(script)
    assert sw["ins"][:2] == [(6917752606000, 1), (6917753705000, 0)], sw["ins"]
    assert sw["outs"] == [6917752625000, 6917753720000, 6917753740000], sw["outs"]
    rq_wakes = [(6917752500000, 6917752611000, 8_300, 0),
                (6917753600000, 6917753745000, 20_500, 0),
                (6917754000000, 6917754100000, 0, 1),
                (6917754904000, 6917754950000, 6_000, 1)]
    rq_pairs, rq_unmatched = run_queue_pairs(rq_wakes, sw)
    assert rq_pairs == [(8000, 8300, 0), (20000, 20500, 0), (6000, 6000, 1)], rq_pairs
    assert rq_unmatched == 1
    assert held_between([], 0, 10) == 0 and held_between([(5, True)], 0, 10) == 5
    csv_head = ("mechanism,requested_ns,load,deadline_ns,end_ns,idle_wakeup_ns,run_queue_ns,"
                "traced,blocked,round\n")
    body = section(csv_head + "nanosleep,1000000,0,6917752500000,6917752611000,12849,0,true,true,0\n",
                   th, script,
                   "scripts/explain-crosscheck.sh", "lost 0 chunks")
    # One wake within, in one round: not judged, and the summary says none decided.
    assert "- – per wake (a cell agrees when at least 95 % of its wakes lie within 2.00 µs): 0 of 1 cells agree, 0 disagree, 0 undecided (indistinguishable in this run), 1 not judged (fewer than 8 rounds)" in body and "- perf: lost 0 chunks" in body, body
    # That wake's CSV books its 12.8 µs all to idle_wakeup: perf's 8 µs of kworker
    # disagrees with its run_queue of 0.
    assert "| nanosleep | 1.000 ms | 0 | 1 (0 unmatched) | – 0 of 1 (0.0 %; no interval" in body, body
    assert "- – run queue alone, per wake: 0 of 1 cells agree" in body, body
    # Without a `round` column (a CSV from before it) every wake is round 0.
    assert cells([dict(rows[0], round="")])[("nanosleep", 1_000_000, 0)]["wakes"][0][3] == 0
    print("self-test ok")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    texts = []
    for path in argv[:3]:
        with open(path) as f:
            texts.append(f.read())
    print(section(*texts, argv[3], argv[4] if len(argv) == 5 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
