#!/usr/bin/env python3
"""Writes the `precise-why` section of docs/BENCHMARKS.md from runs of the `precise_why`
example (crates/sleeplab-cli/examples/precise_why.rs): per run, each lane's p50, p99 and
p99.9 with the p99's 95 % interval over its blocks (`quantiles.units_ci`), its CPU with
its interval over the blocks (`quantiles.ratio_ci`), and for every lane that spins, why
its tail frames were late, read from the sleeper's own per-wait reports.

Usage: bench_precise_why.py DOC "COMMAND" RUN.json…
       bench_precise_why.py --self-test

The tail of a lane is its frames at or above its pooled p99 that were late at all. Each
tail frame has one cause, the first of these that holds:

* `budget`: the native sleep woke after the margin, and the CPU budget had cut that
  margin below the one the learned quantile wanted;
* `regime`: it woke after the margin, and a contended regime (spins losing their CPU)
  had cut the margin;
* `margin`: it woke after the margin the learned quantile set (or a fixed margin):
  this machine's wakeup was beyond the quantile the margin covers;
* `spin`: it woke within the margin, and the spin then lost its CPU (its longest gap
  between two clock reads) for at least as long as the frame was late: the host or the
  scheduler took the spinning CPU across the deadline;
* `other`: none of these (the return path, a wait that never slept).

The sleeper itself counts a spin gap as a loss only from SPIN_LOSS_NS (its
`SleepReport::PREEMPT_GAP_NS`); the `spin` frames' gaps are given beside the causes, so
a reader sees whether the gaps that made the tail were below what the sleeper reacts to.

The start of the run is a cold start (each lane's strategy is built at the start and
used from its first frame): each lane's late share (frames late by more than a third of
the plain absolute sleep's pooled p99) is given for its first block and for the rest.

Verdicts, per run: each `precise:` variant's p99 against the default `precise`'s (lower
where the variant's interval lies below the default's, higher where above, else
undecided), and the default's p99 not above, beyond the intervals, that of a fixed
margin that costs no more CPU (by point value). The moment is noisy or quiet by the noise
probe, as `bench_host_report.moment` decides it.
"""
import json
import sys
from datetime import datetime, timezone

import bench_doc
import bench_host_report as host
from quantiles import INDISTINGUISHABLE, fmt_ci, quantile, ratio_ci, units_ci

PLAIN = "clock-nanosleep-abs"
OURS = "precise"
FIXED = "fixed-margin:"
SPIN_LOSS_NS = 100_000     # the sleeper's own threshold (SleepReport::PREEMPT_GAP_NS)
GAP_NS = 50_000            # a spin gap counted in the rate per second of spin
CAUSES = ("budget", "regime", "margin", "spin", "other")
LATE_SHARE = 1 / 3         # "late" at the cold start: beyond a third of the plain p99


def us(ns):
    return host.us(ns)


def frames(run, lane):
    """Every frame of `lane` in measurement order, one dict per frame, with its block."""
    out = []
    for k, b in enumerate(run["blocks"]):
        r = b["results"][lane]
        for i, late in enumerate(r["lateness_ns"]):
            out.append({
                "block": k, "late": late, "margin": r["margin_ns"][i],
                "wanted": r["wanted_margin_ns"][i], "budget": r["budget_limited"][i],
                "over": r["oversleep_ns"][i], "gap": r["spin_gap_ns"][i],
                "spun": r["spin_ns"][i],
            })
    return out


def cause(f):
    """The cause of a late frame (see the module docs)."""
    woke_after = f["over"] is not None and f["over"] > f["margin"]
    if woke_after and f["budget"]:
        return "budget"
    if woke_after and f["margin"] < f["wanted"]:
        return "regime"
    if woke_after:
        return "margin"
    if f["late"] > 0 and f["gap"] >= f["late"]:
        return "spin"
    return "other"


def tail_causes(fs):
    """Counts per cause of the frames at or above the pooled p99 that were late at all;
    None where the frames cannot resolve a p99."""
    p99 = quantile([f["late"] for f in fs], 0.99)
    if p99 is None:
        return None
    counts = dict.fromkeys(CAUSES, 0)
    for f in fs:
        if f["late"] >= p99 and f["late"] > 0:
            counts[cause(f)] += 1
    return counts


def spin_gaps(fs):
    """The spin's longest gap of each tail frame whose cause is `spin`."""
    p99 = quantile([f["late"] for f in fs], 0.99)
    if p99 is None:
        return []
    return [f["gap"] for f in fs if f["late"] >= p99 and f["late"] > 0
            and cause(f) == "spin"]


def causes_text(counts):
    n = sum(counts.values())
    if n == 0:
        return "none late"
    return ", ".join(f"{c} {k}" for c, k in ((c, counts[c]) for c in CAUSES) if k)


def spins(fs):
    """Whether a lane planned any margin (its late frames have causes to tell apart)."""
    return any(f["margin"] > 0 for f in fs)


class Lane:
    """One lane of one run: its frames, p99 interval over blocks, CPU and its interval."""

    def __init__(self, run, name):
        self.name = name
        self.fs = frames(run, name)
        blocks = [b["results"][name] for b in run["blocks"]]
        self.lat = [f["late"] for f in self.fs]
        self.p99_ci = units_ci([r["lateness_ns"] for r in blocks], 0.99)
        cpu, wall = [r["cpu_ns"] for r in blocks], [r["wall_ns"] for r in blocks]
        self.cpu = 100.0 * sum(cpu) / max(sum(wall), 1)
        c = ratio_ci(cpu, wall)
        self.cpu_ci = None if c is None else (100.0 * c[0], 100.0 * c[1])

    def p(self, q):
        return quantile(self.lat, q)

    def p99_text(self):
        return f"{us(self.p(0.99))} {fmt_ci(self.p99_ci, us)}"

    def cpu_text(self):
        return f"{self.cpu:.2f} % {fmt_ci(self.cpu_ci, lambda x: f'{x:.2f} %')}"

    def gap_rate(self):
        """Frames whose longest spin gap was at least GAP_NS, per second spun; None
        without spinning. A frame counts once however many gaps it had: a lower bound
        where spins are long (the pure spin's)."""
        spun = sum(f["spun"] for f in self.fs)
        if spun <= 0:
            return None
        return sum(f["gap"] >= GAP_NS for f in self.fs) / (spun / 1e9)

    def cold(self, bound_ns):
        """(late in the first block, its frames, late in the rest, their frames)."""
        first = [f["late"] > bound_ns for f in self.fs if f["block"] == 0]
        rest = [f["late"] > bound_ns for f in self.fs if f["block"] > 0]
        return sum(first), len(first), sum(rest), len(rest)


def compare(a, b):
    """"lower" where a's p99 interval lies below b's, "higher" where above, else
    undecided; None where either has no interval."""
    if a.p99_ci is None or b.p99_ci is None:
        return None
    (alo, ahi), (blo, bhi) = a.p99_ci, b.p99_ci
    if ahi is not None and blo is not None and ahi < blo:
        return "lower"
    if alo is not None and bhi is not None and alo > bhi:
        return "higher"
    return INDISTINGUISHABLE


def verdicts(lanes):
    """[(target, outcome, line)] of one run."""
    out = []
    ours = lanes.get(OURS)
    if ours is None:
        return out
    for name, lane in lanes.items():
        if not name.startswith(OURS + ":"):
            continue
        o = compare(lane, ours)
        outcome = {"lower": "met", "higher": "missed", None: None}.get(o, o)
        label = f"{name} p99 below {OURS}'s"
        detail = (f"{lane.p99_text()} at {lane.cpu_text()} against {ours.p99_text()} at "
                  f"{ours.cpu_text()}")
        out.append((label, outcome, bench_doc.verdict_line(
            label, outcome, detail, "the p99 intervals overlap")))
    for name, lane in lanes.items():
        if not name.startswith(FIXED):
            continue
        label = f"{OURS} p99 not above {name}'s, which costs no more CPU"
        if lane.cpu > ours.cpu:
            # Not a target in this run (the margin cost more): outcome "costlier", which
            # the summary leaves out.
            out.append((label, "costlier", f"- {label}: not judged, {name} cost more "
                        f"({lane.cpu:.2f} % against {ours.cpu:.2f} %, by point value)"))
            continue
        # Not above beyond the intervals: overlapping intervals meet it.
        o = compare(ours, lane)
        outcome = None if o is None else ("missed" if o == "higher" else "met")
        detail = f"{ours.p99_text()} against {lane.p99_text()} at {lane.cpu_text()}"
        out.append((label, outcome, bench_doc.verdict_line(
            label, outcome, detail, "the p99 intervals overlap")))
    return out


def table(lanes, plain_p99):
    bound = None if plain_p99 is None else plain_p99 * LATE_SHARE
    rows = ["| lane | frames | p50 | p99 [95 % over blocks] | p99.9 | max | CPU [95 % over "
            "blocks] | tail frames by cause | late > ⅓ plain p99: first block / rest | "
            "spin gaps ≥ 50 µs per s spun |",
            "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|"]
    for name, lane in lanes.items():
        counts = tail_causes(lane.fs) if spins(lane.fs) else None
        causes = "–" if counts is None else causes_text(counts)
        if bound is None:
            cold = "–"
        else:
            a, n, b, m = lane.cold(bound)
            cold = f"{a} of {n} / {b} of {m}"
        rate = lane.gap_rate()
        rate = "–" if rate is None else f"{rate:.0f}"
        rows.append(f"| {name} | {len(lane.lat)} | {us(lane.p(0.5))} | {lane.p99_text()} | "
                    f"{us(lane.p(0.999))} | {us(max(lane.lat))} | {lane.cpu_text()} | "
                    f"{causes} | {cold} | {rate} |")
    return "\n".join(rows)


def why_line(lanes):
    """The default sleeper's tail, by cause, in one sentence."""
    ours = lanes.get(OURS)
    if ours is None:
        return None
    counts = tail_causes(ours.fs)
    if counts is None:
        return None
    n = sum(counts.values())
    if n == 0:
        return f"- Why {OURS}'s tail was late: no frame at or above its p99 was late."
    top = max(CAUSES, key=lambda c: counts[c])
    text = (f"- Why {OURS}'s tail was late: of its {n} frames at or above its p99, "
            f"{causes_text(counts)}; the most common cause: {top}.")
    gaps = spin_gaps(ours.fs)
    if gaps:
        below = sum(g < SPIN_LOSS_NS for g in gaps)
        text += (f" The {len(gaps)} `spin` frames lost their CPU for {us(min(gaps))} to "
                 f"{us(max(gaps))} (median {us(quantile(gaps, 0.5))}); {below} of them "
                 f"for less than the {us(SPIN_LOSS_NS)} from which the sleeper counts a "
                 "loss.")
    return text


def section(runs, command, when=None):
    when = when or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    first = runs[0]
    moments = [host.moment(r) for r in runs]
    lines = [
        f"Run {when} on {first['kernel']}, {first['cpus']} CPUs, hypervisor: "
        f"{first.get('hypervisor') or 'none'} (`{command}`): {len(runs)} runs "
        f"({', '.join(moments)}), {first['frames']} frames per lane at {first['hz']} Hz in "
        f"blocks of {first['block']}, each lane on a thread of its own at 1 ns timer slack, "
        f"built at the start of the run. Tail causes: {', '.join(CAUSES)} (see "
        "`scripts/bench_precise_why.py`). The last column counts frames whose longest spin "
        "gap was at least 50 µs per second spun (once per frame: a lower bound for the "
        "pure spin's long frames).",
        "",
    ]
    summary = {}
    bodies = []
    for k, run in enumerate(runs, 1):
        lanes = {name: Lane(run, name) for name in run["lanes"]}
        plain = lanes.get(PLAIN)
        vs = verdicts(lanes)
        for label, outcome, _ in vs:
            runs_of = summary.setdefault(label, [])
            if outcome != "costlier":
                runs_of.append(outcome)
        body = [f"### Run {k} of {len(runs)} (moment: {moments[k - 1]})", "",
                host.noise_text(run), "",
                table(lanes, None if plain is None else plain.p(0.99)), ""]
        w = why_line(lanes)
        if w:
            body.append(w)
        body += [line for _, _, line in vs]
        bodies.append("\n".join(body))
    lines.append("Across the runs:")
    for label, outcomes in summary.items():
        if outcomes:
            lines.append(bench_doc.target_summary(label, outcomes, "the p99 intervals overlap"))
        else:
            lines.append(f"- {label}: not judged in any run (the margin cost more CPU)")
    return "\n".join(lines) + "\n\n" + "\n\n".join(bodies) + "\n"


def run_gaps():
    """One block of 100 frames each spun 1 ms, every tenth with a 60 µs gap: 10 such
    frames in 0.1 s spun: 100 a second."""
    n = 100
    r = {"lateness_ns": [0] * n, "margin_ns": [0] * n, "wanted_margin_ns": [0] * n,
         "budget_limited": [False] * n, "oversleep_ns": [None] * n,
         "spin_gap_ns": [60_000 if i % 10 == 0 else 0 for i in range(n)],
         "spin_ns": [1_000_000] * n, "cpu_ns": 1, "wall_ns": 100}
    return {"blocks": [{"results": {"x": r}}]}


def self_test():
    def lane_run(values, margin=0, over=None, gap=0, budget=False, wanted=None):
        return {"lateness_ns": values, "margin_ns": [margin] * len(values),
                "wanted_margin_ns": [margin if wanted is None else wanted] * len(values),
                "budget_limited": [budget] * len(values),
                "oversleep_ns": [over] * len(values), "spin_gap_ns": [gap] * len(values),
                "spin_ns": [1_000_000] * len(values),
                "cpu_ns": 1, "wall_ns": 100}

    f = {"late": 5, "margin": 100, "wanted": 100, "budget": False, "over": 150, "gap": 0}
    assert cause(f) == "margin"
    assert cause({**f, "budget": True, "wanted": 300}) == "budget"
    assert cause({**f, "wanted": 300}) == "regime"
    assert cause({**f, "over": 50, "gap": 5}) == "spin", "a gap as long as the lateness"
    assert cause({**f, "over": 50, "gap": 4}) == "other", "a gap shorter than the lateness"
    assert cause({**f, "over": None}) == "other"
    # 200 frames: the tail is the frames at or above the pooled p99 that were late.
    values = [0] * 196 + [10, 20, 30, 40]
    run = {"blocks": [{"results": {"x": lane_run(values[i:i + 20], margin=10, over=30)}}
                      for i in range(0, 200, 20)]}
    fs = frames(run, "x")
    p99 = quantile(values, 0.99)
    counts = tail_causes(fs)
    assert sum(counts.values()) == sum(1 for v in values if v >= p99 and v > 0), counts
    assert counts["margin"] == sum(counts.values())
    assert spin_gaps(fs) == []
    assert tail_causes(fs[:50]) is None, "50 frames do not resolve a p99"
    # Cold start: a lane late only in its first block.
    lane = Lane(run, "x")
    assert lane.cold(0) == (0, 20, 4, 180)
    # No gap of 50 µs in 200 frames of 1 ms spun: a rate of 0 per second.
    assert lane.gap_rate() == 0.0
    assert Lane(run_gaps(), "x").gap_rate() == 100.0, Lane(run_gaps(), "x").gap_rate()
    print("bench_precise_why self-test: ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    if len(argv) < 4:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    doc, command, paths = argv[1], argv[2], argv[3:]
    runs = []
    for p in paths:
        try:
            with open(p) as f:
                runs.append(json.load(f))
        except (OSError, json.JSONDecodeError) as e:
            print(f"bench_precise_why: {p}: {e}", file=sys.stderr)
            return 2
    text = section(runs, command)
    print(text)
    bench_doc.write_section(doc, "precise-why", bench_doc.wrapped("precise-why", text))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
