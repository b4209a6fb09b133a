#!/usr/bin/env bash
# The precise-sleep benchmark (issue 4): a 60 Hz loop × 1000 frames for every contender,
# interleaved in blocks of 50 frames, all under 1 ns timer slack. Prints the table and
# rewrites the "pace" section of docs/BENCHMARKS.md with the numbers, the ratios and
# the verdict on each target.
#
#   scripts/bench-pace.sh                 # the benchmark (about 2 min 15 s)
#   FRAMES=300 scripts/bench-pace.sh      # a quicker look
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${FRAMES:-1000}
STRATEGIES=std-sleep,clock-nanosleep-abs,spin,seed-hybrid,sdl-precise,fixed-margin,spin-sleep,precise
cargo build --release -q
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cmd=(target/release/sleeplab pace --rate 60 --frames "$FRAMES" --block 50 --strategies "$STRATEGIES" --timer-slack 1ns --json "$out/pace.json" -q)
"${cmd[@]}"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 scripts/bench_pace_report.py "$out/pace.json" "sleeplab pace --rate 60 --frames $FRAMES --block 50 --strategies $STRATEGIES --timer-slack 1ns" "$load_before" "$load_after" docs/BENCHMARKS.md
