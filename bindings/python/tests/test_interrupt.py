"""Ctrl-C interrupts a long wait promptly with KeyboardInterrupt (coarse bound: under 1 s
for a 30 s wait), and only once the wait is under way."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time

import pytest

import sleeplab

DELAY = 0.2  # when SIGINT arrives, seconds after the wait began


@pytest.fixture(autouse=True)
def python_sigint_handler():
    """These tests are about what a wait does on Ctrl-C under Python's own handler, so
    each runs with it whatever this process inherited: Python installs it at start-up only
    if SIGINT was not ignored, and a test command started in the background by a
    non-interactive shell (`cmd &`) inherits SIGINT ignored. A handled signal goes back to
    its default action across exec, so a child started meanwhile installs its own."""
    old = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, old)


def interrupted_after(call) -> float:
    """Runs `call` (a 30 s wait), sends SIGINT to the process after DELAY, returns how long
    the call lasted before it raised KeyboardInterrupt."""
    timer = threading.Timer(DELAY, os.kill, (os.getpid(), signal.SIGINT))
    start = time.monotonic()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            call()
    finally:
        timer.cancel()
    return time.monotonic() - start


@pytest.mark.parametrize(
    "name,call",
    [
        ("sleep", lambda: sleeplab.sleep(30)),
        ("sleep_until", lambda: sleeplab.sleep_until(time.monotonic() + 30)),
        ("PreciseSleeper.sleep", lambda: sleeplab.PreciseSleeper().sleep(30)),
        ("Ticker", lambda: [t for _, t in zip(range(2), sleeplab.Ticker(30))]),
    ],
)
def test_ctrl_c_interrupts_a_long_wait_promptly(name, call):
    elapsed = interrupted_after(call)
    assert DELAY <= elapsed < 1.0, f"{name}: {elapsed:.3f} s"


def test_a_sleeper_still_works_after_an_interrupted_sleep():
    s = sleeplab.PreciseSleeper()
    interrupted_after(lambda: s.sleep(30))
    before = time.monotonic_ns()
    r = s.sleep(0.002)
    assert r.woke_ns >= r.deadline_ns >= before + 2_000_000


def test_ctrl_c_interrupts_asleep_under_asyncio_run():
    code = (
        "import asyncio, sys, sleeplab\n"
        "print('ready', flush=True)\n"
        "asyncio.run(sleeplab.asleep(30))\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout.readline().strip() == "ready"
    time.sleep(DELAY)
    start = time.monotonic()
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=10)
    assert time.monotonic() - start < 2.0
    assert proc.returncode != 0
    assert "KeyboardInterrupt" in err
