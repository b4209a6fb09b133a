"""The `floor-recorders` section of scripts/bench-floor.sh: what recording the five
tracepoints a wake's account cannot do without adds to a timed wait's median lateness,
under ftrace and under BPF, from the blocks the script measured.

Per run and loop, each side's block medians over the rounds (their median), and per
round each recorder's block median less the untraced block's (the rounds of one run
rotate the sides' order; the wakes of one block share its moment, so the judged
interval is the rounds' median's, from order statistics, scripts/quantiles.py). A
recorder meets the target (adds at most TARGET_NS) where that interval lies at or
below it, misses it where the interval lies above, and is undecided between. BPF less
ftrace per round is judged the same way against zero. The events each side recorded per
block (and lost), and the measuring thread's switch-ins each side recorded, stand
beside them: a side that recorded nothing would cost nothing.

    python3 scripts/bench_floor_report.py BLOCKS.csv WAITS COMMAND
    python3 scripts/bench_floor_report.py --self-test
"""
import csv
import sys
from collections import defaultdict

from bench_doc import at_most, mark, target_summary
from quantiles import INDISTINGUISHABLE, ci, fmt_ci, order, quantile

# The target: a recorder adds at most this to the median wake (the trace-cost section's).
TARGET_NS = 2_000
SIDES = ("untraced", "ftrace", "bpf")
LABELS = {"untraced": "untraced", "ftrace": "ftrace (one instance)",
          "bpf": "BPF (ring buffer)"}
LOOPS = {"grid": "clock_nanosleep abs, 1.000 ms grid", "relative": "nanosleep 1.000 ms"}


def us(ns):
    return "–" if ns is None else f"{ns / 1e3:.2f} µs"


def middle(values):
    """The lower median of counts: one block's own count."""
    return sorted(values)[(len(values) - 1) // 2]


def load(text):
    """{(run, loop): {round: {side: row}}} of the script's CSV text, numbers as ints
    (switch_ins None where the side counts none)."""
    out = defaultdict(lambda: defaultdict(dict))
    for r in csv.DictReader(text.splitlines()):
        row = {k: int(r[k]) for k in ("median_ns", "events", "lost")}
        row["switch_ins"] = None if r["switch_ins"] in ("", "-") else int(r["switch_ins"])
        out[(int(r["run"]), r["loop"])][int(r["round"])][r["side"]] = row
    return out


def added(rounds, side, base="untraced"):
    """Per round with both sides, `side`'s block median less `base`'s, ns."""
    return [b[side]["median_ns"] - b[base]["median_ns"]
            for b in rounds.values() if side in b and base in b]


def judged(diffs):
    """(median, interval, outcome against TARGET_NS) of per-round differences."""
    c = ci(diffs, 0.5)
    return quantile(diffs, 0.5), c, at_most(c, TARGET_NS)


def loop_table(rounds, waits):
    """The Markdown lines of one run's loop, and {side: outcome} of the two recorders."""
    lines = [
        "| side | block median (rounds' median) | added to the median [95 %] | "
        "events per block | lost | the thread's switch-ins recorded per block |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    outcomes = {}
    for side in SIDES:
        rows = [b[side] for b in rounds.values() if side in b]
        medians = [r["median_ns"] for r in rows]
        if side == "untraced":
            extra, events, lost, ins = "–", "–", "–", "–"
        else:
            m, c, outcome = judged(added(rounds, side))
            outcomes[side] = outcome
            extra = f"{mark(outcome)} {us(m)} {fmt_ci(c, us)}"
            events = str(middle([r["events"] for r in rows]))
            lost = str(sum(r["lost"] for r in rows))
            counted = [r["switch_ins"] for r in rows if r["switch_ins"] is not None]
            ins = f"{middle(counted)} of {waits}" if counted else "–"
        lines.append(f"| {LABELS[side]} | {us(quantile(medians, 0.5))} | {extra} | {events} "
                     f"| {lost} | {ins} |")
    diff = added(rounds, "bpf", "ftrace")
    c = ci(diff, 0.5)
    where = order(c, (0, 0))
    verb = {"below": "cheaper than", "above": "costlier than"}.get(where, "not told from")
    lines += ["", f"- BPF less ftrace per round: {us(quantile(diff, 0.5))} {fmt_ci(c, us)}: "
              f"BPF {verb} ftrace (the interval of the rounds' median against zero)"]
    return lines, outcomes, where


def section(text, waits, command):
    """The section's body: per run and loop the tables, then the verdicts across runs."""
    data = load(text)
    runs = sorted({run for run, _ in data})
    out = [f"Command: `{command}`", "",
           f"Each block: {waits} waits on CPU 0. A recorder's cost is its block median less "
           "the untraced block's of the same round, judged on the rounds' median and its 95 % "
           f"interval against adding at most {us(TARGET_NS)} (✅ met, ❌ missed, ⚪ undecided)."]
    verdicts = defaultdict(list)  # (loop, side) -> outcome per run
    cheaper = defaultdict(list)   # loop -> BPF against ftrace per run
    for run in runs:
        out += ["", f"### Run {run} of {len(runs)}"]
        for loop, title in LOOPS.items():
            rounds = data.get((run, loop))
            if not rounds:
                continue
            out += ["", f"**{title}** ({len(rounds)} rounds):", ""]
            lines, outcomes, where = loop_table(rounds, waits)
            out += lines
            for side, o in outcomes.items():
                verdicts[(loop, side)].append(o)
            cheaper[loop].append(where)
    summary = ["", "### Across the runs", ""]
    for (loop, side), outcomes in verdicts.items():
        others = [[s for s in ("ftrace", "bpf") if s != side and verdicts[(loop, s)][i] == "met"]
                  for i in range(len(outcomes))]
        summary.append(target_summary(f"{LOOPS[loop]}, {LABELS[side]}: adds at most "
                                      f"{us(TARGET_NS)}", outcomes, INDISTINGUISHABLE,
                                      met_by_others=others, judged="recorder"))
    for loop, wheres in cheaper.items():
        summary.append(f"- {LOOPS[loop]}: BPF cheaper than ftrace in {wheres.count('below')} "
                       f"of {len(wheres)} runs, costlier in {wheres.count('above')}, not told "
                       f"apart in {len(wheres) - wheres.count('below') - wheres.count('above')}")
    return "\n".join(out[:3] + summary + out[3:])


def self_test():
    # Three rounds would leave no interval; 20 rounds of a known shape: ftrace adds 2.5 µs
    # (missed), BPF 1 µs (met), BPF below ftrace by 1.5 µs every round.
    rows = ["run,round,loop,side,median_ns,events,lost,switch_ins"]
    for r in range(1, 21):
        base = 75_000 + 100 * (r % 5)
        rows += [f"1,{r},grid,untraced,{base},0,0,-",
                 f"1,{r},grid,ftrace,{base + 2_500},9000,0,{1000 - r % 2}",
                 f"1,{r},grid,bpf,{base + 1_000},9100,{r % 2},999"]
    text = "\n".join(rows)
    data = load(text)
    assert added(data[(1, "grid")], "ftrace") == [2_500] * 20
    assert judged([2_500] * 20)[2] == "missed" and judged([1_000] * 20)[2] == "met"
    spread = list(range(1_000, 3_000, 100))
    assert judged(spread)[2] == INDISTINGUISHABLE, judged(spread)
    body = section(text, 1000, "scripts/bench-floor.sh")
    assert "| ftrace (one instance) | 77.70 µs | ❌ 2.50 µs [2.50 µs–2.50 µs] | 9000 | 0 | 999 of 1000 |" in body, body
    assert middle([3, 1, 2, 4]) == 2
    assert "| BPF (ring buffer) | 76.20 µs | ✅ 1.00 µs [1.00 µs–1.00 µs] | 9100 | 10 | 999 of 1000 |" in body, body
    assert "- BPF less ftrace per round: -1.50 µs [-1.50 µs–-1.50 µs]: BPF cheaper than ftrace" in body, body
    assert "- clock_nanosleep abs, 1.000 ms grid: BPF cheaper than ftrace in 1 of 1 runs, costlier in 0, not told apart in 0" in body, body
    assert "- clock_nanosleep abs, 1.000 ms grid, ftrace (one instance): adds at most 2.00 µs: met in 0 of 1 runs, missed in 1" in body, body
    # The summary comes before the runs, after the command and the reading.
    assert body.index("### Across the runs") < body.index("### Run 1 of 1"), body
    print("self-test ok")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    with open(argv[0]) as f:
        print(section(f.read(), int(argv[1]), argv[2]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
