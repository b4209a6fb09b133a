"""A PreciseSleeper or Ticker belongs to the thread that created it, as a C sleeper or
ticker does: a call from any other thread raises RuntimeError, whether or not the owner
is using it, in the words of the C library's sleeplab_last_error for the same call. The
module-level functions keep one sleeper per thread and work from any thread."""

from __future__ import annotations

import ctypes
import threading
import time

import pytest

import sleeplab
from conftest import last_error

QUIET = {"timer_slack": "leave", "sched_slice": "inherit"}


def words(what: str) -> str:
    return (f"the object belongs to another thread: a {what} is used only from the thread "
            "that created it")


def in_thread(f):
    """Runs `f` on a new thread; returns what it returned or the exception it raised."""
    out: list[object] = []

    def run() -> None:
        try:
            out.append(f())
        except BaseException as e:  # noqa: BLE001 - handed back to the test
            out.append(e)

    t = threading.Thread(target=run)
    t.start()
    t.join()
    return out[0]


SLEEPER_CALLS = {
    "sleep": lambda s: s.sleep(0.001),
    "sleep_until": lambda s: s.sleep_until(time.monotonic()),
    "sleep_until_ns": lambda s: s.sleep_until_ns(time.monotonic_ns()),
    "stats": lambda s: s.stats(),
    "reset_stats": lambda s: s.reset_stats(),
    "margin": lambda s: s.margin,
    "margin_ns": lambda s: s.margin_ns,
    "timer_slack_ns": lambda s: s.timer_slack_ns,
}

TICKER_CALLS = {
    "tick": lambda t: t.tick(),
    "next": lambda t: next(t),
    "reset": lambda t: t.reset(),
    "stats": lambda t: t.stats(),
    "period": lambda t: t.period,
    "missed": lambda t: t.missed,
    "set missed": lambda t: setattr(t, "missed", "burst"),
    "ticks": lambda t: t.ticks,
    "margin": lambda t: t.margin,
}


@pytest.mark.parametrize("call", SLEEPER_CALLS, ids=str)
def test_a_sleeper_refuses_another_thread_while_idle(call):
    s = sleeplab.PreciseSleeper(**QUIET)
    err = in_thread(lambda: SLEEPER_CALLS[call](s))
    assert isinstance(err, RuntimeError), err
    assert str(err) == words("PreciseSleeper")
    SLEEPER_CALLS[call](s)  # the owner still can
    assert in_thread(lambda: repr(s)).startswith("PreciseSleeper(margin_ns=")


@pytest.mark.parametrize("call", TICKER_CALLS, ids=str)
def test_a_ticker_refuses_another_thread_while_idle(call):
    t = sleeplab.Ticker(0.001, **QUIET)
    err = in_thread(lambda: TICKER_CALLS[call](t))
    assert isinstance(err, RuntimeError), err
    assert str(err) == words("Ticker")
    TICKER_CALLS[call](t)
    assert in_thread(lambda: repr(t)).startswith("Ticker(period_ns=1000000,")


def test_a_busy_sleeper_refuses_another_thread_in_the_same_words():
    s = sleeplab.PreciseSleeper(**QUIET)
    started = threading.Event()
    errors: list[BaseException] = []

    def other() -> None:
        started.wait()
        time.sleep(0.02)
        try:
            s.sleep(0.001)
        except RuntimeError as e:
            errors.append(e)
        errors.append(RuntimeError(repr(s)))

    t = threading.Thread(target=other)
    t.start()
    started.set()
    s.sleep(0.2)  # the other thread calls in after ~20 ms: well inside
    t.join()
    assert [str(e) for e in errors] == [words("PreciseSleeper"), "PreciseSleeper(<in a call>)"]


def test_python_says_what_c_says(libsleeplab):
    options = libsleeplab.sleeplab_options_new()
    sleeper = ctypes.c_void_p()
    try:
        for name, value in QUIET.items():
            word = {"leave": 1, "inherit": 1}[value]
            assert getattr(libsleeplab, f"sleeplab_options_set_{name}")(
                ctypes.c_void_p(options), ctypes.c_int(word)) == 0
        assert libsleeplab.sleeplab_sleeper_new_with(options, ctypes.byref(sleeper)) == 0
        code, c_words = in_thread(
            lambda: (libsleeplab.sleeplab_sleep_ns(sleeper, 1000), last_error(libsleeplab)))
    finally:
        libsleeplab.sleeplab_sleeper_free(sleeper)
        libsleeplab.sleeplab_options_free(options)
    assert code == -1  # SLEEPLAB_EPERM
    assert c_words == words("sleeplab_sleeper")
    assert c_words.startswith(libsleeplab.sleeplab_strerror(-1).decode())
    s = sleeplab.PreciseSleeper(**QUIET)
    py_words = str(in_thread(lambda: s.sleep(0)))
    assert py_words == c_words.replace("sleeplab_sleeper", "PreciseSleeper")


def test_the_module_functions_work_from_any_thread():
    def wait() -> int:
        deadline = time.monotonic_ns() + 2_000_000
        sleeplab.sleep_until_ns(deadline)
        return time.monotonic_ns() - deadline

    assert in_thread(wait) >= 0
    assert wait() >= 0
