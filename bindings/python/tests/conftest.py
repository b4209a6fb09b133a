"""Shared helpers for the sleeplab Python tests. Assertions are invariants that hold on a
noisy 2-core VM (never early, counts add up), never tight latencies."""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import shutil
import signal
import subprocess
import threading
import time
from pathlib import Path

import pytest

#: The repository's root.
REPO = Path(__file__).resolve().parents[3]


def cargo_or_skip() -> str:
    """The cargo executable; without one the test is skipped, or fails under CI (where
    scripts/install-deps.sh has installed everything)."""
    cargo = shutil.which("cargo")
    if cargo is None:
        if os.environ.get("CI"):
            pytest.fail("cargo is not on PATH")
        pytest.skip("cargo is not on PATH")
    return cargo


def target_dir() -> Path:
    """Cargo's target directory for this checkout (CARGO_TARGET_DIR honoured)."""
    out = subprocess.run([cargo_or_skip(), "metadata", "--format-version", "1", "--no-deps"],
                         cwd=REPO, check=True, capture_output=True).stdout
    return Path(json.loads(out)["target_directory"])


@pytest.fixture(scope="session")
def libsleeplab():
    """The C library of this checkout (cargo builds it in release if it is not fresh),
    through ctypes: for the tests that check C and Python say the same."""
    subprocess.run([cargo_or_skip(), "build", "--release", "-q", "-p", "sleeplab-ffi"],
                   cwd=REPO, check=True)
    lib = ctypes.CDLL(str(target_dir() / "release" / "libsleeplab.so"))
    lib.sleeplab_last_error.restype = ctypes.c_char_p
    lib.sleeplab_strerror.restype = ctypes.c_char_p
    lib.sleeplab_options_new.restype = ctypes.c_void_p
    lib.sleeplab_options_free.argtypes = [ctypes.c_void_p]
    lib.sleeplab_sleeper_new_with.argtypes = [ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    lib.sleeplab_sleeper_free.argtypes = [ctypes.c_void_p]
    lib.sleeplab_sleep_ns.argtypes = [ctypes.c_void_p, ctypes.c_uint64]
    return lib


def header_constants() -> dict[str, int]:
    """The integer #defines of include/sleeplab.h (SLEEPLAB_BUDGET_AUTO, ...)."""
    text = (REPO / "include" / "sleeplab.h").read_text()
    consts = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[0] == "#define" and parts[2].lstrip("-").isdigit():
            consts[parts[1]] = int(parts[2])
    return consts


def last_error(lib) -> str:
    """The C library's last error on this thread."""
    return lib.sleeplab_last_error().decode()


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
