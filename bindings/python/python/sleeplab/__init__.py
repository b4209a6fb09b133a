"""Precise sleep for Python: wake within microseconds of a deadline without burning a core.

    import sleeplab
    sleeplab.sleep(0.0015)                     # 1.5 ms, never early
    sleeplab.sleep_until(time.monotonic() + 1) # on time.monotonic()'s clock
    for tick in sleeplab.Ticker(1 / 60):       # missed ticks skipped (the default)
        ...                                    # tick.index, tick.lateness
    await sleeplab.asleep_until(deadline)      # in a coroutine, on time.monotonic()'s clock

Each wait is an absolute native sleep to the deadline minus a margin learned online from
this thread's wakeups, then a short spin (the Rust library `sleeplab` underneath). The GIL
is released while waiting; Ctrl-C raises KeyboardInterrupt within about 50 ms; a wait never
returns before its deadline, signals or not. Linux only.

A sleeper sets its thread's timer slack to 1 ns, which a plain time.sleep measured later
on the same thread benefits from too: compare the two on separate threads.
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
    __version__,
    _deadline_ns,
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
    "asleep_until",
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
    `guard`, with the GIL released). It never returns early. Cancelling the task ends
    the coarse part at once; the precise end (at most `guard`) runs to its deadline.

    The trade-off: each call blocks the loop for up to `guard` (2 ms by default), so other
    tasks may start that much later; a larger `guard` absorbs a busier loop's late wakeups
    (a task woken after the deadline cannot be made on time), a smaller one blocks less.
    ``guard=0`` is a plain ``asyncio.sleep`` that is never early, with the loop's lateness.
    Raises ValueError for negative, NaN or infinite `seconds` or `guard`.

    In a loop, prefer ``asleep_until``: the deadline of ``asleep(period)`` is counted
    from when the call starts, after the loop's own work, so each iteration lands later.
    """
    deadline_ns = time.monotonic_ns() + _duration_ns(seconds)
    await _asleep_until_ns(deadline_ns, _duration_ns(guard))


async def asleep_until(deadline: float, *, guard: float = ASLEEP_GUARD) -> None:
    """Sleep until `deadline` in a coroutine, seconds on ``time.monotonic()``'s clock.

    The absolute form of ``asleep``, for a frame loop that advances its deadline by the
    period (``deadline += 1 / 60``) so that its own work and late wakeups do not add up:
    awaits ``asyncio.sleep`` until `guard` seconds before the deadline, then a precise
    sleep to it (rounded up to the nanosecond, as ``sleep_until``). Never returns early;
    a deadline in the past returns at once. Cancelling the task ends the coarse part at
    once. Raises ValueError for a NaN or infinite `deadline` and a negative, NaN or
    infinite `guard`.
    """
    await _asleep_until_ns(_deadline_ns(deadline), _duration_ns(guard))


#: Called by every wait shortly before its deadline, inside its final spin, so that the
#: way back into the caller is warm when the wait returns (not for direct use). A
#: builtin, not a Python function: running bytecode there would let the interpreter hand
#: the GIL to another thread in the middle of the spin.
_warm_way_back = time.monotonic_ns


async def _asleep_until_ns(deadline_ns: int, guard_ns: int) -> None:
    """Await the event loop until `guard_ns` before `deadline_ns` (``time.monotonic_ns()``'s
    clock), then sleep precisely to it."""
    coarse_ns = deadline_ns - guard_ns - time.monotonic_ns()
    if coarse_ns > 0:
        await asyncio.sleep(coarse_ns / 1e9)
    sleep_until_ns(deadline_ns)
