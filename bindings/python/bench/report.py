#!/usr/bin/env python3
"""Renders a reach benchmark (bench/pace.py for Python, crates/sleeplab-ffi/bench/pace.c
for C) as a Markdown section and writes it into docs/BENCHMARKS.md between
`<!-- NAME:begin -->` and `<!-- NAME:end -->`.

Usage: report.py RESULT.json[,RESULT.json…] NAME "COMMAND" BENCHMARKS.md   (NAME: python or c)

Several results (the benchmark repeated: `REPEAT=3 scripts/bench-python.sh`) are one
section: the first run in full, then each contender's p99 and CPU range across the runs
and how often each target held.

Statistics are honest and the same as the Rust crates' (scripts/quantiles.py): quantiles by
linear interpolation, shown only where n*(1-q) >= 1 (p99 needs n >= 100, p99.9 needs
n >= 1000), otherwise "–" with n shown; the p99 with its 95 % interval over the blocks
the contenders took turns in (the frames of a block share its moment, so intervals of the
pooled frames would be far too narrow: quantiles.units_ci, docs/REPORT.md; none below 8
blocks); a target compared with another contender's p99 is met or missed only where those
intervals separate, else undecided ("indistinguishable in this run"); the CPU, one total
per contender, is judged by point value and says so; no target is called out of reach
from fewer than 3 runs. Every sentence comes from a function tested against
its numbers (tests/test_bench_report.py).
"""

from __future__ import annotations

import json
import os
import sys

# The section writer every benchmark shares (scripts/bench_doc.py).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from bench_doc import markers, replace_section, write_section  # noqa: E402,F401  (tests use replace_section)
import bench_doc  # noqa: E402
import quantiles  # noqa: E402
from quantiles import INDISTINGUISHABLE, fmt_ci  # noqa: E402

USAGE = 'usage: report.py RESULT.json[,RESULT.json…] {python|c} "COMMAND" BENCHMARKS.md'

# The targets, one interleaved run at 60 Hz.
P99_RATIO_TARGET = 5.0  # precise p99 lateness at most 1/5 of the plain sleep's
CPU_TARGET_PCT = 2.0  # at most 2 % of a core
BINDING_TARGET_NS = 1_000.0  # the Python binding adds at most 1 µs per call

# (plain sleep, the precise sleeps judged against it) per benchmark; the relative form is
# the target, the absolute form is shown beside it.
PAIRS = {
    "python": ("time.sleep", ("sleeplab.sleep", "sleeplab.PreciseSleeper.sleep_until")),
    "c": ("nanosleep", ("sleeplab_sleep_ns", "sleeplab_sleep_until_ns")),
}

# A frame counts as late in the attribution table beyond this (the spin itself ends within
# a clock read of the deadline).
LATE_NS = 1_000

# The exact parts of a sleeplab frame's lateness, from the sleeper's own report:
# lateness = own lateness (the sleeper's wake − the deadline it was given) + deadline shift
# (that deadline − the loop's) + return path (the loop's wake reading − the sleeper's).
# Own lateness is told by its cause: the native sleep overslept the margin (its wake came
# after the deadline), or the native wake was in time and the thread lost the time after
# it (the spin did not run: a preemption, a stall of the host, waiting for the GIL).
PARTS = (
    ("overslept_ns", "native oversleep past the margin"),
    ("lost_ns", "time lost after a timely native wake"),
    ("deadline_shift_ns", "deadline shift"),
    ("return_ns", "return path"),
)
PARTS_KEYS = tuple(key for key, _ in PARTS)


def has_view(v: dict, k: int) -> bool:
    """Whether frame k has a sleeper view (a frame whose deadline had passed before the
    wait began calls no contender, so it has none)."""
    return v["lateness_ns"][k] is not None


def frame_parts(v: dict, k: int) -> dict[str, int]:
    """Frame k's lateness in PARTS (they add up to it exactly), from the sleeper view `v`."""
    own = v["lateness_ns"][k]
    oversleep = v["native_oversleep_ns"][k]
    overslept = oversleep >= 0 and oversleep > v["margin_ns"][k]
    return {
        "overslept_ns": own if overslept else 0,
        "lost_ns": 0 if overslept else own,
        "deadline_shift_ns": v["deadline_shift_ns"][k],
        "return_ns": v["return_ns"][k],
    }


def largest_part(parts: dict[str, int]) -> str:
    """The key of the largest part (ties go to the first in PARTS)."""
    return max(PARTS_KEYS, key=lambda key: (parts[key], -PARTS_KEYS.index(key)))


def quantile(values: list[int], q: float) -> float | None:
    """The q quantile of `values` as every sleeplab report computes it (linear
    interpolation), or None when n*(1-q) < 1 (too few samples to say anything about that
    tail): scripts/quantiles.py."""
    return quantiles.quantile(values, q)


def summarize(c: dict, block: int) -> dict:
    """A contender's numbers; its frames (in order) are cut into the run's blocks of
    `block` frames, the units its p99's interval rests on."""
    lat = c["lateness_ns"]
    units = quantiles.chunks(lat, block)
    return {
        "name": c["name"],
        "n": len(lat),
        "blocks": len(units),
        "p50": quantile(lat, 0.5),
        "p99": quantile(lat, 0.99),
        "p99_ci": quantiles.units_ci(units, 0.99),
        "p999": quantile(lat, 0.999),
        "max": max(lat) if lat else None,
        "early": sum(x < 0 for x in lat),
        "cpu_pct": 100.0 * c["cpu_ns"] / c["wall_ns"] if c["wall_ns"] else None,
        "slack": c.get("timer_slack_ns"),
    }


def fmt_ns(ns: float | None) -> str:
    if ns is None:
        return "–"
    if abs(ns) < 1e6:
        return f"{ns / 1e3:.2f} µs"
    return f"{ns / 1e6:.3f} ms"


def mark(ok: bool) -> str:
    return "✅" if ok else "❌"


def scaled(c, k: float):
    """An interval times k (an open end stays open)."""
    return None if c is None else tuple(None if v is None else v * k for v in c)


def p99_outcome(plain: dict, precise: dict) -> str | None:
    """"met", "missed" or INDISTINGUISHABLE for the target p99(precise) ≤ p99(plain) / 5,
    decided by the 95 % intervals (precise's interval × 5 against plain's); None where
    either has no p99."""
    if plain["p99"] is None or precise["p99"] is None:
        return None
    o = quantiles.order(scaled(precise["p99_ci"], P99_RATIO_TARGET), plain["p99_ci"])
    return {"below": "met", "above": "missed"}.get(o, INDISTINGUISHABLE)


def p99_verdict(plain: dict, precise: dict) -> str:
    """Whether precise's p99 lateness is at most 1/P99_RATIO_TARGET of plain's: met or
    missed only where the intervals separate (precise's interval × 5 below or above
    plain's), else undecided, with both intervals."""
    label = f"{precise['name']} p99 lateness ≤ 1/{P99_RATIO_TARGET:g} of {plain['name']}'s"
    outcome = p99_outcome(plain, precise)
    if outcome is None:
        n = min(plain["n"], precise["n"])
        return f"- – {label}: not judged, p99 needs n ≥ 100 (n = {n})"
    a, b = precise["p99"], plain["p99"]
    if a < b:
        rel = f"{b / max(a, 1):.1f}× lower"
    elif a > b:
        rel = f"{a / max(b, 1):.1f}× higher"
    else:
        rel = "equal"
    blocks = min(precise["blocks"], plain["blocks"])
    few = "" if blocks >= quantiles.MIN_UNITS else f"; {blocks} blocks: an interval needs {quantiles.MIN_UNITS}"
    shown = (f"{fmt_ns(a)} {fmt_ci(precise['p99_ci'], fmt_ns)} vs {fmt_ns(b)} "
             f"{fmt_ci(plain['p99_ci'], fmt_ns)} ({rel}, n = {precise['n']}, intervals over {blocks} blocks{few})")
    if outcome == INDISTINGUISHABLE:
        return f"- ⚪ {label}: undecided, {INDISTINGUISHABLE}: {shown}"
    return f"- {bench_doc.mark(outcome)} {label}: {shown}"


def cpu_verdict(precise: dict) -> str:
    """Whether precise used at most CPU_TARGET_PCT % of a core: one CPU total per
    contender (no blocks' CPU in the result), so by point value, said so."""
    ok = precise["cpu_pct"] is not None and precise["cpu_pct"] <= CPU_TARGET_PCT
    got = "–" if precise["cpu_pct"] is None else f"{precise['cpu_pct']:.2f} % ({quantiles.BY_POINT_VALUE})"
    return f"- {mark(ok)} {precise['name']} CPU ≤ {CPU_TARGET_PCT:g} % of a core: {got}"


def overhead_verdict(o: dict) -> str:
    """Whether the binding adds at most BINDING_TARGET_NS per call."""
    b = o["binding_ns"]
    ok = b <= BINDING_TARGET_NS
    return (
        f"- {mark(ok)} the binding adds ≤ {BINDING_TARGET_NS / 1e3:g} µs per call: {b:.0f} ns "
        f"(sleeplab.sleep(0) {o['python_sleep0']:.0f} ns per call from Python − loop and "
        f"builtin call {o['python_builtin']:.0f} ns − direct Rust call {o['rust_direct']:.0f} ns; "
        f"medians of {o['repeats']} rounds of {o['calls']} calls)"
    )


def attribution(c: dict) -> dict | None:
    """Where a sleeplab contender's lateness came from, from its per-frame sleeper view
    (`c["sleeper"]`, see PARTS), or None without one. `late` counts frames later than
    LATE_NS and `by_part`, per part, the late frames in which that part was the largest;
    `tail` and `tail_by_part` the same for the frames at or above the contender's p99 (what
    set the p99; empty when the sample does not resolve it); `p50` holds the medians over
    all frames of the parts, the margin and the native oversleep (frames with a native
    phase only)."""
    v = c.get("sleeper")
    if not v:
        return None
    lat = c["lateness_ns"]
    # Frames whose deadline had passed before the wait began called no contender: no view.
    viewed = [k for k in range(len(lat)) if has_view(v, k)]
    parts = {k: frame_parts(v, k) for k in viewed}
    late = [k for k in viewed if lat[k] > LATE_NS]
    p99 = quantile(lat, 0.99)
    tail = [] if p99 is None else [k for k in viewed if lat[k] >= p99 and lat[k] > LATE_NS]

    def count(frames: list[int]) -> dict[str, int]:
        out = {key: 0 for key in PARTS_KEYS}
        for k in frames:
            out[largest_part(parts[k])] += 1
        return out

    p50 = {key: quantile([parts[k][key] for k in viewed], 0.5) for key in PARTS_KEYS}
    p50["margin_ns"] = quantile([v["margin_ns"][k] for k in viewed], 0.5)
    p50["native_oversleep_ns"] = quantile(
        [v["native_oversleep_ns"][k] for k in viewed if v["native_oversleep_ns"][k] >= 0], 0.5)
    return {"name": c["name"], "n": len(lat), "late": len(late), "by_part": count(late),
            "tail": len(tail), "tail_by_part": count(tail), "p50": p50}


def attribution_lines(parts: list[dict]) -> list[str]:
    """The attribution tables (which part was the largest, in the late frames and in the
    frames that set the p99; the parts' medians) and the sentences naming the part that
    made most of them late."""
    if not parts:
        return []
    heads = " | ".join(label for _, label in PARTS)
    out = [
        "Where the lateness came from, per frame from the sleeper's own report (lateness = "
        + " + ".join(label for _, label in PARTS)
        + f", exactly): how many frames had each as their largest part, among the frames "
        f"later than {fmt_ns(LATE_NS)} and among those at or above the contender's p99:",
        "",
        f"| contender | frames | n | {heads} |",
        "|---|---|---:|" + "---:|" * len(PARTS),
    ]
    for a in parts:
        for which, n, counts in (
            (f"later than {fmt_ns(LATE_NS)}", f"{a['late']} of {a['n']}", a["by_part"]),
            ("at or above p99", str(a["tail"]), a["tail_by_part"]),
        ):
            cells = " | ".join(str(counts[key]) for key in PARTS_KEYS)
            out.append(f"| {a['name']} | {which} | {n} | {cells} |")
    out += [
        "",
        f"| contender | {' | '.join(f'p50 {label}' for _, label in PARTS)} | p50 margin | "
        "p50 native oversleep |",
        "|---|" + "---:|" * (len(PARTS) + 2),
    ]
    for a in parts:
        meds = " | ".join(fmt_ns(a["p50"][key]) for key in PARTS_KEYS)
        out.append(
            f"| {a['name']} | {meds} | {fmt_ns(a['p50']['margin_ns'])} | "
            f"{fmt_ns(a['p50']['native_oversleep_ns'])} |"
        )
    out.append("")
    for a in parts:
        out += [cause_sentence(a), tail_sentence(a)]
    return out + [""]


def most_often_largest(by_part: dict) -> str:
    """The part that was the largest in the most frames (a tie: the first in PARTS)."""
    return max(PARTS_KEYS, key=lambda k: (by_part[k], -PARTS_KEYS.index(k)))


def part_sentence(a: dict, frames: str, by_part: str, none: str, some: str) -> str:
    """`- NAME: ` and then `none` where `a` counted no frames under `frames`; otherwise
    `some` with {part} the part that was the largest in the most of them (`a[by_part]`
    counts each part's), {n} how many that was and {of} how many frames there were."""
    if a[frames] == 0:
        return f"- {a['name']}: {none}"
    key = most_often_largest(a[by_part])
    return f"- {a['name']}: " + some.format(part=dict(PARTS)[key], n=a[by_part][key], of=a[frames])


def cause_sentence(a: dict) -> str:
    """Names the part that was the largest in most late frames (or says none was late)."""
    return part_sentence(a, "late", "by_part", f"no frame later than {fmt_ns(LATE_NS)}.",
                         "the {part} was the largest part in {n} of its {of} late frames.")


def tail_sentence(a: dict) -> str:
    """Names the part that was the largest in most of the frames that set the p99."""
    return part_sentence(
        a, "tail", "tail_by_part", f"no frame at or above its p99 was later than {fmt_ns(LATE_NS)}.",
        "in {n} of the {of} frames at or above its p99, the largest part was the {part}.")


def table(rows: list[dict]) -> list[str]:
    out = [
        "| contender | n | p50 | p99 | p99 95 % interval over blocks | p99.9 | max | early | CPU % | timer slack |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        cpu = "–" if r["cpu_pct"] is None else f"{r['cpu_pct']:.2f}"
        slack = "–" if r["slack"] is None else f"{r['slack']} ns"
        ci = "–" if r["p99"] is None else fmt_ci(r["p99_ci"], fmt_ns)
        out.append(
            f"| {r['name']} | {r['n']} | {fmt_ns(r['p50'])} | {fmt_ns(r['p99'])} | {ci} | "
            f"{fmt_ns(r['p999'])} | {fmt_ns(r['max'])} | {r['early']} | {cpu} | {slack} |"
        )
    return out


def repeat_lines(results: list[dict], name: str) -> list[str]:
    """With several runs: each contender's p99 and CPU range across them, and how often
    each target was met, missed or undecided. A target is called out of reach only where
    it was missed in every one of at least OUT_OF_REACH_RUNS runs."""
    if len(results) < 2:
        return []
    runs = [{r["name"]: r for r in (summarize(c, res["block"]) for c in res["contenders"])}
            for res in results]
    out = [f"Across {len(runs)} runs of the same command (the tables above are the first run's):", "",
           "| contender | runs | p99 min | p99 max | CPU % min | CPU % max |",
           "|---|---:|---:|---:|---:|---:|"]
    for cname in runs[0]:
        rows = [r[cname] for r in runs if cname in r]
        p99s = [r["p99"] for r in rows if r["p99"] is not None]
        cpus = [r["cpu_pct"] for r in rows if r["cpu_pct"] is not None]
        lo, hi = (min(p99s), max(p99s)) if p99s else (None, None)
        out.append(f"| {cname} | {len(rows)} | {fmt_ns(lo)} | {fmt_ns(hi)} | "
                   f"{'–' if not cpus else f'{min(cpus):.2f}'} | {'–' if not cpus else f'{max(cpus):.2f}'} |")
    plain_name, precise_names = PAIRS[name]
    out.append("")
    for pname in precise_names:
        outcomes = [p99_outcome(r[plain_name], r[pname]) for r in runs if plain_name in r and pname in r]
        cpu_ok = [r[pname]["cpu_pct"] is not None and r[pname]["cpu_pct"] <= CPU_TARGET_PCT
                  for r in runs if pname in r]
        out.append(target_summary(f"{pname} p99 lateness ≤ 1/{P99_RATIO_TARGET:g} of {plain_name}'s",
                                  outcomes))
        out.append(target_summary(f"{pname} CPU ≤ {CPU_TARGET_PCT:g} % of a core",
                                  ["met" if ok else "missed" for ok in cpu_ok]))
    return out + [""]


def target_summary(label: str, outcomes: list) -> str:
    """How often a target held over the runs (bench_doc.target_summary): "out of reach"
    only where it was missed in every one of at least 3 runs and no other contender met
    it (here the others are not judged against it, so never)."""
    return bench_doc.target_summary(label, outcomes, INDISTINGUISHABLE)


def section(result, name: str, command: str) -> str:
    """The Markdown section of one result, or of several runs (a list: the first in
    full, then the ranges across them)."""
    results = result if isinstance(result, list) else [result]
    result = results[0]
    rows = [summarize(c, result["block"]) for c in result["contenders"]]
    by_name = {r["name"]: r for r in rows}
    plain = by_name.get(PAIRS[name][0])
    precise = [by_name[n] for n in PAIRS[name][1] if n in by_name]
    parts = [a for a in map(attribution, result["contenders"]) if a]
    title = {"python": "Python", "c": "C"}[name]
    lines = [
        markers(name)[0],
        f"## Precise sleep from {title} at {result['rate_hz']:g} Hz",
        "",
        "```sh",
        command,
        "```",
        "",
        f"{result['runtime']} on {result['machine']['system']}, {result['machine']['cpus']} CPUs; "
        f"load average before/after: {fmt_load(result['load_before'])} / "
        f"{fmt_load(result['load_after'])}. Lateness = wake − deadline on an absolute "
        f"schedule, waiting the remaining time each frame; contenders interleaved in blocks "
        f"of {result['block']} frames; CPU = thread CPU time / wall time (the per-frame "
        "bookkeeping of the report, taken the same way for every contender, left out); "
        "quantiles by linear interpolation, shown only where n·(1−q) ≥ 1, the p99 with its "
        "95 % interval over the blocks (the frames of a block share its moment: order statistics "
        "at the effective sample size, docs/REPORT.md; ≥: open above; [–] with fewer than 8 blocks "
        "or too few effective frames).",
        "",
        *table(rows),
        "",
        *attribution_lines(parts),
    ]
    if plain and precise:
        lines += ["Targets, this run:", ""]
        for p in precise:
            lines += [p99_verdict(plain, p), cpu_verdict(p)]
    if "overhead" in result:
        lines.append(overhead_verdict(result["overhead"]))
    if len(results) > 1:
        lines += ["", *repeat_lines(results, name)]
    lines.append(markers(name)[1])
    return "\n".join(lines)


def fmt_load(load) -> str:
    return " ".join(f"{x:.2f}" for x in load)


def main(argv: list[str]) -> int:
    if len(argv) != 4 or argv[1] not in PAIRS:
        print(USAGE, file=sys.stderr)
        return 2
    paths, name, command, doc_path = argv
    results = []
    for path in paths.split(","):
        with open(path) as f:
            results.append(json.load(f))
    text = section(results, name, command)
    write_section(doc_path, name, text)
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
