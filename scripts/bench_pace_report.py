#!/usr/bin/env python3
"""Writes the pace benchmark's section of docs/BENCHMARKS.md from a `sleeplab pace` JSON.

Usage: bench_pace_report.py PACE.json "COMMAND" "LOAD_BEFORE" "LOAD_AFTER" BENCHMARKS.md
"""
import json
import sys

from bench_doc import markers, write_section

BEGIN, END = markers("pace")

# Issue 4's targets for `precise` (60 Hz, 1000 frames, one interleaved run).
P99_TARGET_NS = 2_000
P999_TARGET_NS = 50_000
CPU_TARGET_PCT = 1.5


def us(ns):
    return f"{ns / 1e3:.2f} µs" if ns < 1e6 else f"{ns / 1e6:.3f} ms"


def main():
    path, command, load_before, load_after, doc = sys.argv[1:6]
    r = json.load(open(path))
    res = {x["strategy"]: x for x in r["data"]["results"]}
    fp = r["fingerprint"]
    rows = ["| strategy | p50 | p99 | p99.9 | max | missed | CPU % | csw v/i per frame |",
            "|---|---:|---:|---:|---:|---:|---:|---:|"]
    for name, x in res.items():
        e = x["error"]
        rows.append(f"| {name} | {us(e['median_ns'])} | {us(e['p99_ns'])} | {us(e['p999_ns'])} | "
                    f"{us(e['max_ns'])} | {x['missed_frames']} | {x['cpu_percent']:.2f} | "
                    f"{x['voluntary_csw_per_frame']:.2f}/{x['involuntary_csw_per_frame']:.2f} |")
    p = res.get("precise")
    verdicts = []
    if p:
        pe = p["error"]

        def check(label, ok, detail):
            verdicts.append(f"- {'✅' if ok else '❌'} {label}: {detail}")

        check("precise p99 ≤ 2 µs", pe["p99_ns"] <= P99_TARGET_NS,
              f"{us(pe['p99_ns'])}" + ("" if pe["p99_ns"] <= P99_TARGET_NS else
                                        f" (missed by {us(pe['p99_ns'] - P99_TARGET_NS)})"))
        check("precise p99.9 ≤ 50 µs", pe["p999_ns"] <= P999_TARGET_NS,
              f"{us(pe['p999_ns'])}" + ("" if pe["p999_ns"] <= P999_TARGET_NS else
                                         f" (missed by {us(pe['p999_ns'] - P999_TARGET_NS)})"))
        check("precise CPU ≤ 1.5 % of a core", p["cpu_percent"] <= CPU_TARGET_PCT,
              f"{p['cpu_percent']:.2f} %")
        for other, what in [("seed-hybrid", "p99 and CPU"), ("spin-sleep", "p99")]:
            o = res.get(other)
            if not o:
                continue
            oe = o["error"]
            ratio_p99 = oe["p99_ns"] / max(pe["p99_ns"], 1)
            ok = pe["p99_ns"] < oe["p99_ns"]
            detail = f"p99 {us(pe['p99_ns'])} vs {us(oe['p99_ns'])} ({ratio_p99:.1f}× better)" if ok else \
                f"p99 {us(pe['p99_ns'])} vs {us(oe['p99_ns'])} ({1 / ratio_p99:.1f}× worse)"
            if "CPU" in what:
                cpu_ok = p["cpu_percent"] < o["cpu_percent"]
                ok = ok and cpu_ok
                detail += f"; CPU {p['cpu_percent']:.2f} % vs {o['cpu_percent']:.2f} % " \
                          f"({o['cpu_percent'] / max(p['cpu_percent'], 1e-9):.1f}× less)"
            check(f"precise better than {other} on {what}", ok, detail)
    section = "\n".join([
        BEGIN,
        "## Precise sleep at 60 Hz (`sleeplab pace`)",
        "",
        "```sh",
        "scripts/bench-pace.sh   # runs:",
        command,
        "```",
        "",
        f"Run {r['started_at']} on {fp['cpu_model']} × {fp['cpu_count']}, kernel {fp['kernel_release']}, "
        f"clocksource {fp.get('clocksource')}, virtualization {fp.get('virtualization')}. "
        f"Load average before/after: {load_before} / {load_after}. Frame error = wake − deadline on "
        "an absolute schedule; contenders interleaved in blocks of 50 frames.",
        "",
        *rows,
        "",
        "Targets (issue 4):",
        "",
        *verdicts,
        END,
    ])
    write_section(doc, "pace", section)
    print(section)


if __name__ == "__main__":
    main()
