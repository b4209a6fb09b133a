"""Where sleeplab.sleep's lateness in Python comes from: the way back into Python.

Two measurements, medians of N calls each (default 300):

1. The return path of `sleeplab.sleep(d)`: a `time.monotonic_ns()` read right after the
   call minus the sleeper's own wake reading (`sleeplab.last_report().woke_ns`), for a
   zero-length sleep (no native phase), a 50 µs one (spin only), 2 ms and 5 ms ones
   and a 60 Hz frame (a native sleep, then a spin).
2. The same small piece of Python (a 200-iteration loop) timed right after
   `time.sleep(0.002)` and right after a 2 ms busy loop in Python: what a thread pays to
   run Python again after its CPU went idle.

    .venv/bin/python bindings/python/bench/return_path.py [N]
"""

import os
import sys
import time

import sleeplab

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from quantiles import quantile  # noqa: E402

mono = time.monotonic_ns


def median(v: list[int]) -> float:
    """The median as every sleeplab report computes it (scripts/quantiles.py)."""
    return quantile(v, 0.5)


def return_path(seconds: float, n: int) -> tuple[float, int]:
    """Median return path, ns, and how many of the n calls had a native phase."""
    back, native = [], 0
    for _ in range(n):
        sleeplab.sleep(seconds)
        woke = mono()
        r = sleeplab.last_report()
        back.append(woke - r.woke_ns)
        native += r.native_oversleep_ns is not None
    return median(back), native


def work() -> int:
    s = 0
    for i in range(200):
        s += i
    return s


def spin(ns: int) -> None:
    end = mono() + ns
    while mono() < end:
        pass


def work_after(before, n: int) -> float:
    """Median time of `work()` right after `before()`, ns."""
    times = []
    for _ in range(n):
        before()
        t0 = mono()
        work()
        times.append(mono() - t0)
    return median(times)


def main(argv: list[str]) -> int:
    n = int(argv[1]) if len(argv) > 1 else 300
    if n < 1:
        print(f"N must be at least 1, got {n}", file=sys.stderr)
        return 2
    sleeplab.sleep(0)  # build this thread's sleeper before timing
    print(f"return path of sleeplab.sleep (median of {n} calls):")
    for seconds in (0.0, 50e-6, 2e-3, 5e-3, 1 / 60):
        back, native = return_path(seconds, n)
        print(f"  sleep({seconds * 1e6:.0f} µs): {back / 1e3:.2f} µs "
              f"({native} of {n} with a native sleep)")
    print(f"a 200-iteration Python loop (median of {n}):")
    print(f"  right after time.sleep(2 ms): {work_after(lambda: time.sleep(0.002), n) / 1e3:.2f} µs")
    print(f"  right after a 2 ms busy loop: {work_after(lambda: spin(2_000_000), n) / 1e3:.2f} µs")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
