"""Sleeps N times for REQUEST_US microseconds with time.sleep, logging each sleep from
its own time.monotonic_ns reads (CLOCK_MONOTONIC, the clock the kernel's events are on)
as a CSV row of OUT: before_ns,after_ns. For scripts/explain-real.sh.

    python3 scripts/real-sleep.py OUT.csv N REQUEST_US
"""
import sys
import time


def main(argv):
    try:
        out, n, us = argv[1], int(argv[2]), int(argv[3])
        if n < 1 or us < 1:
            raise ValueError
    except (IndexError, ValueError):
        sys.exit("usage: real-sleep.py OUT.csv N REQUEST_US (whole numbers from 1)")
    rows = []
    for _ in range(n):
        before = time.monotonic_ns()
        time.sleep(us / 1e6)
        rows.append((before, time.monotonic_ns()))
    with open(out, "w") as f:
        f.write("before_ns,after_ns\n")
        f.writelines(f"{b},{a}\n" for b, a in rows)


if __name__ == "__main__":
    main(sys.argv)
