"""Shared helpers for the sleeplab Python tests. Assertions are invariants that hold on a
noisy 2-core VM (never early, counts add up), never tight latencies."""

from __future__ import annotations

import ctypes
import ctypes.util
import signal
import threading
import time

import pytest


class Storm:
    """Sends `signum` to the main thread every `interval` seconds from another thread."""

    def __init__(self, signum: int = signal.SIGUSR1, interval: float = 100e-6) -> None:
        self.signum = signum
        self.interval = interval
        self.sent = 0
        self._stop = threading.Event()
        self._target = threading.main_thread().ident
        self._thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while not self._stop.is_set():
            signal.pthread_kill(self._target, self.signum)
            self.sent += 1
            time.sleep(self.interval)

    def __enter__(self) -> "Storm":
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()


@pytest.fixture
def usr1_counter():
    """A counting SIGUSR1 handler installed without SA_RESTART; restored afterwards."""
    count = [0]

    def handler(signum, frame):
        count[0] += 1

    old = signal.signal(signal.SIGUSR1, handler)
    signal.siginterrupt(signal.SIGUSR1, True)
    try:
        yield count
    finally:
        signal.signal(signal.SIGUSR1, old)


class _Timespec(ctypes.Structure):
    _fields_ = [("tv_sec", ctypes.c_long), ("tv_nsec", ctypes.c_long)]


def raw_clock_nanosleep(seconds: float) -> int:
    """libc clock_nanosleep(CLOCK_MONOTONIC, relative), without Python's EINTR retry:
    returns 0 or the errno (4 = EINTR when a signal cut it short)."""
    libc = ctypes.CDLL(ctypes.util.find_library("c"), use_errno=True)
    ts = _Timespec(int(seconds), int((seconds % 1) * 1e9))
    return libc.clock_nanosleep(time.CLOCK_MONOTONIC, 0, ctypes.byref(ts), None)
