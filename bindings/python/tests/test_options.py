"""The keyword options are the Rust library's option table: every option accepts and
refuses the same values as the strategy settings and the C setters
(`sleeplab::lab::option_samples`, walked in Rust by crates/sleeplab/tests/options.rs and
in C by crates/sleeplab-ffi/src/options), and the options agree with each other the same
way (a stated prior is at most the cap). The same samples walked through both bindings
at once: the C setters (the built libsleeplab.so, through ctypes) refuse what Python
refuses, and `sleeplab_last_error` says the words of Python's ValueError."""

from __future__ import annotations

import ctypes
import math

import pytest

import sleeplab
from conftest import header_constants, last_error
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


KINDS = {name: (kind, words) for name, kind, words in _sleeplab._option_kinds()}
U32_MAX = 2**32 - 1


def c_set(lib, options, name, value):
    """Calls the C setter of option `name` with `value`, given as Python is given it, in
    C's form: a choice's word as its index (an unknown word as the first index past the
    words, as the samples type it), seconds as ns, the budget's word as its constant.
    Returns the setter's code, or None for a value C's types cannot take (a duration
    string, a count beyond 32 bits)."""
    kind, words = KINDS[name]
    setter = getattr(lib, f"sleeplab_options_set_{name}" + ("_ns" if kind == "duration" else ""))
    if kind == "choice":
        index = words.index(value) if value in words else len(words)
        return setter(ctypes.c_void_p(options), ctypes.c_int(index))
    if kind == "budget":
        consts = header_constants()
        if isinstance(value, str):
            words = {"auto": "SLEEPLAB_BUDGET_AUTO", "none": "SLEEPLAB_BUDGET_UNLIMITED"}
            if value not in words:
                return None
            args = (consts[words[value]], math.nan)
        else:
            args = (consts["SLEEPLAB_BUDGET_PERCENT"], value)
        return setter(ctypes.c_void_p(options), ctypes.c_int(args[0]), ctypes.c_double(args[1]))
    if isinstance(value, str):
        return None
    if kind == "duration":
        return setter(ctypes.c_void_p(options), ctypes.c_uint64(_sleeplab._duration_ns(value)))
    if kind == "count":
        if not 0 <= value <= U32_MAX:
            return None
        return setter(ctypes.c_void_p(options), ctypes.c_uint32(value))
    return setter(ctypes.c_void_p(options), ctypes.c_double(value))


def python_error(**options) -> str | None:
    """The ValueError building a sleeper with `options` raises, None if it builds."""
    try:
        build(sleeplab.PreciseSleeper, **options)
    except ValueError as e:
        return str(e)
    return None


def test_c_and_python_refuse_the_same_values_in_the_same_words(libsleeplab):
    einval = -22
    compared = 0
    for name, value, ok in SAMPLES:
        options = libsleeplab.sleeplab_options_new()
        try:
            code = c_set(libsleeplab, options, name, value)
            words = last_error(libsleeplab)
        finally:
            libsleeplab.sleeplab_options_free(options)
        if code is None:
            continue
        said = python_error(**{name: value})
        if ok:
            assert (code, said) == (0, None), (name, value)
            continue
        assert code == einval, (name, value)
        if KINDS[name][0] == "choice":
            # C is given the word's index, Python the word: each names its own value.
            said = said.replace(f"`{value}`", f"`#{len(KINDS[name][1])}`")
        assert words == said, (name, value)
        compared += 1
    # Every option has at least one refused value both bindings can be given.
    assert compared >= len(sleeplab.OPTIONS), compared


def test_c_and_python_refuse_a_prior_above_the_cap_in_the_same_words(libsleeplab):
    options = libsleeplab.sleeplab_options_new()
    try:
        assert c_set(libsleeplab, options, "prior", 1e-3) == 0
        assert c_set(libsleeplab, options, "cap", 500e-6) == 0
        sleeper = ctypes.c_void_p()
        code = libsleeplab.sleeplab_sleeper_new_with(options, ctypes.byref(sleeper))
        words = last_error(libsleeplab)
    finally:
        libsleeplab.sleeplab_options_free(options)
    assert code == -22 and not sleeper
    assert words == python_error(prior=1e-3, cap=500e-6)
    assert words.startswith("prior 1ms is above the cap 500us")
