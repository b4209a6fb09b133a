"""Precise sleep for Python: wake within microseconds of a deadline without burning a core.

    import sleeplab
    sleeplab.sleep(0.0015)                     # 1.5 ms, never early
    sleeplab.sleep_until(time.monotonic() + 1) # on time.monotonic()'s clock
    for tick in sleeplab.Ticker(1 / 60, missed="skip"):
        ...                                    # tick.index, tick.lateness

Each wait is an absolute native sleep to the deadline minus a margin learned online from
this thread's wakeups, then a short spin (the Rust library `sleeplab` underneath). The GIL
is released while waiting; Ctrl-C raises KeyboardInterrupt within about 50 ms; a wait never
returns before its deadline, signals or not. Linux only.
"""

from __future__ import annotations

import asyncio
import time

from ._sleeplab import (
    DEFAULTS,
    OPTIONS,
    SLICE_NS,
    PreciseSleeper,
    SleepReport,
    SleepStats,
    Tick,
    Ticker,
    _duration_ns,
    last_report,
    sleep,
    sleep_until,
    sleep_until_ns,
)

__all__ = [
    "ASLEEP_GUARD",
    "DEFAULTS",
    "OPTIONS",
    "SLICE_NS",
    "PreciseSleeper",
    "SleepReport",
    "SleepStats",
    "Tick",
    "Ticker",
    "asleep",
    "last_report",
    "sleep",
    "sleep_until",
    "sleep_until_ns",
]

#: How long before the deadline `asleep` stops awaiting the event loop and finishes with a
#: blocking precise sleep, in seconds.
ASLEEP_GUARD = 0.002


async def asleep(seconds: float, *, guard: float = ASLEEP_GUARD) -> None:
    """Sleep `seconds` in a coroutine: coarsely on the event loop, then precisely.

    Awaits ``asyncio.sleep`` until `guard` seconds before the deadline (other tasks run
    meanwhile), then blocks the event loop in a precise sleep for the rest (at most about
    `guard`, with the GIL released). It never returns early.

    The trade-off: each call blocks the loop for up to `guard` (2 ms by default), so other
    tasks may start that much later; a larger `guard` absorbs a busier loop's late wakeups
    (a task woken after the deadline cannot be made on time), a smaller one blocks less.
    ``guard=0`` is a plain ``asyncio.sleep`` that is never early, with the loop's lateness.
    Raises ValueError for negative, NaN or infinite `seconds` or `guard`.
    """
    deadline = time.monotonic_ns() + _duration_ns(seconds)
    guard_ns = _duration_ns(guard)
    coarse_ns = deadline - guard_ns - time.monotonic_ns()
    if coarse_ns > 0:
        await asyncio.sleep(coarse_ns / 1e9)
    sleep_until_ns(deadline)
