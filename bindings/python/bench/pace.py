#!/usr/bin/env python3
"""A 60 Hz Python loop: time.sleep vs sleeplab.sleep vs sleeplab.sleep_until vs a pure spin,
interleaved in blocks.

Each frame k of a block is due at start + k*period (absolute schedule); the loop waits the
remaining time with the contender, as a game loop would (`wait(deadline - now)`; the
absolute form is handed the deadline itself, as `time.monotonic()` seconds), and records
lateness = wake - deadline. Contenders take turns block by block, so a drift of the
machine spreads over all of them. For the sleeplab contenders it also records, per frame,
the sleeper's own view from `sleeplab.last_report()` (see SLEEPER_FIELDS). Both share
this thread's sleeper, as a program calling both would. CPU is the thread CPU time over the blocks' wall
time. time.sleep and the spin run at the thread's default timer slack (prctl reset),
sleeplab at the 1 ns its sleeper sets. Then the binding's per-call overhead:
sleeplab.sleep(0) from a Python loop, minus the same loop calling a trivial builtin,
minus the same zero sleep called directly in Rust.

Prints one JSON document (raw samples included) to stdout or --json FILE; render it with
bench/report.py. Usage: pace.py [--frames N] [--block B] [--rate HZ] [--calls N]
"""

from __future__ import annotations

import argparse
import ctypes
import ctypes.util
import json
import os
import platform
import statistics
import sys
import time

import sleeplab

PR_SET_TIMERSLACK = 29
PR_GET_TIMERSLACK = 30
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def set_default_slack() -> None:
    _libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(0), 0, 0, 0)  # 0: back to the default


def timer_slack_ns() -> int:
    return _libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)


def spin_ns(ns: int) -> None:
    end = time.monotonic_ns() + ns
    while time.monotonic_ns() < end:
        pass


# name, wait(deadline_ns, remaining_ns), whether it wants the default slack, whether it is
# sleeplab's (called even when the deadline passed, so every frame has a report)
CONTENDERS = [
    ("time.sleep", lambda d, ns: time.sleep(ns / 1e9), True, False),
    ("sleeplab.sleep", lambda d, ns: sleeplab.sleep(max(ns, 0) / 1e9), False, True),
    ("sleeplab.sleep_until", lambda d, ns: sleeplab.sleep_until(d / 1e9), False, True),
    ("spin", lambda d, ns: spin_ns(ns), True, False),
]

# The sleeper's view of a frame, from sleeplab.last_report(): the margin it planned, its
# native oversleep (-1 without a native phase), its spin, its own lateness against the
# deadline it computed, that deadline minus the loop's (the relative form's deadline is
# now + remaining, read a little later; the absolute form's is rounded up from float
# seconds), and the return path (the loop's wake reading minus the sleeper's).
SLEEPER_FIELDS = ("margin_ns", "native_oversleep_ns", "spin_ns", "lateness_ns",
                  "deadline_shift_ns", "return_ns")


def sleeper_view(deadline: int, woke: int) -> tuple[int, ...]:
    r = sleeplab.last_report()
    oversleep = -1 if r.native_oversleep_ns is None else r.native_oversleep_ns
    return (r.margin_ns, oversleep, r.spin_ns, r.lateness_ns, r.deadline_ns - deadline,
            woke - r.woke_ns)


def run_block(wait, frames: int, period_ns: int, out: list[int],
              view: dict[str, list[int]] | None) -> tuple[int, int]:
    """One block of frames; appends each frame's lateness (and, with `view`, the
    sleeper's view of it); returns (cpu_ns, wall_ns)."""
    cpu0, wall0 = time.thread_time_ns(), time.monotonic_ns()
    start = wall0 + period_ns
    for k in range(frames):
        deadline = start + k * period_ns
        remaining = deadline - time.monotonic_ns()
        if remaining > 0 or view is not None:
            wait(deadline, remaining)
        woke = time.monotonic_ns()
        out.append(woke - deadline)
        if view is not None:
            for f, v in zip(SLEEPER_FIELDS, sleeper_view(deadline, woke)):
                view[f].append(v)
    return time.thread_time_ns() - cpu0, time.monotonic_ns() - wall0


def pace(frames: int, block: int, rate: float) -> list[dict]:
    period_ns = round(1e9 / rate)
    sleeplab.sleep(0)  # build this thread's sleeper (sets the slack to 1 ns) before timing
    results = [
        {"name": n, "lateness_ns": [], "cpu_ns": 0, "wall_ns": 0, "timer_slack_ns": None}
        | ({"sleeper": {f: [] for f in SLEEPER_FIELDS}} if ours else {})
        for n, _, _, ours in CONTENDERS
    ]
    done = 0
    while done < frames:
        n = min(block, frames - done)
        for (name, wait, default_slack, _), r in zip(CONTENDERS, results):
            if default_slack:
                set_default_slack()
            else:
                _libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0)
            r["timer_slack_ns"] = timer_slack_ns()
            cpu, wall = run_block(wait, n, period_ns, r["lateness_ns"], r.get("sleeper"))
            r["cpu_ns"] += cpu
            r["wall_ns"] += wall
        done += n
    return results


def per_call_ns(fn, calls: int) -> float:
    t0 = time.perf_counter_ns()
    for _ in range(calls):
        fn(0)
    return (time.perf_counter_ns() - t0) / calls


def overhead(calls: int, repeats: int = 5) -> dict:
    """Medians over `repeats` interleaved rounds, ns per call."""
    rounds = {"python_sleep0": [], "python_builtin": [], "rust_direct": []}
    for _ in range(repeats):
        rounds["python_sleep0"].append(per_call_ns(sleeplab.sleep, calls))
        rounds["python_builtin"].append(per_call_ns(abs, calls))
        rounds["rust_direct"].append(sleeplab._sleeplab._direct_zero_sleeps_ns(calls) / calls)
    med = {k: statistics.median(v) for k, v in rounds.items()}
    med["binding_ns"] = med["python_sleep0"] - med["python_builtin"] - med["rust_direct"]
    med["calls"] = calls
    med["repeats"] = repeats
    return med


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=1200, help="frames per contender")
    ap.add_argument("--block", type=int, default=60, help="frames per block")
    ap.add_argument("--rate", type=float, default=60.0, help="frames per second")
    ap.add_argument("--calls", type=int, default=200_000, help="calls per overhead round")
    ap.add_argument("--json", help="write here instead of stdout")
    a = ap.parse_args(argv)
    if a.frames < 1 or a.block < 1 or a.calls < 1 or not (0 < a.rate <= 100_000):
        print("pace.py: --frames, --block, --calls must be >= 1 and --rate in (0, 100000]",
              file=sys.stderr)
        return 2
    load_before = os.getloadavg()
    contenders = pace(a.frames, a.block, a.rate)
    doc = {
        "bench": "python",
        "rate_hz": a.rate,
        "frames": a.frames,
        "block": a.block,
        "runtime": f"{platform.python_implementation()} {platform.python_version()}",
        "machine": {"system": platform.platform(), "cpus": os.cpu_count()},
        "load_before": load_before,
        "contenders": contenders,
        "overhead": overhead(a.calls),
        "load_after": os.getloadavg(),
    }
    text = json.dumps(doc)
    if a.json:
        with open(a.json, "w") as f:
            f.write(text)
    else:
        print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
