"""The keyword options are the Rust library's option table: every option accepts and
refuses the same values as the strategy settings and the C setters
(`sleeplab::lab::option_samples`, walked in Rust by crates/sleeplab/tests/options.rs and
in C by crates/sleeplab-ffi/src/options), and the options agree with each other the same
way (a stated prior is at most the cap)."""

from __future__ import annotations

import pytest

import sleeplab
from sleeplab import _sleeplab

SAMPLES = _sleeplab._option_samples()

# Options that leave the test process's thread settings alone unless a sample sets them.
QUIET = {"timer_slack": "leave", "sched_slice": "inherit"}


def build(cls, **options):
    options = {**QUIET, **options}
    if cls is sleeplab.Ticker:
        return cls(0.01, **options)
    return cls(**options)


def test_every_option_has_samples_both_ways():
    for name in sleeplab.OPTIONS:
        oks = {ok for n, _, ok in SAMPLES if n == name}
        assert oks == {True, False}, name


@pytest.mark.parametrize("cls", [sleeplab.PreciseSleeper, sleeplab.Ticker])
@pytest.mark.parametrize("name,value,ok", SAMPLES)
def test_every_option_accepts_and_refuses_what_the_table_does(cls, name, value, ok):
    if ok:
        build(cls, **{name: value})
    else:
        with pytest.raises(ValueError, match=name):
            build(cls, **{name: value})


def test_the_defaults_are_accepted_and_every_option_is_a_keyword():
    assert list(sleeplab.DEFAULTS) == sleeplab.OPTIONS
    assert "contention" in sleeplab.OPTIONS
    build(sleeplab.PreciseSleeper, **{**sleeplab.DEFAULTS, **QUIET})


def test_durations_take_the_librarys_grammar():
    s = build(sleeplab.PreciseSleeper, prior="300μs", cap="1ms", headroom="0")
    assert s.margin_ns == 300_000
    with pytest.raises(ValueError, match="0.5ns"):
        build(sleeplab.PreciseSleeper, lateness_tolerance="0.5ns")


def test_a_stated_prior_is_at_most_the_cap_and_an_unstated_one_follows_it():
    # The prior (200 µs by default) follows a lower cap down: the margin is the cap.
    assert build(sleeplab.PreciseSleeper, cap=100e-6).margin_ns == 100_000
    with pytest.raises(ValueError, match="prior 1ms is above the cap 500us"):
        build(sleeplab.PreciseSleeper, prior=1e-3, cap=500e-6)


def test_contention_is_settable():
    build(sleeplab.PreciseSleeper, contention="ignore")
    build(sleeplab.Ticker, contention="adapt")
    with pytest.raises(ValueError, match="adapt or ignore"):
        build(sleeplab.PreciseSleeper, contention="maybe")
    with pytest.raises(TypeError):
        build(sleeplab.PreciseSleeper, contention=1)
