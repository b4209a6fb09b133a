#!/usr/bin/env python3
"""Writes README.md's table of the precise sleeper's options (section "options") from the
`frontier_replay` example's output: each setting replayed over the recorded 60 Hz traces
in virtual time (deterministic: the numbers depend only on the traces and the code).

Usage: bench_options_report.py REPLAY.txt "COMMAND" README.md
       bench_options_report.py --self-test
"""
import sys

from bench_doc import markers, write_section

# (the setting frontier_replay replays, how the README names it: the builder call).
SETTINGS = [
    ("precise", "default (`precise`)"),
    ("precise:cap=500us", "`precise:cap=500us` (its margin capped at 500 µs)"),
    ("precise:q=0.999", "`.quantile(0.999)`"),
    ("precise:q=0.95", "`.quantile(0.95)`"),
    ("precise:tol=50us", "`.lateness_tolerance(50 µs)`"),
    ("precise:tol=200us", "`.lateness_tolerance(200 µs)`"),
    ("precise:budget=1%", "`.cpu_budget_percent(1.0)`"),
    ("precise:budget=3%", "`.cpu_budget_percent(3.0)`"),
    ("precise:budget=10%", "`.cpu_budget_percent(10.0)`"),
    ("precise:budget=none", "`.cpu_budget(CpuBudget::Unlimited)`"),
    ("precise:early=100us", "`.early_tolerance(100 µs)`"),
    ("precise:early=500us", "`.early_tolerance(500 µs)`"),
]

# The traces, in the table's column order, and their column titles.
TRACES = [
    ("60hz-idle", "idle"),
    ("60hz-load-1", "1 busy thread"),
    ("60hz-load-cpus", "2 busy (1 per CPU)"),
    ("60hz-load-cpusplus3", "5 busy (CPUs + 3)"),
]


def rows(text):
    """{(trace, setting): (p99 µs, p99.9 µs, CPU %, oracle p99 µs at that CPU)} from the
    replay's `|` table (header skipped)."""
    out = {}
    for line in text.splitlines()[1:]:
        c = [x.strip() for x in line.split("|")]
        if len(c) >= 6:
            out[(c[0], c[1])] = (c[2], c[3], c[4], c[5])
    return out


def cell(r):
    p99, p999, cpu, oracle = r
    fmt = lambda v: v if v == "–" else f"{float(v):g}"  # noqa: E731
    return f"{fmt(p99)} / {fmt(p999)} / {cpu} % ({fmt(oracle)})"


def section(text, command):
    got = rows(text)
    lines = [
        markers("options")[0],
        "```sh",
        command,
        "```",
        "",
        "| setting | " + " | ".join(title for _, title in TRACES) + " |",
        "|---|" + "---|" * len(TRACES),
    ]
    for setting, label in SETTINGS:
        cells = [cell(got[(t, setting)]) if (t, setting) in got else "–" for t, _ in TRACES]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    lines.append(markers("options")[1])
    return "\n".join(lines)


def self_test():
    text = ("trace | setting | p99 µs | p99.9 µs | CPU % | oracle p99 µs at that CPU | x | y\n"
            "60hz-idle | precise | 0.1 | 1115.4 | 1.84 | 0.0 | 986.6 | 1.66\n"
            "60hz-load-1 | precise | 1476.2 | – | 4.05 | 1563.0 | 2895.8 | 4.56\n")
    s = section(text, "cmd")
    assert "| default (`precise`) | 0.1 / 1115.4 / 1.84 % (0) | 1476.2 / – / 4.05 % (1563) | – | – |" in s, s
    assert s.startswith("<!-- options:begin -->") and s.endswith("<!-- options:end -->")
    print("self-test ok")


def main():
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        return
    path, command, doc = sys.argv[1:4]
    s = section(open(path).read(), command)
    write_section(doc, "options", s)
    print(s)


if __name__ == "__main__":
    main()
