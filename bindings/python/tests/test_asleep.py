"""asleep and asleep_until: coarse on the event loop (other tasks run), precise at the
end, never early, cancellable during the coarse part."""

from __future__ import annotations

import asyncio
import math
import time

import pytest

import sleeplab


def test_asleep_is_never_early():
    async def main():
        for seconds in [0, 0.0005, 0.003, 0.02]:
            want = sleeplab._sleeplab._duration_ns(seconds)
            before = time.monotonic_ns()
            await sleeplab.asleep(seconds)
            assert time.monotonic_ns() - before >= want
            before = time.monotonic_ns()
            await sleeplab.asleep(seconds, guard=0)
            assert time.monotonic_ns() - before >= want

    asyncio.run(main())


def test_asleep_until_is_never_early_on_time_monotonics_clock():
    async def main():
        for offset in [-0.01, 0, 0.0005, 0.003, 0.02]:
            for guard in [sleeplab.ASLEEP_GUARD, 0, 0.05]:
                deadline = time.monotonic() + offset
                await sleeplab.asleep_until(deadline, guard=guard)
                assert time.monotonic() >= deadline
                assert time.monotonic_ns() >= sleeplab._sleeplab._deadline_ns(deadline)

    asyncio.run(main())


def test_asleep_until_paces_a_frame_loop_on_its_grid():
    # The absolute form: each frame's deadline is the last one plus the period, so a
    # frame's own work does not push the next ones later.
    period = 0.005

    async def main():
        start = time.monotonic()
        for k in range(1, 21):
            deadline = start + k * period
            await sleeplab.asleep_until(deadline)
            assert time.monotonic() >= deadline
            time.sleep(0.001)  # the frame's work
        return time.monotonic() - start

    assert asyncio.run(main()) >= 20 * period


@pytest.mark.parametrize("form", ["asleep", "asleep_until"])
def test_a_cancelled_sleep_ends_in_the_coarse_part(form):
    async def main():
        start = time.monotonic()
        if form == "asleep":
            task = asyncio.create_task(sleeplab.asleep(30))
        else:
            task = asyncio.create_task(sleeplab.asleep_until(start + 30))
        await asyncio.sleep(0.02)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        return time.monotonic() - start

    # Cancelled while awaiting the loop: long before the 30 s deadline.
    assert asyncio.run(main()) < 10


@pytest.mark.parametrize("form", ["asleep", "asleep_until"])
def test_other_tasks_run_during_the_coarse_part(form):
    async def main():
        ticks = 0

        async def counter():
            nonlocal ticks
            while True:
                ticks += 1
                await asyncio.sleep(0.001)

        task = asyncio.create_task(counter())
        await asyncio.sleep(0)
        before = ticks
        if form == "asleep":
            await sleeplab.asleep(0.1)
        else:
            await sleeplab.asleep_until(time.monotonic() + 0.1)
        task.cancel()
        return ticks - before

    # Blocking the loop for the whole 100 ms would allow no counter step at all.
    assert asyncio.run(main()) >= 10


@pytest.mark.parametrize("kwargs", [{"seconds": -1}, {"seconds": math.nan},
                                    {"seconds": math.inf}, {"seconds": 0.01, "guard": -1}])
def test_asleep_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        asyncio.run(sleeplab.asleep(**kwargs))


@pytest.mark.parametrize("kwargs", [{"deadline": math.nan}, {"deadline": math.inf},
                                    {"deadline": -math.inf},
                                    {"deadline": 0.0, "guard": -1},
                                    {"deadline": 0.0, "guard": math.nan}])
def test_asleep_until_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        asyncio.run(sleeplab.asleep_until(**kwargs))
