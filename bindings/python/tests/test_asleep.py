"""asleep: coarse on the event loop (other tasks run), precise at the end, never early."""

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


def test_other_tasks_run_during_the_coarse_part():
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
        await sleeplab.asleep(0.1)
        task.cancel()
        return ticks - before

    # Blocking the loop for the whole 100 ms would allow no counter step at all.
    assert asyncio.run(main()) >= 10


@pytest.mark.parametrize("kwargs", [{"seconds": -1}, {"seconds": math.nan},
                                    {"seconds": math.inf}, {"seconds": 0.01, "guard": -1}])
def test_asleep_rejects_bad_values(kwargs):
    with pytest.raises(ValueError):
        asyncio.run(sleeplab.asleep(**kwargs))
