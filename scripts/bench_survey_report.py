#!/usr/bin/env python3
"""Writes how long the default survey takes: the "survey-time" section of
docs/BENCHMARKS.md (the runs, their result files checked). The README states the plan's
own estimate (`RUN_TIME`, printed by `--help`), not this measurement.

Usage: bench_survey_report.py FULL_SECONDS FULL_DIR "FULL_CMD" QUICK_SECONDS QUICK_DIR "QUICK_CMD" BENCHMARKS.md
       bench_survey_report.py --self-test
"""
import json
import sys

from bench_doc import markers, write_section


def unresolved(v):
    """How many quantiles in a result a sample cannot resolve (n·(1 − q) < 1), and how
    many summaries it holds."""
    bad = total = 0
    if isinstance(v, list):
        for x in v:
            b, t = unresolved(x)
            bad, total = bad + b, total + t
    elif isinstance(v, dict):
        if "count" in v and "p99_ns" in v:
            total += 1
            n = v["count"]
            for key, need in [("p90_ns", 10), ("p99_ns", 100), ("p999_ns", 1000)]:
                bad += v.get(key) is not None and n < need
        for x in v.values():
            b, t = unresolved(x)
            bad, total = bad + b, total + t
    return bad, total


def section(full, quick):
    """The BENCHMARKS section from (seconds, result, command) pairs."""
    lines = [markers("survey-time")[0], "## How long the default runs take", "", "```sh"]
    lines += [f"{cmd}" for _, _, cmd in (full, quick)]
    lines += ["```", ""]
    for seconds, r, cmd in (full, quick):
        bad, total = unresolved(r)
        lines.append(f"- `{cmd}`: {seconds:.1f} s, run {r['started_at']}; `complete: "
                     f"{str(r['complete']).lower()}`, {total} summaries, {bad} with a quantile "
                     "its sample cannot resolve.")
    lines.append(markers("survey-time")[1])
    return "\n".join(lines)


def self_test():
    r = {"started_at": "T", "complete": True,
         "data": {"cells": [{"summary": {"count": 2, "p90_ns": None, "p99_ns": None, "p999_ns": None}},
                            {"summary": {"count": 50, "p90_ns": 1.0, "p99_ns": 2.0, "p999_ns": None}}]}}
    assert unresolved(r) == (1, 2)
    b = section((71.2, r, "sleeplab -q"), (14.8, r, "sleeplab --quick -q"))
    assert "- `sleeplab -q`: 71.2 s, run T; `complete: true`, 2 summaries, 1 with a quantile" in b, b
    print("self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    fs, fdir, fcmd, qs, qdir, qcmd, bench = sys.argv[1:8]
    load = lambda d: json.load(open(f"{d}/results.json"))  # noqa: E731
    b = section((float(fs), load(fdir), fcmd), (float(qs), load(qdir), qcmd))
    write_section(bench, "survey-time", b)
    print(b)


if __name__ == "__main__":
    main()
