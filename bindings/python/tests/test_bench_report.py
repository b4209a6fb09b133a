"""The benchmark tooling: bench/report.py's statistics and sentences against hand-computed
numbers, and a tiny end-to-end run of bench/pace.py (a smoke run, not a measurement)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import report  # noqa: E402


def test_quantiles_are_nearest_rank_and_honest():
    assert report.quantile([4, 1, 3, 2], 0.5) == 2
    assert report.quantile(list(range(1, 100)), 0.99) is None  # n = 99 < 100
    assert report.quantile(list(range(1, 101)), 0.99) == 99
    assert report.quantile(list(range(1, 1000)), 0.999) is None
    assert report.quantile(list(range(1, 1001)), 0.999) == 999
    assert report.quantile([], 0.5) is None


def contender(name, lateness, cpu_ns=1, wall_ns=100):
    return report.summarize(
        {"name": name, "lateness_ns": lateness, "cpu_ns": cpu_ns, "wall_ns": wall_ns}
    )


def test_summary_counts_and_cpu():
    s = contender("x", [-5, 0, 10, 20], cpu_ns=3, wall_ns=200)
    assert (s["n"], s["early"], s["max"], s["p50"]) == (4, 1, 20, 0)
    assert s["cpu_pct"] == 1.5
    assert s["p99"] is None


def test_p99_verdict_wording_follows_the_numbers():
    plain = contender("time.sleep", [100_000] * 100)
    good = contender("sleeplab.sleep", [20_000] * 100)  # exactly 1/5: met
    bad = contender("sleeplab.sleep", [30_000] * 100)
    worse = contender("sleeplab.sleep", [200_000] * 100)
    assert report.p99_verdict(plain, good).startswith("- ✅")
    assert "5.0× lower" in report.p99_verdict(plain, good)
    assert report.p99_verdict(plain, bad).startswith("- ❌")
    assert "3.3× lower" in report.p99_verdict(plain, bad)
    assert "2.0× higher" in report.p99_verdict(plain, worse)
    small = contender("sleeplab.sleep", [1] * 99)
    v = report.p99_verdict(plain, small)
    assert v.startswith("- –") and "not judged" in v and "n = 99" in v


def test_cpu_and_overhead_verdicts():
    assert report.cpu_verdict(contender("s", [0], cpu_ns=2, wall_ns=100)).startswith("- ✅")
    assert report.cpu_verdict(contender("s", [0], cpu_ns=3, wall_ns=100)).startswith("- ❌")
    o = {"python_sleep0": 900.0, "python_builtin": 50.0, "rust_direct": 80.0,
         "binding_ns": 770.0, "calls": 10, "repeats": 5}
    assert report.overhead_verdict(o).startswith("- ✅") and "770 ns" in report.overhead_verdict(o)
    o["binding_ns"] = 1001.0
    assert report.overhead_verdict(o).startswith("- ❌")


def test_replace_section_keeps_the_rest():
    doc = "# B\n\n<!-- pace:begin -->\nP\n<!-- pace:end -->\n"
    one = report.replace_section(doc, "python", "<!-- python:begin -->\nA\n<!-- python:end -->")
    assert one.count("python:begin") == 1 and "P\n" in one
    two = report.replace_section(one, "python", "<!-- python:begin -->\nB\n<!-- python:end -->")
    assert "\nA\n" not in two and "\nB\n" in two and "P\n" in two


def test_tiny_end_to_end_run(tmp_path):
    out = tmp_path / "py.json"
    subprocess.run(
        [sys.executable, str(BENCH / "pace.py"), "--frames", "4", "--block", "2",
         "--calls", "200", "--json", str(out)],
        check=True,
    )
    result = json.loads(out.read_text())
    assert [c["name"] for c in result["contenders"]] == ["time.sleep", "sleeplab.sleep", "spin"]
    for c in result["contenders"]:
        assert len(c["lateness_ns"]) == 4
        assert all(x >= 0 for x in c["lateness_ns"])  # never early, any contender
        assert 0 < c["cpu_ns"] and 0 < c["wall_ns"]
    slack = {c["name"]: c["timer_slack_ns"] for c in result["contenders"]}
    assert slack["sleeplab.sleep"] == 1
    doc = tmp_path / "B.md"
    doc.write_text("# Benchmarks\n")
    subprocess.run(
        [sys.executable, str(BENCH / "report.py"), str(out), "python", "cmd", str(doc)],
        check=True, capture_output=True,
    )
    text = doc.read_text()
    assert "| sleeplab.sleep | 4 |" in text and "not judged" in text


@pytest.mark.parametrize("args", [["--frames", "0"], ["--rate", "-1"]])
def test_bad_arguments_exit_2(args):
    r = subprocess.run([sys.executable, str(BENCH / "pace.py"), *args], capture_output=True)
    assert r.returncode == 2
