"""The GIL is released while waiting: another Python thread keeps running during a sleep.
If the GIL were held, that thread could run Python code only at the slice boundaries (a
few times); released, it runs throughout."""

from __future__ import annotations

import threading
import time

import sleeplab

WAIT = 0.3


def stamped(wait):
    """Runs `wait()` while another thread records a timestamp every ~1 ms (each read
    with the GIL held); returns (what wait returned, its start, its end, the stamps)."""
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
    out = wait()
    end = time.monotonic_ns()
    stop.set()
    t.join()
    return out, start, end, stamps


def samples_during(wait) -> int:
    """Timestamps another thread records while `wait()` runs, strictly inside the wait."""
    _, start, end, stamps = stamped(wait)
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


def test_the_final_spin_keeps_the_gil():
    # A margin longer than the wait and no CPU ceiling: the whole wait is the spin, which
    # holds the GIL, so another thread records nothing strictly inside it (a stamp is
    # read with the GIL held). Taking the GIL back thus never comes after the deadline.
    s = sleeplab.PreciseSleeper(prior=0.03, cap=0.05, cpu_budget="none")
    r, _, _, stamps = stamped(lambda: s.sleep(0.02))
    assert r.native_oversleep_ns is None and r.spin_ns > 0  # no native phase
    assert stamps  # the other thread ran
    assert not [x for x in stamps if r.start_ns < x < r.woke_ns]
