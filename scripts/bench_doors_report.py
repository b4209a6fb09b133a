#!/usr/bin/env python3
"""Writes the `doors` section of docs/BENCHMARKS.md from moments of scripts/bench-doors.sh:
per moment, the `host_share` run (the noise probe before and after it, and the precise
sleeper beside fixed margins, a plain absolute sleep and a spin, at 1 ns timer slack) and
the doors of each language (crates/sleeplab/examples/doors.rs, crates/sleeplab-ffi/bench/
doors.c, bindings/python/bench/doors.py: every way into the library, used as a user would,
against the plain sleep of the same language, each on a thread of its own).

Usage: bench_doors_report.py [--store DIR] DOC "COMMAND" MOMENT_DIR…     (each holds
       host.json and rust.json, c.json, python.json where that language ran, and `when`,
       the UTC time the moment began)
       With --store, the moments are added to the store DIR (scripts/moment_store.py: only
       from a clean tree) and the section is written over every stored moment that still
       measures the current code; without it, or from a dirty tree, over these only.
       bench_doors_report.py --self-test

A moment is noisy or quiet by its noise probe (`bench_host_report.moment`: busy where a
probe lost at least 1 % of a CPU off the guest's run queue or saw a gap there of 1 ms).
Every p99 is the pooled p99 of a contender's frames with its 95 % interval over its blocks
(`quantiles.units_ci`), every CPU share the blocks' CPU time over their wall time with its
interval over the blocks (`quantiles.ratio_ci`). The targets:

* noisy moments: the precise sleeper's p99 at most a third of the plain absolute sleep's,
  at ≤ 3 % of a core; each door's p99 at most a third of its language's plain sleep's, at
  ≤ 3 % of a core (met where the door's interval lies at or below a third of the plain
  sleep's lower end, missed where it lies above a third of its upper end);
* noisy moments, both at once ("p99 ≤ 1/3 at ≤ 3 %"): met where both are met, missed
  where either is missed. Where the precise sleeper or a door misses it in every one of at
  least three noisy moments, the summary calls it out of reach only if no fixed margin of
  the same moments' host run met it against the plain absolute sleep (a fixed margin trades
  CPU for tail one for one: the margins the run was given trace that frontier), and each
  moment says which fixed margin was the cheapest to reach a third, at what CPU;
* every moment: the precise sleeper's p99 not above, beyond the intervals, any fixed
  margin's that costs no more CPU (by point value: the fixed margin's CPU at or below the
  precise sleeper's);
* quiet moments: the targets `bench_host_report` judges (p99 ≤ max(1.5 × spin's, spin's +
  10 µs) at ≤ 1.5 %), as it judges them.
"""
import json
import os
import sys
from datetime import datetime, timezone

import bench_doc
import bench_host_report as host
import moment_store
from quantiles import INDISTINGUISHABLE, MIN_UNITS, fmt_ci, quantile, ratio_ci, units_ci

SHARE = 1 / 3          # a door's p99 at most a third of its plain sleep's
CPU_NOISY_PCT = 3.0    # ... at no more than 3 % of a core
LANGUAGES = ("rust", "c", "python")

# Each door and the plain sleep of its language it is judged against.
DOORS = {
    "rust": {
        "PreciseSleeper::sleep": "std::thread::sleep",
        "PreciseSleeper::sleep_until": "clock_nanosleep",
        "Ticker::tick": "clock_nanosleep",
        "ReactorTimer::sleep_until": "tokio::time::sleep_until",
        "ReactorInterval::tick": "tokio::time::sleep_until",
    },
    "c": {
        "sleeplab_sleep_ns": "nanosleep",
        "sleeplab_sleep_until_ns": "clock_nanosleep",
        "sleeplab_ticker_tick": "clock_nanosleep",
    },
    "python": {
        "sleeplab.sleep": "time.sleep",
        "sleeplab.sleep_until": "time.sleep",
        "sleeplab.Ticker": "time.sleep",
        "sleeplab.asleep": "asyncio.sleep",
        "sleeplab.asleep_until": "asyncio.sleep",
    },
}
HOST_PLAIN = "clock-nanosleep-abs"
HOST_OURS = "precise"
FIXED_PREFIX = "margin-"


def fixed_names(names):
    """The fixed margins among a host run's contenders, in the run's order."""
    return [n for n in names if n.startswith(FIXED_PREFIX)]


def us(ns):
    return host.us(ns)


def pct(x):
    return "–" if x is None else f"{x:.2f} %"


class Lane:
    """One contender's frames by block and CPU by block, whatever the harness."""

    def __init__(self, name, blocks, cpu_ns, wall_ns, slack_ns=None):
        self.name = name
        self.blocks = [list(b) for b in blocks]
        self.cpu_ns, self.wall_ns = list(cpu_ns), list(wall_ns)
        self.slack_ns = slack_ns

    @classmethod
    def of_door(cls, c):
        return cls(c["name"], [b["lateness_ns"] for b in c["blocks"]],
                   [b["cpu_ns"] for b in c["blocks"]], [b["wall_ns"] for b in c["blocks"]],
                   c.get("timer_slack_ns"))

    @classmethod
    def of_host(cls, run, name):
        rs = [b["results"][name] for b in run["blocks"]]
        return cls(name, [r["lateness_ns"] for r in rs], [r["cpu_ns"] for r in rs],
                   [r["wall_ns"] for r in rs], 1)

    def frames(self):
        return [x for b in self.blocks for x in b]

    def p(self, q):
        return quantile(self.frames(), q)

    def p99_ci(self):
        return units_ci(self.blocks, 0.99)

    def cpu(self):
        return 100.0 * sum(self.cpu_ns) / max(sum(self.wall_ns), 1)

    def cpu_ci(self):
        c = ratio_ci(self.cpu_ns, self.wall_ns)
        return None if c is None else (100.0 * c[0], 100.0 * c[1])

    def p99_text(self):
        return f"{us(self.p(0.99))} {fmt_ci(self.p99_ci(), us)}"

    def cpu_text(self):
        return f"{pct(self.cpu())} {fmt_ci(self.cpu_ci(), lambda x: f'{x:.2f} %')}"


def share_outcome(door, plain, share=SHARE):
    """A door's p99 at most `share` of the plain sleep's, by their intervals over blocks:
    "met" where the door's upper end is at or below `share` × the plain's lower end,
    "missed" where the door's lower end is above `share` × the plain's upper end, else
    undecided; None where either has no interval."""
    d, p = door.p99_ci(), plain.p99_ci()
    if d is None or p is None:
        return None
    if d[1] is not None and p[0] is not None and d[1] <= share * p[0]:
        return "met"
    if d[0] is not None and p[1] is not None and d[0] > share * p[1]:
        return "missed"
    return INDISTINGUISHABLE


def not_worse_outcome(ours, other):
    """`ours`' p99 not above `other`'s beyond the intervals: "missed" where ours' lower
    end lies above the other's upper end, else "met"; None without intervals."""
    a, b = ours.p99_ci(), other.p99_ci()
    if a is None or b is None:
        return None
    if a[0] is not None and b[1] is not None and a[0] > b[1]:
        return "missed"
    return "met"


def both_outcome(share, cpu):
    """Two targets at once (the tail and the CPU): "met" where both are met, "missed" where
    either is missed, None where either was not judged, else undecided."""
    if "missed" in (share, cpu):
        return "missed"
    if share is None or cpu is None:
        return None
    if share == "met" and cpu == "met":
        return "met"
    return INDISTINGUISHABLE


def reach_outcome(lane, plain, cpu_pct=CPU_NOISY_PCT, share=SHARE):
    """`lane`'s p99 at most `share` of `plain`'s at ≤ `cpu_pct` % of a core, by intervals."""
    return both_outcome(share_outcome(lane, plain, share), bench_doc.at_most(lane.cpu_ci(), cpu_pct))


def fixed_reached(lanes, plain_name=HOST_PLAIN, outcome="met"):
    """The fixed margins of a host run whose noisy target (against its plain sleep) came
    out `outcome`: "met", or INDISTINGUISHABLE for those whose intervals left it open."""
    plain = lanes[plain_name]
    return [f for f in fixed_names(lanes) if reach_outcome(lanes[f], plain) == outcome]


def frontier_line(lanes, plain_name=HOST_PLAIN, share=SHARE):
    """One moment's fixed margins against the plain sleep, by point value: each margin's p99
    ratio and CPU, then the cheapest margin (by CPU) whose p99 was at most `share` of the
    plain sleep's, or that none was."""
    plain = lanes[plain_name]
    p = plain.p(0.99)
    names = fixed_names(lanes)
    if not names or not p:
        return None
    parts = []
    reached = []
    for f in names:
        q = lanes[f].p(0.99)
        if q is None:
            continue
        parts.append(f"{f} {q / p:.3g} at {pct(lanes[f].cpu())}")
        if q <= share * p:
            reached.append(f)
    text = (f"- Fixed margins, p99 as a share of {plain_name}'s ({us(p)}), at their CPU "
            f"({bench_doc.BY_POINT_VALUE}): {'; '.join(parts)}. ")
    if reached:
        cheapest = min(reached, key=lambda f: lanes[f].cpu())
        text += (f"The cheapest to reach a third of it: {cheapest}, at "
                 f"{pct(lanes[cheapest].cpu())} of a core.")
    else:
        text += "None of them reached a third of it."
    return text


def ratio_text(door, plain):
    """`p99 ratio 0.21 (door / plain, by point value)`."""
    d, p = door.p(0.99), plain.p(0.99)
    if d is None or not p:
        return "p99 ratio –"
    return f"p99 ratio {d / p:.3g} ({bench_doc.BY_POINT_VALUE})"


def door_verdicts(language, lanes, moment):
    """[(key, label, outcome, line)] of one language's doors in one moment: the p99 and
    CPU targets in a noisy moment; in a quiet one, the same lines marked not judged."""
    out = []
    for door, plain in DOORS[language].items():
        if door not in lanes or plain not in lanes:
            continue
        d, p = lanes[door], lanes[plain]
        label = f"{language}: {door} p99 ≤ 1/3 of {plain}'s"
        detail = (f"{d.p99_text()} against {p.p99_text()}, {ratio_text(d, p)}; "
                  f"{d.name} at {d.cpu_text()} of a core")
        if moment != "busy":
            out.append((label, label, None, f"- {label}: {detail} (quiet moment: not judged)"))
            continue
        o = share_outcome(d, p)
        out.append((label, label, o, bench_doc.verdict_line(
            label, o, detail, "the intervals leave the ratio on both sides of 1/3")))
        cl = f"{language}: {door} at ≤ {CPU_NOISY_PCT:g} % of a core"
        co = bench_doc.at_most(d.cpu_ci(), CPU_NOISY_PCT)
        out.append((label + " cpu", cl, co, bench_doc.verdict_line(
            cl, co, d.cpu_text(), "the interval straddles the bound")))
        bl = f"{language}: {door} p99 ≤ 1/3 of {plain}'s at ≤ {CPU_NOISY_PCT:g} % of a core"
        bo = both_outcome(o, co)
        out.append((label + " both", bl, bo, bench_doc.verdict_line(
            bl, bo, "by the p99 and CPU lines above", "one of the two is undecided")))
    return out


def precise_noisy_verdicts(ours, plain, judged=True):
    """[(key, label, outcome, line)] of the precise sleeper's noisy-moment targets against
    the plain absolute sleep: p99 ≤ 1/3, CPU ≤ 3 %, and both at once; where not `judged`
    (a quiet moment), the p99 line alone, marked not judged."""
    label = f"precise p99 ≤ 1/3 of {HOST_PLAIN}'s"
    detail = f"{ours.p99_text()} against {plain.p99_text()}, {ratio_text(ours, plain)}"
    if not judged:
        return [(label, label, None, f"- {label}: {detail} (quiet moment: not judged)")]
    o = share_outcome(ours, plain)
    out = [(label, label, o, bench_doc.verdict_line(
        label, o, detail, "the intervals leave the ratio on both sides of 1/3"))]
    cl = f"precise at ≤ {CPU_NOISY_PCT:g} % of a core"
    co = bench_doc.at_most(ours.cpu_ci(), CPU_NOISY_PCT)
    out.append((cl, cl, co, bench_doc.verdict_line(cl, co, ours.cpu_text(),
                                                   "the interval straddles the bound")))
    bl = f"precise p99 ≤ 1/3 of {HOST_PLAIN}'s at ≤ {CPU_NOISY_PCT:g} % of a core"
    bo = both_outcome(o, co)
    out.append((label + " both", bl, bo, bench_doc.verdict_line(
        bl, bo, "by the p99 and CPU lines above", "one of the two is undecided")))
    return out


def pooled_lane(lanes):
    """One contender's lanes of several moments as one: their blocks and CPU, in order."""
    return Lane(lanes[0].name, [b for lane in lanes for b in lane.blocks],
                [c for lane in lanes for c in lane.cpu_ns],
                [w for lane in lanes for w in lane.wall_ns], lanes[0].slack_ns)


def pooled_verdicts(moments, cls):
    """The lines of the targets of class `cls` ("busy" or "quiet"), each judged once on the
    blocks of all `moments` pooled (each contender over the moments it ran in): in noisy
    moments the precise sleeper's and every door's p99 ≤ 1/3 and CPU; in quiet ones
    `bench_host_report`'s two, block by block. [] without moments."""
    if not moments:
        return []
    runs = [m["host"] for m in moments]
    out = []
    if cls == "busy":
        if all({HOST_OURS, HOST_PLAIN} <= set(r["contenders"]) for r in runs):
            ours = pooled_lane([Lane.of_host(r, HOST_OURS) for r in runs])
            plain = pooled_lane([Lane.of_host(r, HOST_PLAIN) for r in runs])
            out += [line for *_, line in precise_noisy_verdicts(ours, plain)]
        for language in LANGUAGES:
            by_name = {}
            for m in moments:
                for c in m.get(language, {}).get("contenders", []):
                    by_name.setdefault(c["name"], []).append(Lane.of_door(c))
            lanes = {name: pooled_lane(ls) for name, ls in by_name.items()}
            out += [line for *_, line in door_verdicts(language, lanes, "busy")]
    elif cls == "quiet":
        noise = f"(pooled over {plural(len(runs), 'quiet moment')})"
        ours = [p for r in runs for p in host.block_p99s(r, host.OURS)]
        spin = [p for r in runs for p in host.block_p99s(r, host.SPIN)]
        cpus = [c for r in runs for c in host.block_cpus(r, host.OURS)]
        out += [line for *_, line in host.quiet_lines(ours, spin, cpus, noise)]
    return out


def host_verdicts(run):
    """[(key, label, outcome, line)] of the host_share run: the noisy-moment target for the
    precise sleeper, the frontier of the fixed margins, and bench_host_report's own."""
    m = host.moment(run)
    lanes = {n: Lane.of_host(run, n) for n in run["contenders"]}
    ours, plain = lanes[HOST_OURS], lanes[HOST_PLAIN]
    out = precise_noisy_verdicts(ours, plain, judged=m == "busy")
    for f in fixed_names(run["contenders"]):
        fixed = lanes[f]
        label = f"precise p99 not above {f}'s, which costs no more CPU"
        if fixed.cpu() > ours.cpu():
            out.append((label, label, None,
                        f"- {label}: not judged, {f} cost more ({pct(fixed.cpu())} against "
                        f"{pct(ours.cpu())}, {bench_doc.BY_POINT_VALUE})"))
            continue
        o = not_worse_outcome(ours, fixed)
        out.append((label, label, o, bench_doc.verdict_line(
            label, o, f"{ours.p99_text()} against {fixed.p99_text()} at {fixed.cpu_text()}",
            "")))
    line = frontier_line(lanes)
    if line:
        out.append(("frontier", "frontier", None, line))
    for key, o, line in host.run_verdicts(run):
        out.append((key, key, o, line))
    return out


def door_table(language, doc):
    rows = ["| contender | timer slack | frames | p50 | p99 [95 % over blocks] | max | CPU [95 % over blocks] |",
            "|---|---:|---:|---:|---:|---:|---:|"]
    for c in doc["contenders"]:
        lane = Lane.of_door(c)
        f = lane.frames()
        rows.append(f"| {lane.name} | {us(lane.slack_ns)} | {len(f)} | {us(lane.p(0.5))} | "
                    f"{lane.p99_text()} | {us(max(f) if f else None)} | {lane.cpu_text()} |")
    return "\n".join(rows)


def host_table(run):
    rows = ["| contender | frames | p50 | p99 [95 % over blocks] | max | CPU [95 % over blocks] |",
            "|---|---:|---:|---:|---:|---:|"]
    for n in run["contenders"]:
        lane = Lane.of_host(run, n)
        f = lane.frames()
        rows.append(f"| {n} | {len(f)} | {us(lane.p(0.5))} | {lane.p99_text()} | "
                    f"{us(max(f) if f else None)} | {lane.cpu_text()} |")
    return "\n".join(rows)


def load_moment(path):
    """{"host": run, "rust": doc, …} of one moment directory (languages that did not run
    are absent)."""
    out = {}
    for name in ("host",) + LANGUAGES:
        p = os.path.join(path, f"{name}.json")
        if os.path.exists(p):
            with open(p) as f:
                out[name] = json.load(f)
    if "host" not in out:
        raise SystemExit(f"bench_doors_report: {path}: no host.json")
    out["host"].setdefault("index", os.path.basename(path.rstrip("/")))
    try:
        with open(os.path.join(path, "when")) as f:
            out["measured"] = f.read().strip()
    except FileNotFoundError:
        out["measured"] = datetime.fromtimestamp(os.path.getmtime(os.path.join(path, "host.json")),
                                                 timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return out


def moment_verdicts(m):
    run = m["host"]
    moment = host.moment(run)
    vs = host_verdicts(run)
    for language in LANGUAGES:
        if language in m:
            lanes = {c["name"]: Lane.of_door(c) for c in m[language]["contenders"]}
            vs += door_verdicts(language, lanes, moment)
    return moment, vs


def machines(moments):
    """`6.18.44-fc-v657, 2 CPUs, hypervisor: kvm`, one per distinct machine, in order."""
    seen = []
    for m in moments:
        h = m["host"]
        name = f"{h['kernel']}, {h['cpus']} CPUs, hypervisor: {h.get('hypervisor') or 'none'}"
        if name not in seen:
            seen.append(name)
    return "; ".join(seen)


def plural(n, noun):
    """`1 moment`, `3 moments`."""
    return f"{n} {noun}{'' if n == 1 else 's'}"


def section(moments, command, when=None, store=None):
    """The section's text over `moments` (oldest first; each may carry the `commit` and
    `measured` time it was stored with), the latest run's `command` named; `store`: the
    folder the moments were kept in, None where they were not."""
    when = when or datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    classes = [host.moment(m["host"]) for m in moments]
    times = [m["measured"] for m in moments if m.get("measured")]
    commits = sorted({m["commit"] for m in moments if m.get("commit")})
    if not times:
        span = f"run {when}"
    elif times[0] == times[-1]:
        span = f"measured at {times[0]}"
    else:
        span = f"measured from {times[0]} to {times[-1]}"
    at = (f" (commit{'' if len(commits) == 1 else 's'} {', '.join(commits)})"
          if commits else "")
    commands = []
    for m in moments:
        if m.get("command", command) not in commands:
            commands.append(m.get("command", command))
    by = "; ".join(f"`{c}`" for c in commands)
    kept = (f"The moments are kept in `{store}` while no commit changes the code they "
            f"measured, and every run of the benchmark adds its own. Measured by {by}"
            + ("." if command in commands else f"; this section written by `{command}`.")
            if store else f"Measured by {by}.")
    head = (f"{plural(len(moments), 'moment')}, {span}{at}, on {machines(moments)}: "
            f"{classes.count('busy')} noisy and {classes.count('quiet')} quiet. {kept} A moment is "
            f"noisy where its noise probe lost at least {100 * host.BUSY_SHARE:g} % of a CPU "
            f"off the guest's run queue or saw a gap there of at least "
            f"{us(host.BUSY_GAP_NS)}. Each door runs on a thread of its own, built at the start "
            f"and timed from its first frame; p99 intervals are over blocks (at least "
            f"{MIN_UNITS}).")
    per = []
    tally = {}
    labels = {}
    others = {}
    for i, m in enumerate(moments, 1):
        moment, vs = moment_verdicts(m)
        host_lanes = {n: Lane.of_host(m["host"], n) for n in m["host"]["contenders"]}
        reached = (fixed_reached(host_lanes), fixed_reached(host_lanes, outcome=INDISTINGUISHABLE))
        for key, label, o, _ in vs:
            labels[key] = label
            tally.setdefault((moment, key), []).append(o)
            others.setdefault((moment, key), []).append(reached)
        where = ", ".join(x for x in (m.get("measured"), m.get("commit") and f"commit {m['commit']}",
                                      m["host"].get("kernel")) if x)
        body = [f"### Moment {i} of {len(moments)}: {'noisy' if moment == 'busy' else moment}"
                + (f" ({where})" if where else ""),
                "", host.noise_text(m["host"]), "", host_table(m["host"])]
        for language in LANGUAGES:
            if language in m:
                body += ["", f"{language}:", "", door_table(language, m[language])]
        body += [""] + [line for _, _, _, line in vs if line]
        per.append("\n".join(body))
    summary = []
    for cls, name in (("busy", "noisy"), ("quiet", "quiet")):
        keys = [k for (c, k) in tally if c == cls]
        lines = []
        for key in keys:
            pairs = [(o, r) for o, r in zip(tally[(cls, key)], others[(cls, key)])
                     if o is not None]
            if pairs:
                # Only the two-sided target ("p99 ≤ 1/3 at ≤ 3 %") is one a fixed margin of
                # the same moment was judged against.
                both = key.endswith(" both")
                lines.append(bench_doc.target_summary(
                    f"{name}: {labels[key]}", [o for o, _ in pairs],
                    "the intervals overlap the bound",
                    [r[0] for _, r in pairs] if both else None,
                    judged="fixed margin of the same moments' host run",
                    open_by_others=[r[1] for _, r in pairs] if both else None))
        if lines:
            summary += [f"In the {name} moments:"] + lines
        else:
            summary.append(f"No target judged in a {name} moment ({classes.count(cls)} seen).")
        pooled = pooled_verdicts([m for m, c in zip(moments, classes) if c == cls], cls)
        if pooled:
            n = classes.count(cls)
            summary += ["", f"Pooled over the {plural(n, name + ' moment')} (every block of "
                        f"those moments one unit; intervals over blocks):"] + pooled
    return head + "\n\n" + "\n".join(summary) + "\n\n" + "\n\n".join(per)


def self_test():
    """Hand-checked verdicts on synthetic lanes."""
    def lane(name, value, blocks=10, per=100, cpu=1.0):
        return Lane(name, [[value] * per for _ in range(blocks)],
                    [cpu * 1e7] * blocks, [1e9] * blocks)
    plain, good, bad = lane("p", 300_000), lane("d", 50_000), lane("b", 200_000)
    assert share_outcome(good, plain) == "met"
    assert share_outcome(bad, plain) == "missed"
    close = lane("c", 100_000)  # exactly a third: met (at or below)
    assert share_outcome(close, plain) == "met"
    assert share_outcome(lane("few", 1, blocks=3), plain) is None, "too few blocks"
    assert not_worse_outcome(good, plain) == "met"
    assert not_worse_outcome(plain, good) == "missed"
    assert abs(good.cpu() - 1.0) < 1e-9 and good.cpu_ci() == (1.0, 1.0)
    # Mixed blocks give an interval: a door whose tail reaches the plain's is undecided.
    mixed = Lane("m", [[50_000] * 99 + [400_000] for _ in range(10)], [1e7] * 10, [1e9] * 10)
    assert share_outcome(mixed, plain) in ("missed", INDISTINGUISHABLE)
    # A door in a quiet moment is shown, not judged.
    lanes = {"sleeplab.sleep": good, "time.sleep": plain}
    vs = door_verdicts("python", lanes, "quiet")
    assert len(vs) == 1 and vs[0][2] is None, vs
    # Both targets at once.
    assert both_outcome("met", "met") == "met"
    assert both_outcome("met", "missed") == "missed"
    assert both_outcome(INDISTINGUISHABLE, "missed") == "missed"
    assert both_outcome("met", INDISTINGUISHABLE) == INDISTINGUISHABLE
    assert both_outcome(None, "met") is None
    assert both_outcome(None, "missed") == "missed", "a CPU beyond the bound decides it alone"
    vs = door_verdicts("python", lanes, "busy")
    assert [o for _, _, o, _ in vs] == ["met", "met", "met"], vs
    costly = lane("d", 50_000, cpu=5.0)
    vs = door_verdicts("python", {"sleeplab.sleep": costly, "time.sleep": plain}, "busy")
    assert [o for _, _, o, _ in vs] == ["met", "missed", "missed"], vs
    # The frontier of fixed margins: ratios by point value, the cheapest to reach a third.
    host_lanes = {HOST_PLAIN: plain, "margin-300us": lane("m3", 200_000, cpu=1.4),
                  "margin-700us": lane("m7", 90_000, cpu=3.5),
                  "margin-1ms": lane("m1", 10_000, cpu=5.5), "spin": lane("s", 1, cpu=99)}
    line = frontier_line(host_lanes)
    assert "margin-300us 0.667 at 1.40 %" in line and "spin" not in line, line
    assert "cheapest to reach a third of it: margin-700us, at 3.50 %" in line, line
    assert fixed_reached(host_lanes) == [], "700us reached a third, but above 3 %"
    host_lanes["margin-500us"] = lane("m5", 100_000, cpu=2.5)
    assert fixed_reached(host_lanes) == ["margin-500us"]
    assert "reach a third of it: margin-500us, at 2.50 %" in frontier_line(host_lanes)
    far = {HOST_PLAIN: plain, "margin-300us": lane("m3", 200_000, cpu=1.4)}
    assert frontier_line(far).endswith("None of them reached a third of it."), frontier_line(far)
    # Out of reach only where no fixed margin met the target or left it undecided.
    summary = bench_doc.target_summary
    line = summary("t", ["missed"] * 3, "u", [[], [], []], "m", [[], [], []])
    assert line.endswith("out of reach here (missed in all 3 runs, and no m met it or left it "
                         "undecided)"), line
    line = summary("t", ["missed"] * 3, "u", [[], [], []], "m", [[], ["margin-700us"], []])
    assert line.endswith("not called out of reach (margin-700us left it undecided)"), line
    line = summary("t", ["missed"] * 3, "u", [["margin-500us"], [], []], "m", [[], ["x"], []])
    assert line.endswith("though margin-500us met it: not out of reach"), line
    line = summary("t", ["missed"] * 3, "u")
    assert line.endswith("not called out of reach (no other contender was judged against it)")
    assert "out of reach" not in summary("t", ["missed", "met", "missed"], "u", [[]] * 3)
    # Pooled over moments: each moment's blocks count once, so two moments too short to
    # judge alone are judged together.
    a, b = lane("x", 50_000, blocks=5), lane("x", 60_000, blocks=5)
    pooled = pooled_lane([a, b])
    assert len(pooled.blocks) == 10 and pooled.p(0.99) == 60_000 and pooled.cpu_ns == [1e7] * 10
    assert share_outcome(a, plain) is None and share_outcome(pooled, plain) == "met"

    def moment(lost, values, blocks=5, per=100):
        """A synthetic moment: its probe lost `lost` of each CPU; `values` by contender."""
        probe = [{"cpu": c, "wall_ns": 10**9, "run_queue_ns": 0,
                  "off_run_queue": {"lost_ns": lost * 10**9, "max_gap_ns": 50_000}}
                 for c in (0, 1)]
        run = {"kernel": "k", "cpus": 2, "hypervisor": "kvm", "noise": {"before": probe,
               "after": probe}, "contenders": [n for n in values if "::" not in n],
               "blocks": [{"results": {n: {"lateness_ns": [v] * per, "cpu_ns": 10**7,
                                           "wall_ns": 10**9} for n, v in values.items()}}
                          for _ in range(blocks)]}
        rust = {"contenders": [{"name": n, "timer_slack_ns": 1, "blocks": [
            {"lateness_ns": [v] * per, "cpu_ns": 10**7, "wall_ns": 10**9}] * blocks}
            for n, v in values.items() if "::" in n]}
        return {"host": run, "rust": rust}

    values = {HOST_OURS: 40_000, HOST_PLAIN: 300_000, "spin": 1_000,
              "PreciseSleeper::sleep": 20_000, "std::thread::sleep": 300_000}
    noisy = [moment(0.02, values), moment(0.03, values)]
    lines = pooled_verdicts(noisy, "busy")
    assert lines[0].startswith("- ✅ precise p99 ≤ 1/3 of clock-nanosleep-abs's: 40.0 µs"), lines
    assert any(x.startswith("- ✅ rust: PreciseSleeper::sleep p99 ≤ 1/3 of std::thread::sleep's")
               for x in lines), lines
    alone = precise_noisy_verdicts(*(Lane.of_host(noisy[0]["host"], n)
                                     for n in (HOST_OURS, HOST_PLAIN)))
    assert alone[0][2] is None, "one moment's 5 blocks are too few to judge"
    quiet = [moment(0.001, values), moment(0.001, values)]
    lines = pooled_verdicts(quiet, "quiet")
    # 40 µs against max(1.5 × 1 µs, 1 µs + 10 µs) = 11 µs: 29 µs above, missed; CPU 1 %: met.
    assert lines[0].startswith("- ❌ quiet host: precise p99 − max(1.5 × spin's, spin's + 10 µs): 29.0 µs"), lines
    assert lines[1].startswith("- ✅ quiet host: precise CPU"), lines
    assert pooled_verdicts([], "busy") == []
    text = section(noisy + quiet, "cmd", when="2026-11-29T00:00:00Z")
    assert text.startswith("4 moments, run 2026-11-29T00:00:00Z, on k, 2 CPUs, hypervisor: kvm: "
                           "2 noisy and 2 quiet. Measured by `cmd`. A moment is noisy"), text[:300]
    assert "Pooled over the 2 noisy moments" in text and "Pooled over the 2 quiet moments" in text
    print("bench_doors_report: self-test passed")


def main(argv):
    if argv[1:] == ["--self-test"]:
        self_test()
        return 0
    args = argv[1:]
    store, measured_by = None, None
    while len(args) >= 2 and args[0] in ("--store", "--measured-by"):
        if args[0] == "--store":
            store = args[1]
        else:
            measured_by = [p for p in args[1].split(",") if p]
        args = args[2:]
    if len(args) < 2 or (store is None and len(args) < 3):
        print("usage: bench_doors_report.py [--store DIR [--measured-by PATHS]] DOC "
              "\"COMMAND\" MOMENT_DIR… | --self-test", file=sys.stderr)
        return 2
    doc, command, dirs = args[0], args[1], args[2:]
    moments = [load_moment(d) for d in dirs]
    stored = None
    if store is not None:
        rev = bench_doc.commit() or "unknown"
        for m in moments:
            m["commit"], m["command"] = rev, command
            if moment_store.save(store, "doors", rev, m["measured"], m) is None:
                print(f"bench_doors_report: measured at {rev}: not stored (no commit holds "
                      "that code); the section shows this run's moments only", file=sys.stderr)
        if rev != "unknown" and not rev.endswith("-dirty"):
            kept, dropped = moment_store.load(store, "doors",
                                              measured_by or bench_doc.declared_sources())
            for line in dropped:
                print(f"bench_doors_report: {line}", file=sys.stderr)
            moments = [d["moment"] for d in kept]
            stored = store
    if not moments:
        print(f"bench_doors_report: no moments to report (store {store}: none that measure "
              "the current code)", file=sys.stderr)
        return 2
    text = section(moments, command, store=stored)
    bench_doc.write_section(doc, "doors", bench_doc.wrapped("doors", text))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
