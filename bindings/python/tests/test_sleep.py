"""One-shot sleeps: never early, on time.monotonic()'s clock, reports that add up, and
the errors Python users expect."""

from __future__ import annotations

import math
import threading
import time

import pytest

import sleeplab

LENGTHS = [0.0, 1e-9, 50e-6, 0.0005, 0.0015, 0.003, 0.02, 0.061]


def test_monotonic_is_clock_monotonic():
    # sleep_until(t) takes t on time.monotonic()'s timeline; the library sleeps on
    # CLOCK_MONOTONIC: the same clock on Linux.
    info = time.get_clock_info("monotonic")
    assert info.implementation == "clock_gettime(CLOCK_MONOTONIC)"


def test_reports_are_stamped_on_time_monotonic_ns():
    s = sleeplab.PreciseSleeper()
    for _ in range(20):
        before = time.monotonic_ns()
        r = s.sleep(0.001)
        after = time.monotonic_ns()
        assert before <= r.start_ns <= r.deadline_ns <= r.woke_ns <= after


@pytest.mark.parametrize("seconds", LENGTHS)
def test_sleep_is_never_early(seconds):
    want = sleeplab._sleeplab._duration_ns(seconds)
    assert want >= seconds * 1e9
    for _ in range(5):
        before = time.monotonic_ns()
        assert sleeplab.sleep(seconds) is None
        assert time.monotonic_ns() - before >= want


def test_sleep_accepts_ints():
    # An int is a number of seconds, as for time.sleep: 1 is a second, not a nanosecond.
    assert sleeplab._sleeplab._duration_ns(1) == 1_000_000_000
    assert sleeplab._sleeplab._duration_ns(0) == 0
    assert sleeplab.sleep(0) is None
    # Zero seconds: no native sleep and no spin, never early.
    r = sleeplab.PreciseSleeper().sleep(0)
    assert r.native_oversleep_ns is None and r.spin_ns == 0
    assert r.start_ns <= r.deadline_ns <= r.woke_ns
    # An int deadline on time.monotonic()'s timeline (in the past here: no wait).
    s = sleeplab.PreciseSleeper()
    r = s.sleep_until(int(time.monotonic()))
    assert r.native_oversleep_ns is None and r.spin_ns == 0


def test_sleep_until_is_never_early_on_both_timelines():
    for i in range(20):
        t = time.monotonic() + 0.0003 * (i % 7)
        sleeplab.sleep_until(t)
        assert time.monotonic() >= t
        deadline = time.monotonic_ns() + 250_000 * (i % 5)
        sleeplab.sleep_until_ns(deadline)
        assert time.monotonic_ns() >= deadline


def test_deadlines_in_the_past_return_at_once():
    # "At once": no native sleep (no native phase to oversleep) and no spin, whatever the
    # deadline's form.
    s = sleeplab.PreciseSleeper()
    r = s.sleep_until(time.monotonic() - 10)
    assert r.lateness_ns > 9_000_000_000
    assert (r.native_oversleep_ns, r.spin_ns) == (None, 0)
    for call in (lambda: sleeplab.sleep_until(-5.0), lambda: sleeplab.sleep_until_ns(0)):
        assert call() is None
        last = sleeplab.last_report()
        assert (last.native_oversleep_ns, last.spin_ns) == (None, 0)
    r = s.sleep_until_ns(0)
    assert r.deadline_ns == 0 and r.lateness_ns == r.woke_ns
    assert (r.native_oversleep_ns, r.spin_ns) == (None, 0)


def test_report_and_stats_add_up():
    s = sleeplab.PreciseSleeper()
    reports = [s.sleep(x) for x in LENGTHS]
    for x, r in zip(LENGTHS, reports):
        assert r.woke_ns >= r.deadline_ns
        assert r.lateness_ns == r.woke_ns - r.deadline_ns
        assert r.native_ns + r.spin_ns == r.woke_ns - r.start_ns
        assert r.deadline_ns - r.start_ns >= sleeplab._sleeplab._duration_ns(x)
        assert math.isclose(r.lateness, r.lateness_ns / 1e9)
    st = s.stats()
    assert st.count == len(LENGTHS)
    assert st.max_lateness_ns == max(r.lateness_ns for r in reports)
    assert st.total_lateness_ns == sum(r.lateness_ns for r in reports)
    assert math.isclose(st.mean_lateness_ns, st.total_lateness_ns / st.count)
    assert s.margin_ns > 0 and math.isclose(s.margin, s.margin_ns / 1e9)
    assert s.timer_slack_ns is not None
    s.reset_stats()
    assert s.stats().count == 0
    assert s.margin_ns > 0  # the learned margin is kept


def test_a_long_sleep_spans_slices_and_is_reported_whole():
    s = sleeplab.PreciseSleeper()
    seconds = 2.5 * sleeplab.SLICE_NS / 1e9
    r = s.sleep(seconds)
    assert r.deadline_ns - r.start_ns >= sleeplab._sleeplab._duration_ns(seconds)
    assert r.woke_ns >= r.deadline_ns
    assert r.native_ns + r.spin_ns == r.woke_ns - r.start_ns
    assert r.native_ns > 2 * sleeplab.SLICE_NS  # the coarse slices count as native sleep
    assert s.stats().count == 1


BAD = [
    (-1.0, ValueError, "sleep length must be non-negative, got -1.0"),
    (-1e-9, ValueError, "non-negative"),
    (math.nan, ValueError, "sleep length must be a number, got nan"),
    (math.inf, ValueError, "sleep length must be finite, got inf"),
    (-math.inf, ValueError, "must be finite, got -inf"),
    (1e300, OverflowError, "too large"),
]


@pytest.mark.parametrize("value,error,message", BAD)
def test_bad_lengths_raise(value, error, message):
    with pytest.raises(error, match=message):
        sleeplab.sleep(value)
    with pytest.raises(error, match=message):
        sleeplab.PreciseSleeper().sleep(value)


@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf])
def test_bad_deadlines_raise(value):
    with pytest.raises(ValueError):
        sleeplab.sleep_until(value)
    with pytest.raises(ValueError):
        sleeplab.PreciseSleeper().sleep_until(value)


def test_wrong_types_raise_type_error():
    with pytest.raises(TypeError):
        sleeplab.sleep("1")
    with pytest.raises(TypeError):
        sleeplab.sleep(None)
    with pytest.raises((TypeError, OverflowError)):
        sleeplab.sleep_until_ns(-1)


def test_options_map_onto_the_builder():
    s = sleeplab.PreciseSleeper(
        spin="yield",
        timer_slack="leave",
        sched_slice="inherit",
        prior=300e-6,
        cap=1e-3,
        window=64,
        quantile=0.999,
        half_life=8,
        headroom=0.0,
    )
    # Before any sleep the margin is the prior plus the headroom.
    assert s.margin_ns == 300_000
    r = s.sleep(0.001)
    # The wait is what was asked, never early, and its margin within the 1 ms cap.
    assert r.deadline_ns - r.start_ns >= 1_000_000 and r.woke_ns >= r.deadline_ns
    assert 0 < r.margin_ns <= 1_000_000
    # timer_slack="leave" left this thread's slack as it was: another sleeper built with
    # "leave" reads the same value.
    assert sleeplab.PreciseSleeper(timer_slack="leave").timer_slack_ns == s.timer_slack_ns
    assert set(sleeplab.OPTIONS) == {
        "spin", "timer_slack", "sched_slice", "prior", "cap", "window", "quantile", "half_life", "headroom",
        "lateness_tolerance", "cpu_budget", "early_tolerance", "contention", "host",
    }


@pytest.mark.parametrize(
    "options,error",
    [
        ({"spin": "busy"}, ValueError),
        ({"timer_slack": "max"}, ValueError),
        ({"sched_slice": "long"}, ValueError),
        ({"quantile": 0.2}, ValueError),
        ({"quantile": math.nan}, ValueError),
        ({"window": 0}, ValueError),
        ({"window": 5000}, ValueError),
        ({"half_life": 0}, ValueError),
        ({"cap": 0.0}, ValueError),
        ({"prior": 1.0}, ValueError),  # above the default cap
        ({"prior": -1.0}, ValueError),
        ({"headroom": math.inf}, ValueError),
        ({"window": -1}, OverflowError),
        ({"cpu_budget": "some"}, ValueError),
        ({"cpu_budget": 101.0}, ValueError),
        ({"cpu_budget": math.nan}, ValueError),
        ({"lateness_tolerance": -1e-6}, ValueError),
        ({"early_tolerance": math.inf}, ValueError),
        ({"colour": "red"}, TypeError),
        ({"spin": 3}, TypeError),
    ],
)
def test_bad_options_raise(options, error):
    with pytest.raises(error):
        sleeplab.PreciseSleeper(**options)
    with pytest.raises(error):
        sleeplab.Ticker(0.01, **options)


def test_last_report_describes_this_threads_last_wait():
    got: list = []
    t = threading.Thread(target=lambda: got.append(sleeplab.last_report()))
    t.start()
    t.join()
    assert got == [None]  # a thread that never slept has none
    before = time.monotonic_ns()
    sleeplab.sleep(0.002)
    r = sleeplab.last_report()
    assert r.start_ns >= before and r.deadline_ns >= before + 2_000_000
    assert r.woke_ns >= r.deadline_ns and r.lateness_ns == r.woke_ns - r.deadline_ns
    assert r.native_ns + r.spin_ns == r.woke_ns - r.start_ns
    assert r.woke_ns <= time.monotonic_ns()
    d = time.monotonic_ns() + 1_000_000
    sleeplab.sleep_until_ns(d)
    assert sleeplab.last_report().deadline_ns == d
    sleeplab.sleep_until(0.0)  # in the past: returns at once, still reported
    assert sleeplab.last_report().deadline_ns == 0


def test_tradeoff_options_map_onto_the_builder():
    # The margin before any data: prior + headroom, less the lateness tolerance, at most
    # the CPU ceiling (a 0 % budget: no spin at all).
    tol = sleeplab.PreciseSleeper(prior=300e-6, headroom=0.0, lateness_tolerance=100e-6)
    assert tol.margin_ns == 200_000
    assert sleeplab.PreciseSleeper(cpu_budget=0.0).margin_ns == 0
    assert sleeplab.PreciseSleeper(prior=300e-6, headroom=0.0, cpu_budget="none").margin_ns == 300_000
    # Early tolerance: returns up to 1 ms before the deadline, never earlier.
    early = sleeplab.PreciseSleeper(early_tolerance=1e-3)
    for _ in range(5):
        r = early.sleep(0.003)
        assert r.woke_ns + 1_000_000 >= r.deadline_ns


def test_a_budget_too_small_for_the_margin_says_so():
    # 0.1 % of a 2 ms sleep is 2 µs, far below the 210 µs the prior calls for.
    tight = sleeplab.PreciseSleeper(cpu_budget=0.1)
    ample = sleeplab.PreciseSleeper(cpu_budget="none")
    for _ in range(3):
        r = tight.sleep(0.002)
        assert r.budget_limited and r.wanted_margin_ns >= 200_000 > r.margin_ns
        assert not ample.sleep(0.002).budget_limited
    s = tight.stats()
    assert s.budget_limited == 3
    assert s.wanted_margin_ns >= 200_000
    assert 1_990_000 <= s.wanted_wait_ns <= 2_000_000
    assert s.budget_wanted_percent == pytest.approx(100 * s.wanted_margin_ns / s.wanted_wait_ns)
    assert ample.stats().budget_limited == 0 and ample.stats().budget_wanted_percent is None
