#!/usr/bin/env python3
"""Writes the pace benchmark's section of docs/BENCHMARKS.md from a `sleeplab pace` JSON.

Usage: bench_pace_report.py PACE.json "COMMAND" "LOAD_BEFORE" "LOAD_AFTER" BENCHMARKS.md
       bench_pace_report.py --self-test

Each quantile is shown with its 95 % interval over the run's blocks (the JSON's `units`:
the frames of one block share its moment, so the pooled frames' intervals decide nothing;
scripts/quantiles.py) and every target is met or missed only where those intervals decide
it (a fixed bound against the interval; another contender's interval against this one's),
else undecided ("indistinguishable in this run"); the CPU likewise by its interval over
the blocks, or "by point value" where the result has none. With `--repeat N` in the
command the section adds each contender's p99 and CPU range across the runs and how often
each target held; a target is called out of reach only when it was missed in all of at
least 3 runs.
"""
import json
import sys

import bench_doc
from bench_doc import markers, write_section
from quantiles import INDISTINGUISHABLE, fmt_ci, order

BEGIN, END = markers("pace")

# The targets for `precise` (60 Hz, 1000 frames).
P99_TARGET_NS = 2_000
P999_TARGET_NS = 50_000
CPU_TARGET_PCT = 1.5
OURS = "precise"


def us(ns):
    if ns is None:
        return "–"
    return f"{ns / 1e3:.2f} µs" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def ci(x, key):
    """The interval of quantile `key` (e.g. "p99") of a result over its blocks, a tuple,
    or None (bench_doc.units_ci)."""
    return bench_doc.units_ci(x, key)


def with_ci(x, key):
    """`61.28 µs [52.10 µs–70.00 µs]` (its interval over blocks; `[–] (3 blocks; an
    interval needs 8)` without one), or – without the quantile."""
    v = x["error"].get(f"{key}_ns")
    if v is None:
        return "–"
    c = ci(x, key)
    return f"{us(v)} {fmt_ci(c, us)}" + ("" if c is not None else f" ({bench_doc.why_no_interval(x)})")


def bound_outcome(x, key, bound):
    """"met" (the interval lies below the bound), "missed" (above) or undecided; None
    without the quantile."""
    if x["error"].get(f"{key}_ns") is None:
        return None
    o = order(ci(x, key), (bound, bound))
    return {"below": "met", "above": "missed"}.get(o, INDISTINGUISHABLE)


def cpu_order(ours, other):
    """How precise's CPU stands against `other`'s, by their intervals over the blocks
    ("below", "above", or undecided); None (not judged: a point value decides nothing)
    where either has none."""
    a, b = bench_doc.cpu_ci(ours), bench_doc.cpu_ci(other)
    if a is None or b is None:
        return None
    return order(a, b)


def better_outcome(ours, other, cpu_too):
    """precise better than `other` on p99 (and CPU, when `cpu_too`): met where precise's
    p99 interval over the blocks lies below the other's (and its CPU's too), missed where
    it lies above (or its CPU's does), not judged (None) where a CPU has no interval and
    the p99 misses nothing, else undecided."""
    if ours["error"].get("p99_ns") is None or other["error"].get("p99_ns") is None:
        return None
    o = order(ci(ours, "p99"), ci(other, "p99"))
    c = cpu_order(ours, other) if cpu_too else "below"
    if o == "above" or c == "above":
        return "missed"
    if c is None:
        return None
    return "met" if o == "below" and c == "below" else INDISTINGUISHABLE


def line(label, outcome, detail):
    """A verdict line (bench_doc.verdict_line): ✅ met, ❌ missed, ⚪ undecided, – not judged."""
    return bench_doc.verdict_line(label, outcome, detail, INDISTINGUISHABLE)


def targets(res):
    """The targets on one run (`res`: strategy → result): (label, outcome, detail)."""
    p = res.get(OURS)
    if not p:
        return []
    out = [
        ("precise p99 ≤ 2 µs", bound_outcome(p, "p99", P99_TARGET_NS), with_ci(p, "p99")),
        ("precise p99.9 ≤ 50 µs", bound_outcome(p, "p999", P999_TARGET_NS), with_ci(p, "p999")),
        ("precise CPU ≤ 1.5 % of a core", bench_doc.cpu_bound_outcome(p, CPU_TARGET_PCT),
         bench_doc.cpu_text(p)),
    ]
    for other, cpu_too in [("seed-hybrid", True), ("spin-sleep", False)]:
        o = res.get(other)
        if not o:
            continue
        what = "p99 and CPU" if cpu_too else "p99"
        detail = f"p99 {with_ci(p, 'p99')} vs {with_ci(o, 'p99')}"
        if cpu_too:
            detail += f"; CPU {bench_doc.cpu_text(p)} vs {bench_doc.cpu_text(o)}"
        out.append((f"precise better than {other} on {what}", better_outcome(p, o, cpu_too), detail))
    return out


def across_runs(runs):
    """How often each target held over the runs of a `--repeat` result (p99.9 is not kept
    per run: its target is read on the first run only), and the p99 and CPU ranges."""
    if len(runs) < 2:
        return []
    outcomes = {}
    for run in runs:
        for label, outcome, _ in targets({x["strategy"]: x for x in run}):
            if "p99.9" not in label:
                outcomes.setdefault(label, []).append(outcome)
    rows = ["| strategy | runs | p99 min | p99 max | CPU % min | CPU % max |", "|---|---:|---:|---:|---:|---:|"]
    for name in [x["strategy"] for x in runs[0]]:
        xs = [x for run in runs for x in run if x["strategy"] == name]
        p = [x["error"]["p99_ns"] for x in xs if x["error"].get("p99_ns") is not None]
        c = [x["cpu_percent"] for x in xs]
        rows.append(f"| {name} | {len(xs)} | {us(min(p)) if p else '–'} | {us(max(p)) if p else '–'} | "
                    f"{min(c):.2f} | {max(c):.2f} |")
    return ["", f"Across {len(runs)} runs of the command (the table above is the first run's):", "", *rows, "",
            *[bench_doc.target_summary(label, o, INDISTINGUISHABLE) for label, o in outcomes.items()]]


def section(r, command, load_before, load_after):
    data = r["data"]
    res = {x["strategy"]: x for x in data["results"]}
    fp = r["fingerprint"]
    block = data["config"]["block"]
    rows = ["| strategy | p50 | p99 [95 % interval over blocks] | p99.9 | max | missed | CPU % [interval] | "
            "csw v/i per frame |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, x in res.items():
        e = x["error"]
        rows.append(f"| {name} | {us(e['median_ns'])} | {with_ci(x, 'p99')} | {us(e.get('p999_ns'))} | "
                    f"{us(e['max_ns'])} | {x['missed_frames']} | {bench_doc.cpu_text(x)} | "
                    f"{x['voluntary_csw_per_frame']:.2f}/{x['involuntary_csw_per_frame']:.2f} |")
    return "\n".join([
        BEGIN,
        "## Precise sleep at 60 Hz (`sleeplab pace`)",
        "",
        "```sh",
        "scripts/bench-pace.sh   # runs:",
        command,
        "```",
        "",
        f"Run {r['started_at']} on {fp['cpu_model']} × {fp['cpu_count']}, kernel {fp['kernel_release']}, "
        f"clocksource {fp.get('clocksource')}, virtualization {fp.get('virtualization')}. "
        f"Load average before/after: {load_before} / {load_after}. Frame error = wake − deadline on "
        f"an absolute schedule; contenders interleaved in blocks of {block} frames; each p99 with its "
        "95 % interval over the blocks (the frames of a block share its moment: order statistics at "
        "the effective sample size, docs/REPORT.md; ≥: open above; – with fewer than 8 blocks), the "
        "CPU with its interval over the blocks; a target is met or missed only where the "
        f"intervals decide it, else undecided ({INDISTINGUISHABLE}).",
        "",
        *rows,
        "",
        "Targets, first run:",
        "",
        *[line(*t) for t in targets(res)],
        *across_runs(bench_doc.pace_runs(data)),
        END,
    ])


def self_test():
    def res(name, p99, cpu, ci=None, p999=None, p999_ci=None, cpu_ci=None, blocks=20):
        ci = ci if ci is not None else [0.9 * p99, 1.1 * p99]
        return {"strategy": name, "cpu_percent": cpu, "missed_frames": 0, "voluntary_csw_per_frame": 1.0,
                "involuntary_csw_per_frame": 0.0,
                "cpu_ci_percent": cpu_ci if cpu_ci is not None else [0.95 * cpu, 1.05 * cpu],
                "units": {"unit": "block", "units": blocks, "p99_ci_ns": ci, "p999_ci_ns": p999_ci},
                "error": {"count": 1000, "median_ns": 10, "p99_ns": p99,
                          "p99_ci_ns": [p99, p99], "p999_ns": p999, "p999_ci_ns": p999_ci, "max_ns": p99}}
    ours = res(OURS, 1_500, 0.9, p999=60_000, p999_ci=[55_000, None])
    t = targets({OURS: ours, "seed-hybrid": res("seed-hybrid", 4_580, 6.69),
                 "spin-sleep": res("spin-sleep", 1_600, 0.5)})
    got = [(label, outcome) for label, outcome, _ in t]
    assert got == [("precise p99 ≤ 2 µs", "met"),  # [1.35, 1.65] µs over blocks below 2 µs
                   ("precise p99.9 ≤ 50 µs", "missed"),  # [55 µs, –) above 50 µs
                   ("precise CPU ≤ 1.5 % of a core", "met"),  # [0.855, 0.945] %
                   ("precise better than seed-hybrid on p99 and CPU", "met"),
                   ("precise better than spin-sleep on p99", INDISTINGUISHABLE)], got
    assert line(*t[4]).startswith("- ⚪ precise better than spin-sleep on p99: undecided, indistinguishable")
    assert "CPU 0.90 % [0.85–0.95 %] vs 6.69 % [6.36–7.02 %]" in t[3][2], t[3][2]
    # An open interval holding the bound decides nothing; a higher CPU misses the pair.
    wide = res(OURS, 1_500, 8.0, ci=[1_000, None])
    assert bound_outcome(wide, "p99", P99_TARGET_NS) == INDISTINGUISHABLE
    assert better_outcome(wide, res("seed-hybrid", 4_580, 6.69), True) == "missed"
    assert with_ci(wide, "p99") == "1.50 µs [≥ 1.00 µs]"
    # The pooled frames' interval (a point here) decides nothing: without intervals over
    # blocks (too few blocks), no verdict on the p99.
    few = res(OURS, 1_500, 0.9, blocks=4)
    few["units"]["p99_ci_ns"] = None
    assert bound_outcome(few, "p99", P99_TARGET_NS) == INDISTINGUISHABLE
    # CPU intervals that overlap decide nothing; without them nothing is judged (the
    # point value is shown, saying so).
    close = res(OURS, 1_500, 1.4, cpu_ci=[1.2, 1.7])
    assert bench_doc.cpu_bound_outcome(close, CPU_TARGET_PCT) == INDISTINGUISHABLE
    assert better_outcome(res(OURS, 1_000, 6.0, cpu_ci=[5.0, 7.0]), res("seed-hybrid", 4_580, 6.69),
                          True) == INDISTINGUISHABLE
    bare = dict(res(OURS, 1_500, 1.4), cpu_ci_percent=None)
    assert bench_doc.cpu_bound_outcome(bare, CPU_TARGET_PCT) is None
    assert bench_doc.cpu_text(bare) == "1.40 % (by point value: no interval over its 20 blocks)"
    assert with_ci(few, "p99") == "1.50 µs [–] (4 blocks; an interval needs 8)", with_ci(few, "p99")
    assert bench_doc.cpu_text(dict(bare, units=None)) == (
        "1.40 % (by point value: no intervals over blocks in this result)")
    # Nor does a CPU comparison rest on point values: without an interval it is not judged
    # (a p99 above still misses the pair).
    assert cpu_order(bare, res("seed-hybrid", 4_580, 6.69)) is None
    assert better_outcome(dict(res(OURS, 1_000, 0.9), cpu_ci_percent=None),
                          res("seed-hybrid", 4_580, 6.69), True) is None
    assert better_outcome(dict(res(OURS, 9_000, 0.9), cpu_ci_percent=None),
                          res("seed-hybrid", 4_580, 6.69), True) == "missed"
    # Across runs.
    runs = [[ours], [res(OURS, 3_000, 0.9)], [res(OURS, 1_000, 2.0)]]
    a = "\n".join(across_runs(runs))
    assert "- precise p99 ≤ 2 µs: met in 2 of 3 runs, missed in 1" in a, a
    assert "- precise CPU ≤ 1.5 % of a core: met in 2 of 3 runs, missed in 1" in a, a
    assert "| precise | 3 | 1.00 µs | 3.00 µs | 0.90 | 2.00 |" in a, a
    assert across_runs(runs[:1]) == []
    print("self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    path, command, load_before, load_after, doc = sys.argv[1:6]
    r = json.load(open(path))
    s = section(r, command, load_before, load_after)
    write_section(doc, "pace", s)
    print(s)


if __name__ == "__main__":
    main()
