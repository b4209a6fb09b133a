"""The benchmark tooling: bench/report.py's statistics and sentences against hand-computed
numbers, and a tiny end-to-end run of bench/pace.py (a smoke run, not a measurement)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))
import report  # noqa: E402


def test_quantiles_are_linear_and_honest():
    # numpy.quantile's default: position q·(n − 1), as the Rust crates (docs/REPORT.md).
    assert report.quantile([4, 1, 3, 2], 0.5) == 2.5
    assert report.quantile(list(range(1, 100)), 0.99) is None  # n = 99 < 100
    assert abs(report.quantile(list(range(1, 101)), 0.99) - 99.01) < 1e-9
    assert report.quantile(list(range(1, 1000)), 0.999) is None
    assert abs(report.quantile(list(range(1, 1001)), 0.999) - 999.001) < 1e-9
    assert report.quantile([], 0.5) is None


def contender(name, lateness, cpu_ns=1, wall_ns=100, block=10):
    return report.summarize(
        {"name": name, "lateness_ns": lateness, "cpu_ns": cpu_ns, "wall_ns": wall_ns}, block
    )


def test_summary_counts_and_cpu():
    s = contender("x", [-5, 0, 10, 20], cpu_ns=3, wall_ns=200)
    assert (s["n"], s["early"], s["max"], s["p50"]) == (4, 1, 20, 5.0)
    assert s["cpu_pct"] == 1.5
    assert s["p99"] is None and s["p99_ci"] is None
    # 400 frames in 40 blocks that do not differ: the p99's interval over them is the
    # pooled one, closed (each frame the same, a point).
    t = contender("y", [7] * 400)
    assert (t["blocks"], t["p99_ci"]) == (40, (7, 7))
    # 100 frames rising block by block (1..10, 11..20, …): the blocks differ so much that
    # their effective sample cannot resolve a p99 at all, where the pooled frames would
    # have bounded it at the 97th.
    u = contender("z", list(range(1, 101)))
    assert u["blocks"] == 10 and u["p99_ci"] is None
    # 4 blocks: too few for any interval.
    assert contender("w", [7] * 400, block=100)["p99_ci"] is None


def test_p99_verdict_wording_follows_the_numbers():
    # 400 frames: each p99's interval is closed (from 368 on) and, all frames equal, a point.
    plain = contender("time.sleep", [100_000] * 400)
    good = contender("sleeplab.sleep", [19_000] * 400)  # × 5 = 95 µs: below 100 µs
    bad = contender("sleeplab.sleep", [30_000] * 400)
    worse = contender("sleeplab.sleep", [200_000] * 400)
    assert report.p99_verdict(plain, good).startswith("- ✅")
    assert "5.3× lower" in report.p99_verdict(plain, good)
    assert report.p99_verdict(plain, bad).startswith("- ❌")
    assert "3.3× lower" in report.p99_verdict(plain, bad)
    assert "2.0× higher" in report.p99_verdict(plain, worse)
    small = contender("sleeplab.sleep", [1] * 99)
    v = report.p99_verdict(plain, small)
    assert v.startswith("- –") and "not judged" in v and "n = 99" in v
    # Exactly 1/5, and 200 frames (open above): the intervals decide nothing.
    for undecided in (contender("s", [20_000] * 400), contender("s", [19_000] * 200)):
        v = report.p99_verdict(plain, undecided)
        assert v.startswith("- ⚪") and "indistinguishable in this run" in v, v
    assert "[≥ 19.00 µs]" in report.p99_verdict(plain, contender("s", [19_000] * 200))


def test_out_of_reach_needs_three_runs_missed_in_all_and_no_contender_meeting_it():
    two = report.target_summary("t", ["missed", "missed"])
    assert "out of reach here" not in two and "fewer than 3 runs" in two
    three = report.target_summary("t", ["missed"] * 3)
    assert three.endswith("missed in all 3 runs, not called out of reach (no other contender "
                          "was judged against it)")
    mixed = report.target_summary("t", ["missed", "met", "indistinguishable in this run"])
    assert mixed == ("- t: met in 1 of 3 runs, missed in 1, undecided (indistinguishable in "
                     "this run) in 1")
    assert "out of reach" not in report.target_summary("t", ["missed", "missed", None])


def test_several_runs_give_ranges_and_how_often_each_target_held():
    def run(p99_ns, cpu_ns):
        plain = {"name": "nanosleep", "lateness_ns": [100_000] * 400, "cpu_ns": 1, "wall_ns": 100}
        rel = {"name": "sleeplab_sleep_ns", "lateness_ns": [p99_ns] * 400, "cpu_ns": cpu_ns,
               "wall_ns": 100}
        return {"rate_hz": 60, "block": 10, "runtime": "C", "machine": {"system": "L", "cpus": 2},
                "load_before": [0, 0, 0], "load_after": [0, 0, 0], "contenders": [plain, rel]}
    text = report.section([run(10_000, 1), run(30_000, 3), run(15_000, 1)], "c", "cmd")
    assert "Across 3 runs of the same command" in text
    assert "| sleeplab_sleep_ns | 3 | 10.00 µs | 30.00 µs | 1.00 | 3.00 |" in text
    assert ("- sleeplab_sleep_ns p99 lateness ≤ 1/5 of nanosleep's: met in 2 of 3 runs, missed "
            "in 1, undecided (indistinguishable in this run) in 0") in text
    assert "- sleeplab_sleep_ns CPU ≤ 2 % of a core: met in 2 of 3 runs, missed in 1" in text


def test_cpu_and_overhead_verdicts():
    assert report.cpu_verdict(contender("s", [0], cpu_ns=2, wall_ns=100)).startswith("- ✅")
    assert "2.00 % (by point value)" in report.cpu_verdict(contender("s", [0], cpu_ns=2, wall_ns=100))
    assert report.cpu_verdict(contender("s", [0], cpu_ns=3, wall_ns=100)).startswith("- ❌")
    o = {"python_sleep0": 900.0, "python_builtin": 50.0, "rust_direct": 80.0,
         "binding_ns": 770.0, "calls": 10, "repeats": 5}
    assert report.overhead_verdict(o).startswith("- ✅") and "770 ns" in report.overhead_verdict(o)
    o["binding_ns"] = 1001.0
    assert report.overhead_verdict(o).startswith("- ❌")


def with_view(name, lateness, own, shift, ret, margin=None, oversleep=None):
    n = len(lateness)
    return {
        "name": name, "lateness_ns": lateness, "cpu_ns": 1, "wall_ns": 100,
        "sleeper": {
            "lateness_ns": own, "deadline_shift_ns": shift, "return_ns": ret,
            "margin_ns": margin or [100_000] * n, "native_oversleep_ns": oversleep or [-1] * n,
            "spin_ns": [0] * n,
        },
    }


def test_attribution_counts_the_largest_part_of_each_late_frame():
    # Frame 0 on time; 1: return path; 2: the native sleep overslept its margin (150 µs >
    # 100 µs); 3: deadline shift; 4: a tie between own lateness and return path goes to
    # the first part, and its native wake was in time (oversleep = margin): time lost after
    # it.
    c = with_view(
        "sleeplab.sleep",
        lateness=[500, 3_000, 50_000, 12_000, 4_000],
        own=[100, 200, 49_000, 500, 2_000],
        shift=[200, 300, 500, 11_000, 0],
        ret=[200, 2_500, 500, 500, 2_000],
        oversleep=[-1, 90_000, 150_000, 95_000, 100_000],
    )
    for k in range(5):
        assert sum(report.frame_parts(c["sleeper"], k).values()) == c["lateness_ns"][k]
    a = report.attribution(c)
    assert a["late"] == 4 and a["n"] == 5
    assert a["by_part"] == {"overslept_ns": 1, "lost_ns": 1, "deadline_shift_ns": 1,
                            "return_ns": 1}
    assert a["tail"] == 0, "5 frames do not resolve a p99"
    assert a["p50"]["return_ns"] == 500  # the middle of all 5 frames
    assert a["p50"]["overslept_ns"] == 0 and a["p50"]["lost_ns"] == 200
    # The 4 frames with a native phase: the mean of the two middle ones, 95 and 100 µs.
    assert a["p50"]["native_oversleep_ns"] == 97_500
    # Ties between the parts' counts go to the first part.
    assert report.cause_sentence(a) == (
        "- sleeplab.sleep: the native oversleep past the margin was the largest part in 1 "
        "of its 4 late frames.")
    assert report.tail_sentence(a) == (
        "- sleeplab.sleep: no frame at or above its p99 was later than 1.00 µs.")
    assert report.attribution({"name": "spin", "lateness_ns": [1]}) is None


def test_the_tail_attribution_counts_the_frames_at_or_above_p99():
    # 200 frames: 197 with a 20 µs return path, then three late ones: two stalls after a
    # timely native wake (own 300 µs, oversleep 80 µs ≤ margin 100 µs) and one oversleep of
    # the margin (own 310 µs, oversleep 220 µs). p99 at position 0.99 · 199 = 197.01, between
    # the 198th and 199th smallest (320 µs both): 320 µs, and the three are at or above it.
    n = 200
    own = [0] * 197 + [300_000, 300_000, 310_000]
    ret = [20_000] * n
    over = [80_000] * 199 + [220_000]
    c = with_view("sleeplab.sleep", [o + r for o, r in zip(own, ret)], own, [0] * n, ret,
                  oversleep=over)
    a = report.attribution(c)
    assert report.quantile(c["lateness_ns"], 0.99) == 320_000
    assert a["tail"] == 3
    assert a["tail_by_part"] == {"overslept_ns": 1, "lost_ns": 2, "deadline_shift_ns": 0,
                                 "return_ns": 0}
    assert a["by_part"]["return_ns"] == 197
    assert report.tail_sentence(a) == (
        "- sleeplab.sleep: in 2 of the 3 frames at or above its p99, the largest part was "
        "the time lost after a timely native wake.")
    text = "\n".join(report.attribution_lines([a]))
    assert "| sleeplab.sleep | at or above p99 | 3 | 1 | 2 | 0 | 0 |" in text
    assert "| sleeplab.sleep | later than 1.00 µs | 200 of 200 | 1 | 2 | 0 | 197 |" in text


def test_attribution_says_when_no_frame_was_late():
    c = with_view("sleeplab_sleep_until_ns", [10, 20], [5, 5], [0, 0], [5, 15])
    a = report.attribution(c)
    assert a["late"] == 0 and sum(a["by_part"].values()) == 0
    assert report.cause_sentence(a) == (
        "- sleeplab_sleep_until_ns: no frame later than 1.00 µs.")
    lines = report.attribution_lines([a])
    assert "| sleeplab_sleep_until_ns | later than 1.00 µs | 0 of 2 | 0 | 0 | 0 | 0 |" in "\n".join(lines)
    assert report.attribution_lines([]) == []


def test_section_judges_both_forms_and_attributes_their_lateness():
    n = 400
    plain = {"name": "nanosleep", "lateness_ns": [100_000] * n, "cpu_ns": 1, "wall_ns": 100}
    rel = with_view("sleeplab_sleep_ns", [19_000] * n, [0] * n, [0] * n, [19_000] * n)
    ab = with_view("sleeplab_sleep_until_ns", [30_000] * n, [0] * n, [0] * n, [30_000] * n)
    result = {"rate_hz": 60, "block": 10, "runtime": "C", "machine": {"system": "L", "cpus": 2},
              "load_before": [0, 0, 0], "load_after": [0, 0, 0], "contenders": [plain, rel, ab]}
    text = report.section(result, "c", "cmd")
    assert "- ✅ sleeplab_sleep_ns p99 lateness" in text
    assert "- ❌ sleeplab_sleep_until_ns p99 lateness" in text
    assert "- sleeplab_sleep_ns: the return path was the largest part in 400 of its 400" in text
    assert "| sleeplab_sleep_ns | 400 | 19.00 µs | 19.00 µs | [19.00 µs–19.00 µs] |" in text


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
    until = "sleeplab.PreciseSleeper.sleep_until"
    assert [c["name"] for c in result["contenders"]] == [
        "time.sleep", "sleeplab.sleep", until, "spin"]
    for c in result["contenders"]:
        assert len(c["lateness_ns"]) == 4
        assert 0 < c["cpu_ns"] and 0 < c["wall_ns"] and 0 <= c["bookkeeping_cpu_ns"]
        # Every contender's readings: the call before the deadline or none at all.
        f = c["frames"]
        assert set(f) == {"deadline_ns", "called_ns", "returned_ns"}
        for k in range(4):
            assert f["called_ns"][k] <= f["returned_ns"][k]
            assert c["lateness_ns"][k] == f["returned_ns"][k] - f["deadline_ns"][k]
        view = c.get("sleeper")
        assert (view is not None) == c["name"].startswith("sleeplab")
        if c["name"] != until:
            assert all(x >= 0 for x in c["lateness_ns"])  # never early
        if view:
            assert set(view) == {"margin_ns", "native_oversleep_ns", "spin_ns", "lateness_ns",
                                 "deadline_shift_ns", "return_ns", "native_end_ns",
                                 "sleeper_woke_ns"}
            for k, lat in enumerate(c["lateness_ns"]):
                # No call, so no view, exactly where the deadline had passed before the call.
                assert report.has_view(view, k) == (f["called_ns"][k] < f["deadline_ns"][k])
                if not report.has_view(view, k):
                    continue
                # The parts add up to the loop's lateness, each frame; the sleeper is never
                # early against the deadline it was given; its readings come in order.
                assert sum(report.frame_parts(view, k).values()) == lat
                assert view["lateness_ns"][k] >= 0 and view["return_ns"][k] >= 0
                assert (f["called_ns"][k] <= view["native_end_ns"][k]
                        <= view["sleeper_woke_ns"][k] <= f["returned_ns"][k])
            # The relative form computes its deadline a little after the loop did; the
            # absolute one is handed the loop's, through float seconds (exact to a few ns
            # unless the machine has been up for months).
            shifts = [x for x in view["deadline_shift_ns"] if x is not None]
            if c["name"] == until:
                assert all(abs(x) <= 1_000 for x in shifts)
            else:
                assert all(x >= 0 for x in shifts)
    slack = {c["name"]: c["timer_slack_ns"] for c in result["contenders"]}
    assert slack["sleeplab.sleep"] == 1 and slack[until] == 1
    doc = tmp_path / "B.md"
    doc.write_text("# Benchmarks\n")
    # The section declares what its figures depend on (bench_doc.py stamps it); without
    # that, nothing is written.
    argv = [sys.executable, str(BENCH / "report.py"), str(out), "python", "cmd", str(doc)]
    env = {k: v for k, v in os.environ.items() if k != "BENCH_SOURCES"}
    assert subprocess.run(argv, capture_output=True, env=env).returncode == 2
    assert doc.read_text() == "# Benchmarks\n"
    subprocess.run(argv, check=True, capture_output=True,
                   env={**env, "BENCH_SOURCES": "bindings/python scripts/bench_doc.py"})
    text = doc.read_text()
    assert "<!-- python:begin commit=" in text and "sources=bindings/python,scripts/bench_doc.py -->" in text
    assert "| sleeplab.sleep | 4 |" in text and "not judged" in text
    assert "| sleeplab.PreciseSleeper.sleep_until | " in text and " of 4 | " in text


@pytest.mark.parametrize("args", [["--frames", "0"], ["--rate", "-1"]])
def test_bad_arguments_exit_2(args):
    r = subprocess.run([sys.executable, str(BENCH / "pace.py"), *args], capture_output=True)
    assert r.returncode == 2
