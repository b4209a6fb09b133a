"""The lab's Python probe (probes/python/probe.py) measures this package: its
sleeplab.* methods are available in an interpreter that imports sleeplab, never early,
with every sample and tick counted; elsewhere they are listed as unavailable (exit 3)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

PROBE = Path(__file__).resolve().parents[3] / "probes" / "python" / "probe.py"


def probe(*args: str, flags: tuple[str, ...] = ()) -> subprocess.CompletedProcess:
    """Runs the probe with this interpreter (`flags` go to the interpreter)."""
    return subprocess.run(
        [sys.executable, *flags, str(PROBE), *args],
        capture_output=True, text=True, timeout=120,
    )


def samples(text: str, value: int) -> list[int]:
    """The s/t samples of the cell `value`, checked against its done line."""
    lines = text.splitlines()
    start = lines.index(f"cell {value}")
    out: list[int] = []
    for line in lines[start + 1 :]:
        if line.startswith("done "):
            assert line == f"done {value} {len(out)}"
            return out
        tag, _, n = line.partition(" ")
        if tag in ("s", "t"):
            out.append(int(n))
    raise AssertionError(f"cell {value} has no done line:\n{text}")


def listed(text: str) -> dict[str, dict]:
    return {
        o["method"]: o
        for o in map(json.loads, text.splitlines()[1:-1])
    }


def test_the_sleeplab_methods_are_listed_as_available():
    out = probe("--list")
    assert out.returncode == 0, out.stderr
    methods = listed(out.stdout)
    assert methods["sleeplab.sleep"]["kind"] == "oneshot"
    assert methods["sleeplab.Ticker"]["kind"] == "periodic"
    assert methods["sleeplab.sleep"]["available"] is True
    assert methods["sleeplab.Ticker"]["available"] is True


def test_the_probe_sleep_is_never_early_and_counts_add_up():
    out = probe("--method", "sleeplab.sleep", "--durations-ns", "0,200000",
                "--count", "20", "--warmup", "2")
    assert out.returncode == 0, out.stderr
    header = json.loads(out.stdout.splitlines()[0])
    assert header["method"] == "sleeplab.sleep" and header["mode"] == "oneshot"
    assert out.stdout.endswith("end\n")
    for d in (0, 200_000):
        got = samples(out.stdout, d)
        assert len(got) == 20
        assert min(got) >= d


def test_the_probe_ticker_keeps_the_grid():
    period = 1_000_000
    out = probe("--method", "sleeplab.Ticker", "--period-ns", str(period),
                "--count", "30", "--warmup", "2")
    assert out.returncode == 0, out.stderr
    ticks = samples(out.stdout, period)
    assert len(ticks) == 30
    # Tick k (counting from 1, after the two warm-up ticks) is due at k * period.
    for k, t in enumerate(ticks, start=3):
        assert t >= k * period, (k, t)
    assert ticks == sorted(ticks)


def test_without_the_package_the_methods_are_unavailable():
    # -S: no site-packages at all (neither the venv's nor the system's), so no sleeplab.
    out = probe("--list", flags=("-S",))
    assert out.returncode == 0, out.stderr
    m = listed(out.stdout)["sleeplab.sleep"]
    assert m["available"] is False
    assert "pip install ./bindings/python" in m["reason"]
    out = probe("--method", "sleeplab.sleep", "--durations-ns", "1000", "--count", "1",
                flags=("-S",))
    assert out.returncode == 3
    assert out.stdout == ""
    assert "unavailable" in out.stderr
