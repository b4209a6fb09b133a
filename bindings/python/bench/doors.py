#!/usr/bin/env python3
"""Every Python door of sleeplab as a user walks through it, against the plain sleeps it
replaces: a 60 Hz loop per contender, each on a thread of its own (a plain sleep keeps the
thread's default timer slack; a sleeper sets its own thread's), each built when its thread
starts and used from its first frame (no warm-up), contenders taking turns block by block.
The Python counterpart of crates/sleeplab/examples/doors.rs, in the same JSON format
(read by scripts/bench_doors_report.py).

    time.sleep            time.sleep(period)                              (plain, relative)
    sleeplab.sleep        sleeplab.sleep(period)                          (relative)
    sleeplab.sleep_until  sleeplab.sleep_until(grid instant)              (absolute)
    sleeplab.Ticker       next(ticker), missed ticks skipped              (periodic)
    asyncio.sleep         await asyncio.sleep(period), an event loop of its own (plain)
    sleeplab.asleep       await sleeplab.asleep(period), an event loop of its own
    sleeplab.asleep_until await sleeplab.asleep_until(grid instant), an event loop of its own

A frame's lateness is the loop's time.monotonic_ns() after the call minus what the call
was asked for: the grid instant (absolute and periodic forms; an absolute grid starts a
period after each block begins), or the reading before the call plus the period
(relative forms). The ticker keeps its own grid; the first tick of each block (overdue
after the pause between blocks: it fires at once) is not counted. CPU is the contender
thread's time.thread_time_ns() over the block's wall time.

Usage: doors.py [--frames N] [--block B] [--rate HZ]     (JSON on stdout; exit 2 on bad
arguments)
"""

from __future__ import annotations

import argparse
import asyncio
import ctypes
import ctypes.util
import json
import queue
import sys
import threading
import time

import sleeplab

PR_GET_TIMERSLACK = 30
_libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)


def timer_slack_ns() -> int:
    return _libc.prctl(PR_GET_TIMERSLACK, 0, 0, 0, 0)


def relative(wait):
    """A relative door: `wait(period_s)` once per frame."""
    def block(frames: int, period_ns: int) -> list[int]:
        out = []
        for _ in range(frames):
            asked = time.monotonic_ns() + period_ns
            wait(period_ns / 1e9)
            out.append(time.monotonic_ns() - asked)
        return out
    return block


def absolute(wait_until):
    """An absolute door: `wait_until(t)` to each grid instant, t in time.monotonic() s."""
    def block(frames: int, period_ns: int) -> list[int]:
        start = time.monotonic_ns() + period_ns
        out = []
        for k in range(frames):
            deadline = start + k * period_ns
            wait_until(deadline / 1e9)
            out.append(time.monotonic_ns() - deadline)
        return out
    return block


def ticker(period_ns: int):
    t = sleeplab.Ticker(period_ns / 1e9, missed="skip")

    def block(frames: int, _period_ns: int) -> list[int]:
        t.tick()  # the overdue first tick: not counted
        out = []
        for _ in range(frames):
            tick = t.tick()
            out.append(time.monotonic_ns() - tick.scheduled_ns)
        return out
    return block


def in_event_loop(sleep):
    """An async relative door on an event loop of the thread's own."""
    loop = asyncio.new_event_loop()

    async def frames_of(frames: int, period_ns: int) -> list[int]:
        out = []
        for _ in range(frames):
            asked = time.monotonic_ns() + period_ns
            await sleep(period_ns / 1e9)
            out.append(time.monotonic_ns() - asked)
        return out

    def block(frames: int, period_ns: int) -> list[int]:
        return loop.run_until_complete(frames_of(frames, period_ns))
    return block


def until_in_event_loop(sleep_until):
    """An async absolute door on an event loop of the thread's own."""
    loop = asyncio.new_event_loop()

    async def frames_of(frames: int, period_ns: int) -> list[int]:
        start = time.monotonic_ns() + period_ns
        out = []
        for k in range(frames):
            deadline = start + k * period_ns
            await sleep_until(deadline / 1e9)
            out.append(time.monotonic_ns() - deadline)
        return out

    def block(frames: int, period_ns: int) -> list[int]:
        return loop.run_until_complete(frames_of(frames, period_ns))
    return block


# (name, plain, form, build(period_ns) -> block(frames, period_ns), called on its thread)
CONTENDERS = [
    ("time.sleep", True, "relative", lambda p: relative(time.sleep)),
    ("sleeplab.sleep", False, "relative", lambda p: relative(sleeplab.sleep)),
    ("sleeplab.sleep_until", False, "absolute", lambda p: absolute(sleeplab.sleep_until)),
    ("sleeplab.Ticker", False, "periodic", ticker),
    ("asyncio.sleep", True, "relative", lambda p: in_event_loop(asyncio.sleep)),
    ("sleeplab.asleep", False, "relative", lambda p: in_event_loop(sleeplab.asleep)),
    ("sleeplab.asleep_until", False, "absolute",
     lambda p: until_in_event_loop(sleeplab.asleep_until)),
]


class Lane:
    """A contender's thread: builds its door at once, then runs each block it is sent."""

    def __init__(self, build, period_ns: int):
        self.go: queue.Queue = queue.Queue()
        self.done: queue.Queue = queue.Queue()
        self.period_ns = period_ns
        self.thread = threading.Thread(target=self.run, args=(build,), daemon=True)
        self.thread.start()
        self.slack_ns = self.done.get()

    def run(self, build) -> None:
        block = build(self.period_ns)
        self.done.put(timer_slack_ns())
        while (frames := self.go.get()) is not None:
            cpu0, wall0 = time.thread_time_ns(), time.monotonic_ns()
            late = block(frames, self.period_ns)
            cpu, wall = time.thread_time_ns() - cpu0, time.monotonic_ns() - wall0
            # The slack in force while it waited (sleeplab.sleep builds the thread's
            # sleeper, which sets it, at its first call).
            self.slack_ns = timer_slack_ns()
            self.done.put({"cpu_ns": cpu, "wall_ns": wall, "lateness_ns": late})

    def block(self, frames: int) -> dict:
        self.go.put(frames)
        return self.done.get()

    def stop(self) -> None:
        self.go.put(None)
        self.thread.join()


def doors(frames: int, block: int, rate: float) -> dict:
    period_ns = round(1e9 / rate)
    lanes = [Lane(build, period_ns) for _, _, _, build in CONTENDERS]
    blocks: list[list[dict]] = [[] for _ in lanes]
    done, turn = 0, 0
    while done < frames:
        n = min(block, frames - done)
        for i in range(len(lanes)):  # each round starts one contender later
            k = (i + turn) % len(lanes)
            blocks[k].append(lanes[k].block(n))
        done += n
        turn += 1
    for lane in lanes:
        lane.stop()
    return {
        "format": "sleeplab doors", "version": 1, "language": "python",
        "rate_hz": rate, "frames": frames, "block": block,
        "contenders": [
            {"name": name, "plain": plain, "form": form, "timer_slack_ns": lane.slack_ns,
             "blocks": b}
            for (name, plain, form, _), lane, b in zip(CONTENDERS, lanes, blocks)
        ],
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--frames", type=int, default=600, help="frames per contender")
    ap.add_argument("--block", type=int, default=50, help="frames per block")
    ap.add_argument("--rate", type=float, default=60.0, help="frames per second")
    a = ap.parse_args(argv)
    if a.frames < 1 or a.block < 1 or not (0 < a.rate <= 100_000):
        print("doors.py: --frames and --block must be >= 1 and --rate in (0, 100000]",
              file=sys.stderr)
        return 2
    print(json.dumps(doors(a.frames, a.block, a.rate)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
