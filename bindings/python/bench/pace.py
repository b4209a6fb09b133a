#!/usr/bin/env python3
"""A 60 Hz Python loop: time.sleep vs sleeplab.sleep vs sleeplab.PreciseSleeper.sleep_until
vs a pure spin, interleaved in blocks.

Each frame k of a block is due at start + k*period (absolute schedule); the loop waits the
remaining time with the contender, as a game loop would (`wait(deadline - now)`; the
absolute form is handed the deadline itself, as `time.monotonic()` seconds), and records
lateness = wake - deadline. Contenders take turns block by block, so a drift of the
machine spreads over all of them.

Every contender does the same work per frame: the same loop, one call of its
wait only while the deadline is ahead (a frame whose deadline has passed calls no
contender), and the same bookkeeping after it: the frame's timestamps (when the wait was
called, when Python got control back) and, for the sleeplab contenders, the sleeper's own
view of the frame (SLEEPER_FIELDS; for the others the same step records nothing). The
bookkeeping's CPU is measured for every contender and left out of every contender's CPU.
Each sleeplab contender has a sleeper of its own: sleeplab.sleep the thread's (its view
from `sleeplab.last_report()`), the absolute form a `sleeplab.PreciseSleeper` (its view
the report it returns), so neither learns from the other's waits.

Where a sleeplab frame's time went, per frame, in absolute `time.monotonic_ns()` readings:
`called_ns` (the loop's clock read before the call), `native_end_ns` (the sleeper's native
sleep returned: start + native time), `sleeper_woke_ns` (its last clock read, at or after
the deadline), `returned_ns` (the loop's read after the call: Python has control again).
The C benchmark (crates/sleeplab-ffi/bench/pace.c) records the same, so the two tails can
be taken apart step by step. CPU is the thread CPU time over the blocks' wall time, minus
the bookkeeping. time.sleep and the spin run at the thread's default timer slack (prctl
reset), sleeplab at the 1 ns its sleepers set. Then the binding's per-call overhead:
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


def contenders() -> list[tuple]:
    """(name, wait(deadline_ns, remaining_ns), whether it wants the default slack, and for
    sleeplab's: report(what wait returned) -> its SleepReport, taken in the bookkeeping
    after the frame's clock read), each sleeplab contender with a sleeper of its own: the
    thread's for sleeplab.sleep, a PreciseSleeper for the absolute form."""
    own = sleeplab.PreciseSleeper()
    return [
        ("time.sleep", lambda d, ns: time.sleep(ns / 1e9), True, None),
        ("sleeplab.sleep", lambda d, ns: sleeplab.sleep(ns / 1e9), False,
         lambda _: sleeplab.last_report()),
        ("sleeplab.PreciseSleeper.sleep_until", lambda d, ns: own.sleep_until(d / 1e9), False,
         lambda returned: returned),
        ("spin", lambda d, ns: spin_ns(ns), True, None),
    ]


# The sleeper's view of a frame, from its report: the margin it planned, its native
# oversleep (-1 without a native phase), its spin, its own lateness against the deadline it
# computed, that deadline minus the loop's (the relative form's deadline is now + remaining,
# read a little later; the absolute form's is rounded up from float seconds), the return
# path (the loop's wake reading minus the sleeper's), and two absolute readings: when its
# native sleep returned (start + native time) and its own last clock read. A frame whose
# deadline had passed before the wait began has no view (None in every field).
SLEEPER_FIELDS = ("margin_ns", "native_oversleep_ns", "spin_ns", "lateness_ns",
                  "deadline_shift_ns", "return_ns", "native_end_ns", "sleeper_woke_ns")

# Every contender's per-frame readings (absolute time.monotonic_ns()).
FRAME_FIELDS = ("deadline_ns", "called_ns", "returned_ns")


def sleeper_view(r, deadline: int, woke: int) -> tuple:
    if r is None:
        return (None,) * len(SLEEPER_FIELDS)
    oversleep = -1 if r.native_oversleep_ns is None else r.native_oversleep_ns
    return (r.margin_ns, oversleep, r.spin_ns, r.lateness_ns, r.deadline_ns - deadline,
            woke - r.woke_ns, r.start_ns + r.native_ns, r.woke_ns)


def run_block(wait, report_of, frames: int, period_ns: int, r: dict) -> None:
    """One block of frames into the contender's record `r`: each frame's lateness and
    readings (and its sleeper's view, where it has a sleeper); adds the block's CPU, its
    wall time and the CPU of the bookkeeping (the same steps for every contender)."""
    out, stamps, view = r["lateness_ns"], r["frames"], r.get("sleeper")
    bookkeeping = 0
    cpu0, wall0 = time.thread_time_ns(), time.monotonic_ns()
    start = wall0 + period_ns
    for k in range(frames):
        deadline = start + k * period_ns
        called = time.monotonic_ns()
        remaining = deadline - called
        waited = remaining > 0
        got = wait(deadline, remaining) if waited else None
        returned = time.monotonic_ns()
        out.append(returned - deadline)
        b0 = time.thread_time_ns()
        for f, v in zip(FRAME_FIELDS, (deadline, called, returned)):
            stamps[f].append(v)
        if view is not None:
            report = report_of(got) if waited else None
            for f, v in zip(SLEEPER_FIELDS, sleeper_view(report, deadline, returned)):
                view[f].append(v)
        bookkeeping += time.thread_time_ns() - b0
    r["cpu_ns"] += time.thread_time_ns() - cpu0 - bookkeeping
    r["bookkeeping_cpu_ns"] += bookkeeping
    r["wall_ns"] += time.monotonic_ns() - wall0


def pace(frames: int, block: int, rate: float) -> list[dict]:
    period_ns = round(1e9 / rate)
    sleeplab.sleep(0)  # build this thread's sleeper (sets the slack to 1 ns) before timing
    lanes = contenders()
    results = [
        {"name": n, "lateness_ns": [], "cpu_ns": 0, "bookkeeping_cpu_ns": 0, "wall_ns": 0,
         "timer_slack_ns": None, "frames": {f: [] for f in FRAME_FIELDS}}
        | ({"sleeper": {f: [] for f in SLEEPER_FIELDS}} if report_of else {})
        for n, _, _, report_of in lanes
    ]
    done = 0
    while done < frames:
        n = min(block, frames - done)
        for (name, wait, default_slack, report_of), r in zip(lanes, results):
            if default_slack:
                set_default_slack()
            else:
                _libc.prctl(PR_SET_TIMERSLACK, ctypes.c_ulong(1), 0, 0, 0)
            r["timer_slack_ns"] = timer_slack_ns()
            run_block(wait, report_of, n, period_ns, r)
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
