"""Ticker: an iterator of ticks on the grid start + k*period, and the missed-tick
behaviours checked in counts and exact grid arithmetic, never in latencies."""

from __future__ import annotations

import itertools
import math
import time

import pytest

import sleeplab

P = 0.01  # 10 ms
P_NS = 10_000_000
STALL = 0.055  # at least 4 whole periods after the tick that follows it is due


def test_iterates_on_the_grid_never_early():
    ticker = sleeplab.Ticker(P, missed="skip")
    start = ticker.start_ns
    ticks = list(itertools.islice(ticker, 12))
    assert [t.index for t in ticks] == list(range(12))
    for t in ticks:
        assert (t.scheduled_ns - start) % P_NS == 0
        assert t.woke_ns >= t.scheduled_ns
        assert t.lateness_ns == t.woke_ns - t.scheduled_ns
        assert math.isclose(t.lateness, t.lateness_ns / 1e9)
        assert math.isclose(t.scheduled, t.scheduled_ns / 1e9)
        assert t.sleep.deadline_ns == t.scheduled_ns
    assert ticks[0].scheduled_ns == start  # the first tick is due at once
    assert ticker.ticks == 12
    assert ticker.stats().count == 12
    assert ticker.missed_ticks == sum(t.missed for t in ticks)
    assert ticker.margin > 0
    assert ticker.period_ns == P_NS and math.isclose(ticker.period, P)


def stalled(missed: str | None):
    """A ticker of period P (`missed` None: the default): tick 0, a stall of STALL, then
    the late tick and 6 more."""
    ticker = sleeplab.Ticker(P) if missed is None else sleeplab.Ticker(P, missed=missed)
    first = ticker.tick()
    time.sleep(STALL)
    rest = [ticker.tick() for _ in range(7)]
    return ticker, first, rest


@pytest.mark.parametrize("missed", ["skip", None], ids=["skip", "default"])
def test_skip_drops_missed_ticks_and_keeps_the_grid(missed):
    # Skip is the default (the one for a frame loop; tokio's default is burst).
    ticker, first, rest = stalled(missed)
    assert ticker.missed == "skip"
    late = rest[0]
    assert late.scheduled_ns == first.scheduled_ns + P_NS
    # Late by at least STALL - P: at least 4 whole periods dropped.
    assert late.missed >= 4
    assert late.missed == (late.woke_ns - late.scheduled_ns) // P_NS
    # The next tick is the first grid instant after the late one fired.
    nxt = rest[1]
    assert (nxt.scheduled_ns - first.scheduled_ns) % P_NS == 0
    assert late.woke_ns < nxt.scheduled_ns <= late.woke_ns + P_NS
    assert [t.index for t in rest] == list(range(1, 8))
    assert ticker.missed_ticks == sum(t.missed for t in rest)


def test_delay_restarts_the_schedule_from_the_late_tick():
    ticker, first, rest = stalled("delay")
    late, nxt = rest[0], rest[1]
    assert late.missed >= 4
    assert nxt.scheduled_ns == late.woke_ns + P_NS
    assert ticker.start_ns != first.scheduled_ns  # the grid moved
    for a, b in zip(rest[1:], rest[2:]):
        if a.missed == 0:
            assert b.scheduled_ns == a.scheduled_ns + P_NS


def test_burst_fires_the_missed_ticks_at_once_on_the_old_grid():
    ticker, first, rest = stalled("burst")
    # Every tick stays on the original grid, one period apart.
    for k, t in enumerate(rest, start=1):
        assert t.scheduled_ns == first.scheduled_ns + k * P_NS
    stall_end = rest[0].woke_ns
    # The ticks already due when the stall ended (at least 4) fire without waiting and
    # each counts the slot it filled late.
    overdue = [t for t in rest if t.scheduled_ns <= stall_end]
    assert len(overdue) >= 4
    assert all(t.missed == 1 for t in overdue if t.woke_ns - t.scheduled_ns >= P_NS)
    assert ticker.missed_ticks == sum(t.missed for t in rest)


def test_missed_is_settable_and_validated():
    ticker = sleeplab.Ticker(P)
    assert ticker.missed == "skip"
    ticker.missed = "delay"
    assert ticker.missed == "delay"
    with pytest.raises(ValueError, match="missed must be"):
        ticker.missed = "later"
    with pytest.raises(ValueError, match="missed must be"):
        sleeplab.Ticker(P, missed="catch-up")


def test_reset_moves_the_grid():
    ticker = sleeplab.Ticker(P)
    t0 = time.monotonic() + 0.02
    ticker.reset(t0)
    tick = ticker.tick()
    assert tick.scheduled_ns == math.ceil(t0 * 1e9)
    assert time.monotonic() >= t0
    ticker.reset()
    assert ticker.next_ns <= time.monotonic_ns()


@pytest.mark.parametrize(
    "period,error",
    [(0, ValueError), (0.0, ValueError), (-0.01, ValueError), (-1e-10, ValueError),
     (math.nan, ValueError), (math.inf, ValueError), ("1", TypeError)],
)
def test_bad_periods_raise(period, error):
    with pytest.raises(error):
        sleeplab.Ticker(period)
