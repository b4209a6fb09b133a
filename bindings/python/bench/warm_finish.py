"""Would finishing the wait in Python hide the return path? An experiment, not a feature.

A 60 Hz loop, interleaved in blocks of 50 frames: `time.sleep`, `sleeplab.sleep_until_ns`
to the deadline, and `sleeplab.sleep_until_ns` to W µs before the deadline followed by a
Python loop reading `time.monotonic_ns()` until the deadline (so the interpreter is
running, its caches warm, when the deadline comes; never early, since the loop checks the
deadline itself). Prints p50/p90/p99/max lateness (linear interpolation, as every sleeplab
report: scripts/quantiles.py; p99 needs 100 frames, with its 95 % interval),
early frames and CPU per contender.

    .venv/bin/python bindings/python/bench/warm_finish.py [FRAMES] [W_US]   # 3600 40
"""

import os
import sys
import time

import sleeplab

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "..", "scripts"))
from quantiles import ci, fmt_ci, quantile  # noqa: E402

mono = time.monotonic_ns
PERIOD = 16_666_667
BLOCK = 50


def main() -> int:
    frames = int(sys.argv[1]) if len(sys.argv) > 1 else 3600
    w = int(sys.argv[2]) * 1000 if len(sys.argv) > 2 else 40_000
    if frames < BLOCK or w < 0:
        print(f"warm_finish.py: FRAMES must be ≥ {BLOCK} and W_US ≥ 0", file=sys.stderr)
        return 2

    def warm(d: int) -> None:
        sleeplab.sleep_until_ns(d - w)
        while mono() < d:
            pass

    contenders = {
        "time.sleep": lambda d: time.sleep(max(0, d - mono()) / 1e9),
        "sleeplab.sleep_until_ns": sleeplab.sleep_until_ns,
        f"sleeplab to {w // 1000} µs before, then Python": warm,
    }
    late = {k: [] for k in contenders}
    cpu = dict.fromkeys(contenders, 0)
    t = mono() + PERIOD
    for _ in range(frames // BLOCK):
        for name, wait in contenders.items():
            c0 = time.thread_time_ns()
            for _ in range(BLOCK):
                wait(t)
                late[name].append(mono() - t)
                t += PERIOD
            cpu[name] += time.thread_time_ns() - c0
    for name, v in late.items():
        v.sort()
        n = len(v)

        def q(p: float) -> str:
            x = quantile(v, p)
            return "–" if x is None else f"{x / 1e3:.1f}"

        p99ci = fmt_ci(ci(v, 0.99), lambda x: f"{x / 1e3:.1f}")
        print(f"{name:40s} n={n} p50 {q(0.5)} p90 {q(0.9)} p99 {q(0.99)} {p99ci} max {v[-1] / 1e3:.1f} µs, "
              f"early {sum(x < 0 for x in v)}, CPU {100 * cpu[name] / (n * PERIOD):.2f} %")
    return 0


if __name__ == "__main__":
    sys.exit(main())
