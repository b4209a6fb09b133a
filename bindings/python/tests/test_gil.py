"""The GIL is released while waiting: another Python thread keeps running during a sleep.
If the GIL were held, that thread could run Python code only at the slice boundaries (a
few times); released, it runs throughout."""

from __future__ import annotations

import threading
import time

import sleeplab

WAIT = 0.3


def samples_during(wait) -> int:
    """Timestamps another thread records (every ~1 ms) while `wait()` runs, strictly
    inside the wait."""
    stamps: list[int] = []
    stop = threading.Event()

    def worker() -> None:
        while not stop.is_set():
            stamps.append(time.monotonic_ns())
            time.sleep(0.001)

    t = threading.Thread(target=worker)
    t.start()
    time.sleep(0.01)  # let it start
    start = time.monotonic_ns()
    wait()
    end = time.monotonic_ns()
    stop.set()
    t.join()
    return sum(start < s < end for s in stamps)


def test_module_sleep_releases_the_gil():
    assert samples_during(lambda: sleeplab.sleep(WAIT)) >= 20


def test_precise_sleeper_releases_the_gil():
    s = sleeplab.PreciseSleeper()
    assert samples_during(lambda: s.sleep(WAIT)) >= 20


def test_ticker_releases_the_gil():
    ticker = sleeplab.Ticker(WAIT)
    ticker.tick()  # the first tick is due at once
    assert samples_during(ticker.tick) >= 20


def test_a_single_precise_phase_releases_the_gil():
    # Shorter than one slice: one precise sleep, no signal check in between.
    waits = int(0.6 * sleeplab.SLICE_NS / 1e6)  # ms
    assert samples_during(lambda: sleeplab.sleep(waits / 1e3)) >= 3


def test_a_busy_sleeper_refuses_a_second_thread():
    s = sleeplab.PreciseSleeper()
    errors: list[BaseException] = []
    started = threading.Event()

    def other() -> None:
        started.wait()
        time.sleep(0.02)
        try:
            s.sleep(0.001)
        except RuntimeError as e:
            errors.append(e)

    t = threading.Thread(target=other)
    t.start()
    started.set()
    s.sleep(0.5)  # the other thread calls in after ~20 ms: well inside
    t.join()
    assert len(errors) == 1
