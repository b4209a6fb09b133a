#!/usr/bin/env python3
"""Writes the async benchmark's section of docs/BENCHMARKS.md from scripts/bench-async.sh's
outputs (per run: pace60-R.json, pace1k-R.json, tasks-R.jsonl, sweep-R.json).

Usage: bench_async_report.py DIR RUNS "COMMANDS" "LOAD_BEFORE" "LOAD_AFTER" BENCHMARKS.md
       bench_async_report.py --self-test

Every verdict is over blocks: the two sides' blocks are paired (pace: the same block of
the interleaved run; the task benchmark: the same block of the runs of each task count,
made one after the other; the sweep: the same round), each pair gives a ratio, and the
target is met only where the 95 % interval of the ratios' median (order statistics:
scripts/quantiles.py) lies on its side of the bound, missed where it lies on the other,
else undecided ("indistinguishable in this run"). Each target is judged per run, then
counted over the runs (bench_doc.target_summary: out of reach only when missed in all of
at least 3 runs and no contender that kept its schedule met it).

A contender keeps its schedule when it missed at most 1 % of its deadlines (pace: frames
woken more than a period late; the task benchmark: deadlines already passed when a task
woke). One that falls behind wakes fewer times per second and so costs less CPU per
second: meeting a CPU bound that way says nothing about what a wake on time costs. The
1 kHz pace run includes `clock-nanosleep-abs`, a plain absolute sleep on the measuring
thread (one kernel wake per frame, no runtime, no spin): the least a wake on time costs
here, so a CPU bound it misses is below what any contender that wakes every frame can
reach at that moment.
"""
import json
import os
import sys

import bench_doc
from bench_doc import markers, write_section
from quantiles import INDISTINGUISHABLE, block_note, ci, fmt_ci, quantile

BEGIN, END = markers("async")
# Ours: the timer thread, the reactor timer, and the reactor interval (pace only: a
# periodic loop; the N-task benchmark has no interval of ours, so it is not judged there).
OURS = ["asleep", "asleep-reactor", "asleep-interval"]
TOKIO = "tokio-sleep-until"
P99_SHARE_OF_TOKIO = 0.1   # ours' p99 ≤ 1/10 of tokio sleep_until's
CPU_IDLE_PCT = 2.0         # ... at ≤ 2 % of a core
MANY_P99_FACTOR = 2.0      # 10 000 tasks' p99 within 2× of one task's
MANY_CPU_PCT = 3.0         # ... at ≤ 3 % of a core
BASELINE = "clock-nanosleep"
CHALLENGERS = ["futex-waitv", "io-uring-timeout", "io-uring-timeout-abs", "io-uring-wait"]
FLOOR = "clock-nanosleep-abs"  # pace's floor: one kernel wake per frame, nothing else
KEPT_SCHEDULE_MISSED = 0.01    # a contender that missed more fell behind its schedule
KEPT_SCHEDULE = "contender that kept its schedule"  # whom a CPU verdict's "met by" counts


def kept_schedule(missed, total):
    """Whether a contender missed at most KEPT_SCHEDULE_MISSED of its `total` deadlines."""
    return total > 0 and missed <= KEPT_SCHEDULE_MISSED * total


def us(ns):
    if ns is None:
        return "–"
    return f"{ns / 1e3:.2f} µs" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def median_ci(values):
    """The median of `values` and its 95 % interval (or None)."""
    return quantile(values, 0.5), ci(values, 0.5)


def ratio_outcome(ratios, bound):
    """"met" when the interval of the ratios' median lies at or below `bound`, "missed"
    when it lies above, else undecided; None without ratios or without an interval."""
    return bench_doc.at_most(ci(ratios, 0.5), bound) if ratios else None


def ratio_detail(ratios, what, note=""):
    """`median WHAT 0.04 [0.03–0.1] over 20 blocks` and, where a block's p99 rests on
    few samples, `note` (quantiles.block_note: what each block's p99 is of)."""
    m, c = median_ci(ratios)
    if m is None:
        return f"no {what}"
    tail = f" ({note})" if note else ""
    return f"median {what} {m:.3g} {fmt_ci(c, lambda x: f'{x:.3g}')} over {len(ratios)} blocks{tail}"


def pace_blocks(result, block):
    """Per block of a pace result (samples in recording order), its p99 (None where the
    block is too short)."""
    s = result.get("samples_ns") or []
    return [quantile(s[i:i + block], 0.99) for i in range(0, len(s), block)]


def paired(a, b):
    """Ratios a_i / b_i over the blocks both have, b_i > 0."""
    return [x / y for x, y in zip(a, b) if x is not None and y]


def pace_targets(data):
    """The 60 Hz or 1 kHz targets of one pace run, for each of ours that ran: (label,
    outcome, detail, the other contenders that met it while keeping their schedule; None
    where others are not judged against it)."""
    res = {x["strategy"]: x for x in data["results"] if x.get("load", 0) == 0}
    cfg = data["config"]
    hz = "60 Hz" if cfg["rate_hz"] < 100 else f"{cfg['rate_hz']:.0f} Hz"
    tokio = res.get(TOKIO)
    out = []
    for name in OURS:
        ours = res.get(name)
        if not ours or not tokio:
            continue
        ratios = paired(pace_blocks(ours, cfg["block"]), pace_blocks(tokio, cfg["block"]))
        # The other contenders that met the CPU bound while keeping their schedule.
        cpu_met_by = [other for other, x in res.items()
                      if other != name and bench_doc.cpu_bound_outcome(x, CPU_IDLE_PCT) == "met"
                      and kept_schedule(x.get("missed_frames", 0), x["error"]["count"])]
        floor = (f"; the floor ({FLOOR}, one kernel wake per frame): {bench_doc.cpu_text(res[FLOOR])}"
                 if FLOOR in res else "")
        out += [
            (f"{hz}: {name} p99 ≤ 1/10 of tokio sleep_until's", ratio_outcome(ratios, P99_SHARE_OF_TOKIO),
             ratio_detail(ratios, f"p99 ratio {name}/tokio", block_note(cfg["block"], 0.99)), None),
            (f"{hz}: {name} CPU ≤ 2 % of a core", bench_doc.cpu_bound_outcome(ours, CPU_IDLE_PCT),
             bench_doc.cpu_text(ours) + floor, cpu_met_by),
        ]
    return out


def pace_table(data):
    cfg = data["config"]
    rows = ["| contender | p50 | p99 [95 % interval] | max | missed | CPU % |", "|---|---:|---:|---:|---:|---:|"]
    for x in data["results"]:
        e = x["error"]
        c = e.get("p99_ci_ns")
        rows.append(f"| {x['strategy']} | {us(e['median_ns'])} | {us(e.get('p99_ns'))} "
                    f"{fmt_ci(tuple(c) if c else None, us)} | {us(e['max_ns'])} | {x['missed_frames']} | "
                    f"{x['cpu_percent']:.2f} |")
    return [f"At {cfg['rate_hz']:g} Hz, {cfg['frames']} frames per contender in blocks of {cfg['block']} "
            "(first run):", "", *rows, ""]


def task_lines(lines):
    """contender → tasks → result (skipped ones keep their reason)."""
    out = {}
    for x in lines:
        out.setdefault(x["contender"], {})[x["tasks"]] = x
    return out


def task_targets(tasks):
    """The N-task targets of one run, for each of ours that ran with 1 task and more."""
    out = []
    for name in OURS:
        ours = tasks.get(name, {})
        counts = sorted(ours)
        if len(counts) < 2 or 1 not in ours:
            continue
        many = counts[-1]
        one_p99 = [b["p99_ns"] for b in ours[1]["blocks"]]
        many_p99 = [b["p99_ns"] for b in ours[many]["blocks"]]
        ratios = paired(many_p99, one_p99)
        fewest = min((b.get("wakes", 0) for b in ours[1]["blocks"] + ours[many]["blocks"]), default=0)
        cpus = [b["cpu_percent"] for b in ours[many]["blocks"]]
        m, c = median_ci(cpus)
        # The other contenders that met the same CPU bound with as many tasks in this
        # run, keeping their schedule.
        cpu_met_by = [other for other, by in tasks.items()
                      if other != name and "blocks" in by.get(many, {})
                      and kept_schedule(by[many].get("missed", 0), by[many]["wakes"] + by[many].get("missed", 0))
                      and ratio_outcome([b["cpu_percent"] for b in by[many]["blocks"]], MANY_CPU_PCT) == "met"]
        out += [
            (f"{many} tasks: {name} p99 within 2× of one task's", ratio_outcome(ratios, MANY_P99_FACTOR),
             ratio_detail(ratios, f"p99 ratio {many} tasks/1 task", block_note(fewest, 0.99, "wakes")), None),
            (f"{many} tasks: {name} CPU ≤ 3 % of a core", ratio_outcome(cpus, MANY_CPU_PCT),
             "no blocks" if m is None else f"median {m:.2f} % {fmt_ci(c, lambda x: f'{x:.2f} %')} over {len(cpus)} blocks",
             cpu_met_by),
        ]
    return out


def task_table(tasks):
    counts = sorted({n for by in tasks.values() for n in by})
    head = "| contender | " + " | ".join(f"{n} task{'s' if n != 1 else ''}: p50 / p99 / missed / CPU %"
                                        for n in counts) + " |"
    rows = [head, "|---|" + "---:|" * len(counts)]
    for name, by in tasks.items():
        cells = []
        for n in counts:
            x = by.get(n)
            if x is None:
                cells.append("–")
            elif "skipped" in x:
                cells.append(f"skipped: {x['skipped']}")
            else:
                cells.append(f"{us(x['p50_ns'])} / {us(x['p99_ns'])} / {x.get('missed', '–')} / "
                             f"{x['cpu_percent']:.2f}")
        rows.append(f"| {name} | " + " | ".join(cells) + " |")
    return ["N tasks with staggered deadlines, one every millisecond for all of them together "
            "(first run; p99 over the whole run, CPU of the whole process; missed: deadlines already "
            "passed when the task woke, skipped, except by the interval contenders, which tick their "
            "own way):", "", *rows, ""]


def sweep_rounds(cell):
    """The median of each round of a sweep cell (samples in recording order)."""
    s, out, i = cell.get("samples_ns") or [], [], 0
    for n in cell.get("round_counts") or []:
        out.append(quantile(s[i:i + n], 0.5))
        i += n
    return out


def sweep_findings(data):
    """Per challenger, timer slack and duration of one run: whether its median beats
    clock_nanosleep's at the same slack, over rounds (the ratio of the rounds' medians;
    faster only where the interval lies below 1)."""
    cells = {(c["mechanism"], c.get("timer_slack_ns", 0), c["requested_ns"]): c
             for c in data["cells"] if c.get("load", 0) == 0}
    out = []
    for (mech, slack, d), cell in cells.items():
        base = cells.get((BASELINE, slack, d))
        if mech not in CHALLENGERS or base is None:
            continue
        ratios = paired(sweep_rounds(cell), sweep_rounds(base))
        m, c = median_ci(ratios)
        if c is not None and c[1] is not None and c[1] < 1:
            verdict = "beats clock_nanosleep"
        elif c is not None and c[0] is not None and c[0] > 1:
            verdict = "is slower than clock_nanosleep"
        else:
            verdict = f"{INDISTINGUISHABLE} from clock_nanosleep"
        detail = "no rounds" if m is None else f"median ratio {m:.3g} {fmt_ci(c, lambda x: f'{x:.3g}')}"
        out.append((mech, slack, d, verdict, detail))
    return out


def sweep_table(data):
    durations = sorted({c["requested_ns"] for c in data["cells"]})
    rows = ["| mechanism | timer slack | " + " | ".join(f"{us(d)}: median [95 %]" for d in durations) + " |",
            "|---|---:|" + "---:|" * len(durations)]
    by = {}
    for c in data["cells"]:
        if c.get("load", 0) == 0:
            by.setdefault((c["mechanism"], c.get("timer_slack_ns", 0)), {})[c["requested_ns"]] = c["summary"]
    for (mech, slack), cells in sorted(by.items(), key=lambda kv: (-kv[0][1], 0)):
        row = []
        for d in durations:
            s = cells.get(d)
            mc = s and s.get("median_ci_ns")
            row.append("–" if s is None else f"{us(s['median_ns'])} {fmt_ci(tuple(mc) if mc else None, us)}")
        rows.append(f"| {mech} | {us(slack)} | " + " | ".join(row) + " |")
    return rows


def rearm_verdict(diffs):
    """What the paired rounds (one timerfd − two, CPU %) say, by the interval of their
    median difference: the verb follows its sign; where it holds 0, the two are
    indistinguishable (which shows no tie: a difference the rounds cannot resolve)."""
    c = ci(diffs, 0.5)
    if c is None:
        return None
    if c[0] is not None and c[0] > 0:
        return "one timerfd re-armed per wake costs more"
    if c[1] is not None and c[1] < 0:
        return "one timerfd re-armed per wake costs less"
    return f"one timerfd and two are {INDISTINGUISHABLE}"


def rearm_run(lines):
    """One run's rounds: (differences of CPU %, one − two, per round; the medians of the
    mean lateness with one and with two)."""
    one = [x for x in lines if x["k"] == 1]
    two = [x for x in lines if x["k"] == 2]
    diffs = [a["cpu_percent"] - b["cpu_percent"] for a, b in zip(one, two)]
    late = [quantile([x["mean_late_ns"] for x in side], 0.5) for side in (one, two)]
    return diffs, late


def rearm_lines(runs):
    """The re-arm experiment: each run's paired verdict, then the runs counted."""
    out, verdicts = [], []
    for i, run in enumerate(runs, 1):
        diffs, (late1, late2) = rearm_run(run["rearm"])
        v = rearm_verdict(diffs)
        verdicts.append(v)
        m, c = median_ci(diffs)
        detail = ("no rounds" if m is None else
                  f"median difference (one − two, CPU % per round) {m:+.2f} % "
                  f"{fmt_ci(c, lambda x: f'{x:+.2f} %')} over {len(diffs)} rounds")
        out.append(f"- run {i}: {v or 'not judged (too few rounds)'}: {detail}; median of the "
                   f"rounds' mean lateness {us(late1)} with one, {us(late2)} with two")
    counts = ", ".join(f"{verdicts.count(v)} {v}" for v in dict.fromkeys(verdicts) if v)
    out.append(f"- across {len(runs)} runs: {counts or 'none judged'}")
    return out


def load(dirname, runs):
    out = []
    for r in range(1, runs + 1):
        def j(name):
            return json.load(open(os.path.join(dirname, name)))
        with open(os.path.join(dirname, f"tasks-{r}.jsonl")) as f:
            tasks = task_lines(json.loads(line) for line in f if line.strip())
        with open(os.path.join(dirname, f"rearm-{r}.jsonl")) as f:
            rearm = [json.loads(line) for line in f if line.strip()]
        out.append({"rearm": rearm, "pace60": j(f"pace60-{r}.json"), "pace1k": j(f"pace1k-{r}.json"),
                    "tasks": tasks, "sweep": j(f"sweep-{r}.json")})
    return out


def targets(run):
    return (pace_targets(run["pace60"]["data"]) + pace_targets(run["pace1k"]["data"])
            + task_targets(run["tasks"]))


def section(runs, commands, load_before, load_after):
    first = runs[0]
    fp = first["pace60"]["fingerprint"]
    outcomes, met_by = {}, {}
    for run in runs:
        for label, outcome, _, others in targets(run):
            outcomes.setdefault(label, []).append(outcome)
            met_by.setdefault(label, []).append(others)
    # Every run's sweep, each judged over its rounds; the runs counted per cell.
    per_run = [sweep_findings(run["sweep"]["data"]) for run in runs]
    sweep_lines = []
    for m, slack, d, v, detail in per_run[0]:
        verdicts = [v2 for f in per_run for m2, s2, d2, v2, _ in f if (m2, s2, d2) == (m, slack, d)]
        counts = ", ".join(f"{n} {w}" for w in ("beats clock_nanosleep", "is slower than clock_nanosleep")
                           for n in [verdicts.count(w)] if n)
        apart = len(verdicts) - sum(verdicts.count(w) for w in ("beats clock_nanosleep",
                                                                 "is slower than clock_nanosleep"))
        across = ", ".join(x for x in [counts, f"{apart} {INDISTINGUISHABLE}" if apart else ""] if x)
        sweep_lines.append(f"- {m} at {us(d)}, timer slack {us(slack)}: first run {v} ({detail}); "
                           f"across {len(verdicts)} runs: {across}")
    return "\n".join([
        BEGIN,
        "## Waiting from async code, io_uring and futex_waitv (`scripts/bench-async.sh`)",
        "",
        "```sh",
        "scripts/bench-async.sh   # runs, each of its runs:",
        commands,
        "```",
        "",
        f"Run {first['pace60']['started_at']} on {fp['cpu_model']} × {fp['cpu_count']}, kernel "
        f"{fp['kernel_release']}, clocksource {fp.get('clocksource')}, virtualization {fp.get('virtualization')}. "
        f"Load average before/after: {load_before} / {load_after}; {len(runs)} runs. Each async wake is timed "
        "from the call that creates the future to the first line after its `.await`. Verdicts are over "
        "blocks: paired blocks give ratios, and a target is met or missed only where the 95 % interval of "
        f"their median decides it, else undecided ({INDISTINGUISHABLE}). A CPU bound is called out of "
        f"reach only where no contender that kept its schedule (at most {100 * KEPT_SCHEDULE_MISSED:g} % "
        "of its deadlines missed) met it; each pace CPU verdict names the floor's CPU beside ours.",
        "",
        *pace_table(first["pace60"]["data"]),
        *pace_table(first["pace1k"]["data"]),
        *task_table(first["tasks"]),
        f"`sleeplab sweep`, idle (first run; each median with its 95 % interval):",
        "",
        *sweep_table(first["sweep"]["data"]),
        "",
        "Against clock_nanosleep at the same timer slack (each run's sweep judged over its rounds: the "
        "ratio of the rounds' medians, faster only where its interval lies below 1; the runs counted). "
        "The kernel arms io_uring's timeouts and futex_waitv's without the thread's timer slack "
        "(clock_nanosleep's takes it): at the default 50 µs slack that alone can make them faster; the "
        "1 ns rows compare them without it.",
        "",
        *sweep_lines,
        "",
        "What re-arming the kernel's earliest timer costs (`scripts/rearm-cost.c`, a 1 kHz loop "
        "on timerfds in `epoll_wait`: one timerfd re-armed after each wake for the next deadline, "
        "always the earliest timer, against two alternating, each re-armed behind the other; "
        "interleaved rounds, paired; the reason the reactor timer keeps two):",
        "",
        *rearm_lines(runs),
        "",
        "Targets, first run:",
        "",
        *[bench_doc.verdict_line(label, o, d, INDISTINGUISHABLE) for label, o, d, _ in targets(first)],
        "",
        f"Across {len(runs)} runs:",
        "",
        *[bench_doc.target_summary(label, o, INDISTINGUISHABLE,
                                   None if any(m is None for m in met_by[label]) else met_by[label],
                                   KEPT_SCHEDULE)
          for label, o in outcomes.items()],
        END,
    ])


def self_test():
    # Paired blocks: ours 10× better in every block → met; overlapping → undecided.
    assert ratio_outcome([0.05] * 10, 0.1) == "met"
    assert ratio_outcome([0.5] * 10, 0.1) == "missed"
    assert ratio_outcome([0.05, 0.2] * 5, 0.1) == INDISTINGUISHABLE
    assert ratio_outcome([0.05], 0.1) is None  # one block: no interval
    assert paired([1, None, 3], [2, 4, 0]) == [0.5]
    res = {"strategy": OURS[0], "load": 0, "cpu_percent": 1.0, "cpu_ci_percent": [0.9, 1.1],
           "samples_ns": [10] * 1000}
    tok = {"strategy": TOKIO, "load": 0, "cpu_percent": 3.0, "samples_ns": [1000] * 1000}
    t = pace_targets({"results": [res, tok], "config": {"rate_hz": 1000.0, "block": 100}})
    assert [(label, o) for label, o, _, _ in t] == [
        ("1000 Hz: asleep p99 ≤ 1/10 of tokio sleep_until's", "met"),
        ("1000 Hz: asleep CPU ≤ 2 % of a core", "met")], t
    # A block of 100 frames resolves its p99 only just: the line says what it is of.
    assert t[0][2].endswith("over 10 blocks (each block's p99 is of 100 frames: about its 2nd largest)"), t[0][2]
    # Without an interval over blocks the CPU target is not judged (no point-value verdict).
    del res["cpu_ci_percent"]
    t = pace_targets({"results": [res, tok], "config": {"rate_hz": 1000.0, "block": 100}})
    assert t[1][1] is None, t
    blocks = lambda p99, cpu: [{"p99_ns": p99, "cpu_percent": cpu} for _ in range(10)]
    tasks = {OURS[0]: {1: {"blocks": blocks(100, 1.0)}, 10000: {"blocks": blocks(150, 2.0), "wakes": 1000}}}
    t = task_targets(tasks)
    assert [o for _, o, _, _ in t] == ["met", "met"], t
    # Another contender that met the CPU bound with as many tasks is named beside ours,
    # unless it fell behind its schedule (more than 1 % of its deadlines missed).
    tasks["tokio-timerfd"] = {10000: {"blocks": blocks(150, 1.0), "wakes": 990, "missed": 10}}
    tasks["tokio-sleep-until"] = {10000: {"blocks": blocks(150, 9.0), "wakes": 1000, "missed": 0}}
    tasks["tokio-interval-delay"] = {10000: {"blocks": blocks(150, 1.0), "wakes": 980, "missed": 20}}
    assert task_targets(tasks)[1][3] == ["tokio-timerfd"], task_targets(tasks)
    # Each of ours is judged on its own, and names the other where it met a bound.
    tasks[OURS[1]] = {1: {"blocks": blocks(100, 1.0)}, 10000: {"blocks": blocks(150, 9.0), "wakes": 1000}}
    t = task_targets(tasks)
    # (Ours without N-task results, the interval, is not judged there.)
    assert [label for label, *_ in t] == [f"10000 tasks: {n} {w}" for n in OURS[:2] for w in
                                          ("p99 within 2× of one task's", "CPU ≤ 3 % of a core")], t
    assert [o for _, o, _, _ in t] == ["met", "met", "met", "missed"], t
    assert t[3][3] == [OURS[0], "tokio-timerfd"], t
    del tasks[OURS[1]]
    assert kept_schedule(10, 1000) and not kept_schedule(11, 1000) and not kept_schedule(0, 0)
    # In pace likewise: a contender that met 2 % by missing frames is not named.
    cheap = lambda name, missed: {"strategy": name, "load": 0, "cpu_percent": 1.0,
                                  "cpu_ci_percent": [0.9, 1.1], "missed_frames": missed,
                                  "error": {"count": 1000}, "samples_ns": [10] * 1000}
    res["cpu_ci_percent"] = [2.5, 3.0]
    t = pace_targets({"results": [res, tok, cheap(FLOOR, 3), cheap("tokio-interval-delay", 300)],
                      "config": {"rate_hz": 1000.0, "block": 100}})
    assert t[1][1] == "missed" and t[1][3] == [FLOOR], t
    assert t[1][2].endswith(f"; the floor ({FLOOR}, one kernel wake per frame): "
                            f"{bench_doc.cpu_text(cheap(FLOOR, 3))}"), t
    # Out of reach only where every run missed it and no other contender met it.
    line = bench_doc.target_summary("t", ["missed"] * 3, INDISTINGUISHABLE, [[], [], []])
    assert line.endswith("out of reach here (missed in all 3 runs, and no contender met it)"), line
    line = bench_doc.target_summary("t", ["missed"] * 3, INDISTINGUISHABLE, [[], [], []], KEPT_SCHEDULE)
    assert line.endswith("and no contender that kept its schedule met it)"), line
    line = bench_doc.target_summary("t", ["missed"] * 3, INDISTINGUISHABLE, [["b"], [], ["a", "b"]])
    assert line.endswith("missed in all 3 runs, though a, b met it: not out of reach"), line
    line = bench_doc.target_summary("t", ["missed"] * 3, INDISTINGUISHABLE)
    assert "out of reach here" not in line and "not called out of reach" in line, line
    cell = lambda m, med: {"mechanism": m, "requested_ns": 1000, "load": 0,
                           "samples_ns": [med] * 80, "round_counts": [10] * 8}
    f = sweep_findings({"cells": [cell(BASELINE, 100), cell("futex-waitv", 50), cell("io-uring-wait", 100)]})
    assert [(m, v) for m, _, _, v, _ in f] == [("futex-waitv", "beats clock_nanosleep"),
                                            ("io-uring-wait", f"{INDISTINGUISHABLE} from clock_nanosleep")], f
    # The re-arm verdict's verb follows the sign of its interval.
    assert rearm_verdict([1.0, 1.2, 0.8, 1.1, 0.9, 1.3, 1.0, 0.7, 1.2, 1.1]) == \
        "one timerfd re-armed per wake costs more"
    assert rearm_verdict([-x for x in [1.0, 1.2, 0.8, 1.1, 0.9, 1.3, 1.0, 0.7, 1.2, 1.1]]) == \
        "one timerfd re-armed per wake costs less"
    assert rearm_verdict([1, -1] * 5) == f"one timerfd and two are {INDISTINGUISHABLE}", rearm_verdict([1, -1] * 5)
    assert "tie" not in rearm_verdict([1, -1] * 5)
    assert rearm_verdict([1.0]) is None
    lines = [{"k": k, "cpu_percent": c, "mean_late_ns": 40e3} for k, c in [(1, 3.0), (2, 2.0)] * 10]
    diffs, late = rearm_run(lines)
    assert diffs == [1.0] * 10 and late == [40e3, 40e3], (diffs, late)
    print("self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    dirname, runs, commands, load_before, load_after, doc = sys.argv[1:7]
    s = section(load(dirname, int(runs)), commands, load_before, load_after)
    write_section(doc, "async", s)
    print(s)


if __name__ == "__main__":
    main()
