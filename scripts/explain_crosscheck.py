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
own record of it is timehist's lines of the other tasks on the CPU the thread came on
(each printed when that task left the CPU, with its run time since it came on), so per
switch-in the run time of every task but the idle task inside its sch delay (from the
deadline on) is perf's run queue, compared with explain's `run_queue` the same way.

    python3 scripts/explain_crosscheck.py EXPLAIN.csv TIMEHIST.txt COMMAND [PERF_NOTES]
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
# Per-wake agreement: within this many ns (timehist's µs truncation, twice).
AGREE_NS = 2_000
# A cell agrees per wake when at least this share of its wakes agree.
AGREE_SHARE = 0.95

LINE = re.compile(
    r"^\s*(\d+\.\d+)\s+\[(\d+)\]\s+(.+?)\[(\d+)(?:/(\d+))?\]\s+"
    r"(\d+\.\d+)\s+(\d+\.\d+)\s+(\d+\.\d+)")


def ns_of(text, scale):
    """A decimal string in units of `scale` ns as integer ns (no float rounding)."""
    return int(Decimal(text) * scale)


def runs(timehist):
    """(cpu, task, on ns, off ns, sch delay ns) of every line of timehist's output, in
    its order: a line is printed when its task leaves the CPU, with its run time."""
    out = []
    for line in timehist.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t_out = ns_of(m.group(1), 1_000_000_000)
        run = ns_of(m.group(8), 1_000_000)
        out.append((int(m.group(2)), m.group(3).strip(), t_out - run, t_out,
                    ns_of(m.group(7), 1_000_000)))
    return out


def run_queue_pairs(wakes, lines, thread=THREAD):
    """For each wake (deadline, end, explain run_queue ns, round) with switch-ins of
    `thread` in (deadline, end]: (perf ns, explain ns, round), perf's being the run time
    of every other task but the idle task on the switch-in's CPU inside its sch delay,
    from the deadline on; also the number of wakes with none."""
    mine = [(cpu, on, delay) for cpu, task, on, _, delay in lines if task == thread]
    others = [(cpu, on, off) for cpu, task, on, off, _ in lines
              if task != thread and not task.startswith("<idle>")]
    pairs, unmatched = [], 0
    for deadline, end, explain, rnd in wakes:
        ins = [(cpu, on, delay) for cpu, on, delay in mine if deadline < on <= end]
        if not ins:
            unmatched += 1
            continue
        held = 0
        for cpu, on, delay in ins:
            lo = max(on - delay, deadline)
            held += sum(max(0, min(b, on) - max(a, lo)) for c, a, b in others if c == cpu)
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


def rq_row(key, cell, lines):
    """The run-queue table's row of one cell, and its per-wake agreement."""
    mech, req, load = key
    pairs, unmatched = run_queue_pairs(cell["rq"], lines)
    units = agreeing(pairs)
    outcome = agreement(units)
    dist = lambda v: " / ".join(us(quantile(v, q)) for q in (0.5, 0.99))
    row = (f"| {mech} | {us(req)} | {load} | {len(pairs)} ({unmatched} unmatched) | "
           f"{mark(outcome)} {share_text(units)} | {dist([p[0] for p in pairs])} | "
           f"{dist([p[1] for p in pairs])} |")
    return row, outcome


def section(csv_text, timehist, command, perf_notes=""):
    """The section's body: the command, the tables, the verdicts."""
    ins = switch_ins(timehist)
    lines_ = runs(timehist)
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
        "of the thread, the run time timehist gives every other task but the idle task on "
        "that CPU inside the switch-in's sch delay (from the deadline on), against "
        f"explain's run_queue; within {us(AGREE_NS)} as above, and p50 / p99 of each.",
        "",
        f"| mechanism | requested | load | wakes compared | within {us(AGREE_NS)} | "
        "perf: other tasks' run time p50 / p99 | explain run_queue p50 / p99 |",
        "|---|---:|---:|---:|---:|---:|---:|",
    ]
    rq_outcomes = table_rows(lines, by_cell, lambda key, cell: rq_row(key, cell, lines_))
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
    # The run queue alone: the first wake's switch-in at 752.606 waited 12 µs (from
    # 752.594), and kworker held CPU 1 from 752.598 to 752.606: 8 µs, where explain says
    # 8.3 µs. The second wake's switch-ins are on CPU 0, where no other task ran: 0 and
    # 0. cc1 ran on CPU 1 after the first switch-in: not counted.
    rq_wakes = [(6917752500000, 6917752611000, 8_300, 0), (6917753600000, 6917753745000, 0, 0),
                (6917754000000, 6917754100000, 0, 1)]
    rq_pairs, rq_unmatched = run_queue_pairs(rq_wakes, runs(th))
    assert rq_pairs == [(8000, 8300, 0), (0, 0, 0)] and rq_unmatched == 1, rq_pairs
    idle = th.replace("kworker/1:0[55]   ", "<idle>           ")
    assert run_queue_pairs(rq_wakes, runs(idle))[0][0] == (0, 8300, 0), "the idle task holds nothing"
    csv_head = ("mechanism,requested_ns,load,deadline_ns,end_ns,idle_wakeup_ns,run_queue_ns,"
                "traced,blocked,round\n")
    body = section(csv_head + "nanosleep,1000000,0,6917752500000,6917752611000,12849,0,true,true,0\n",
                   th, "scripts/explain-crosscheck.sh", "lost 0 chunks")
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
    if len(argv) not in (3, 4):
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        csv_text = f.read()
    with open(argv[1]) as f:
        timehist = f.read()
    print(section(csv_text, timehist, argv[2], argv[3] if len(argv) == 4 else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
