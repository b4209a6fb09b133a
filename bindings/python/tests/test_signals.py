"""Never early under a signal storm: SIGUSR1 to the main thread every 100 us (a Python
handler installed without SA_RESTART, so native sleeps fail with EINTR) while it sleeps.
No latency is asserted."""

from __future__ import annotations

import itertools
import time

import sleeplab
from conftest import Storm, raw_clock_nanosleep


def wait_s(i: int) -> float:
    return (200_000 + (i * 7_919 * 13) % 1_800_000) / 1e9


def test_never_early_under_a_signal_storm(usr1_counter):
    early = []
    cut_short = 0
    s = sleeplab.PreciseSleeper()
    with Storm(interval=100e-6):
        # The storm is real: a raw clock_nanosleep (no retry) gets cut short.
        for _ in range(30):
            cut_short += raw_clock_nanosleep(0.002) == 4  # EINTR
        for i in range(150):
            want = sleeplab._sleeplab._duration_ns(wait_s(i))
            before = time.monotonic_ns()
            sleeplab.sleep(wait_s(i))
            if time.monotonic_ns() - before < want:
                early.append(("sleep", i))
            r = s.sleep(wait_s(i + 1))
            if r.woke_ns < r.deadline_ns or time.monotonic_ns() < r.deadline_ns:
                early.append(("PreciseSleeper.sleep", i))
        for i in range(50):
            t = time.monotonic() + wait_s(i)
            sleeplab.sleep_until(t)
            if time.monotonic() < t:
                early.append(("sleep_until", i))
        # Long enough to span several slices: the coarse phase sees the signals too.
        deadline = time.monotonic_ns() + 3 * sleeplab.SLICE_NS
        sleeplab.sleep_until_ns(deadline)
        if time.monotonic_ns() < deadline:
            early.append(("sleep_until_ns long", 0))
        for tick in itertools.islice(sleeplab.Ticker(0.001), 100):
            if tick.woke_ns < tick.scheduled_ns or time.monotonic_ns() < tick.scheduled_ns:
                early.append(("Ticker", tick.index))
    assert early == []
    assert usr1_counter[0] > 100, f"only {usr1_counter[0]} signals handled"
    assert cut_short > 0, "no raw sleep was interrupted: the storm did not reach the thread"
