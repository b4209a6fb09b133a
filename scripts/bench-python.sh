#!/usr/bin/env bash
# Issue 15's Python benchmark: a 60 Hz loop, time.sleep vs sleeplab.sleep vs sleeplab.sleep_until vs a pure spin,
# interleaved in blocks of 60 frames (p99 lateness with n, CPU % per contender), then the
# binding's per-call overhead against a direct Rust call. Rewrites the "python" section of
# docs/BENCHMARKS.md. Run it on a quiet machine (about 4 min), never beside compilers.
# 3600 frames a contender: p99 is the 36th-worst frame, so one stretch of a host stall
# that recurs every sixth frame (docs/BENCHMARKS.md, scripts/host-gaps.c) sets it less
# often than at 1200 frames (the 12th-worst).
#
#   scripts/bench-python.sh
#   FRAMES=6 BLOCK=3 CALLS=1000 BENCH_DOC=/tmp/b.md scripts/bench-python.sh   # smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${FRAMES:-3600}
BLOCK=${BLOCK:-60}
CALLS=${CALLS:-200000}
DOC=${BENCH_DOC:-docs/BENCHMARKS.md}

py=$(scripts/python-env.sh)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--frames "$FRAMES" --block "$BLOCK" --rate 60 --calls "$CALLS")
"$py" bindings/python/bench/pace.py "${args[@]}" --json "$out/python.json"
"$py" bindings/python/bench/report.py "$out/python.json" python \
    "scripts/bench-python.sh   # runs: python bindings/python/bench/pace.py ${args[*]}" "$DOC"
