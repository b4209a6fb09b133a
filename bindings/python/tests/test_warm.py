"""The way back into Python, warmed just before the deadline: every wait calls
`sleeplab._warm_way_back` once, inside its final spin (it decides to before its
deadline; the call itself may end after it, and the wait is never early); an exception
raised there is raised when the wait returns, never before the deadline; a wait whose
deadline has passed does not call it. The lead follows the recent warm-ups. No latency
is asserted."""

from __future__ import annotations

import time

import pytest

import sleeplab
from sleeplab import _sleeplab


@pytest.fixture
def warm_calls(monkeypatch):
    """Replaces the warm-up with one that records when it ran."""
    calls: list[int] = []

    def record() -> int:
        now = time.monotonic_ns()
        calls.append(now)
        return now

    monkeypatch.setattr(sleeplab, "_warm_way_back", record)
    return calls


def woke_in_time(report) -> bool:
    """Whether the wait's native phase ended before its deadline. Only such a wait can
    warm (one that woke after its deadline has nothing to gain); it does unless the CPU
    was taken from its spin from before the armed instant until after the deadline."""
    return report.start_ns + report.native_ns < report.deadline_ns


def test_every_door_warms_at_most_once_and_only_in_time(warm_calls):
    sleeper = sleeplab.PreciseSleeper()
    doors = {
        "sleep": lambda: (sleeplab.sleep(0.02), sleeplab.last_report())[1],
        "sleep_until_ns": lambda: (
            sleeplab.sleep_until_ns(time.monotonic_ns() + 20_000_000),
            sleeplab.last_report(),
        )[1],
        "PreciseSleeper.sleep": lambda: sleeper.sleep(0.02),
    }
    warmed = 0
    for _ in range(4):
        for name, door in doors.items():
            warm_calls.clear()
            before = time.monotonic_ns()
            report = door()
            after = time.monotonic_ns()
            assert report.deadline_ns <= report.woke_ns <= after, name
            assert len(warm_calls) <= int(woke_in_time(report)), (name, report, warm_calls)
            assert all(report.start_ns < at < after and before < at for at in warm_calls)
            warmed += len(warm_calls)
    assert warmed > 0, "no wait warmed"
    ticker = sleeplab.Ticker(0.01)
    for _ in range(5):
        warm_calls.clear()
        tick = ticker.tick()
        assert tick.scheduled_ns <= tick.woke_ns
        assert len(warm_calls) <= 1, warm_calls


def test_a_past_deadline_does_not_warm(warm_calls):
    sleeplab.sleep_until_ns(time.monotonic_ns() - 1_000_000)
    sleeplab.sleep(0)
    assert warm_calls == []


def test_an_exception_in_the_warm_up_is_raised_at_the_deadline(monkeypatch):
    def fail() -> int:
        raise KeyboardInterrupt("raised by a signal handler during the warm-up")

    monkeypatch.setattr(sleeplab, "_warm_way_back", fail)
    raised = 0
    for _ in range(20):  # a wait that wakes after its deadline does not warm up
        deadline = time.monotonic_ns() + 20_000_000
        try:
            sleeplab.sleep_until_ns(deadline)
        except KeyboardInterrupt:
            raised += 1
            assert time.monotonic_ns() >= deadline, "raised before the deadline"
            break
    assert raised == 1
    # The next wait is not affected.
    monkeypatch.undo()
    deadline = time.monotonic_ns() + 5_000_000
    sleeplab.sleep_until_ns(deadline)
    assert time.monotonic_ns() >= deadline


def test_the_lead_follows_the_second_longest_recent_warm_up():
    first = _sleeplab._warm_lead_ns([])
    assert first == 100_000
    assert _sleeplab._warm_lead_ns([8_000]) == first, "one warm-up is not enough"
    # Second-longest of {8, 4} µs = 4 µs, plus a quarter and 2 µs.
    assert _sleeplab._warm_lead_ns([8_000, 4_000]) == 7_000
    # One warm-up that lost its CPU does not set the lead.
    assert _sleeplab._warm_lead_ns([8_000, 4_000, 900_000]) == 8_000 + 2_000 + 2_000
    # Floor and ceiling.
    assert _sleeplab._warm_lead_ns([100] * 8) == 5_000
    assert _sleeplab._warm_lead_ns([1_000_000] * 8) == 100_000
    # Eight recent fast warm-ups push the slow ones out of the window.
    assert _sleeplab._warm_lead_ns([1_000_000] * 8 + [8_000] * 8) == 12_000
