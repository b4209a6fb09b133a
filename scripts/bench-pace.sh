#!/usr/bin/env bash
# The precise-sleep benchmark: a 60 Hz loop × 1000 frames for every contender,
# interleaved in blocks of 50 frames, all under 1 ns timer slack, the whole comparison
# REPEAT (3) times (`sleeplab pace --repeat`: a tail moves from run to run). Prints the
# table and rewrites the "pace" section of docs/BENCHMARKS.md (or BENCH_DOC) with the
# numbers, their 95 % intervals, the verdict on each target in the first run and how often
# each held across the runs.
#
#   scripts/bench-pace.sh                                           # the benchmark (about 7 min)
#   FRAMES=300 REPEAT=1 scripts/bench-pace.sh                       # a quicker look
#   FRAMES=10 REPEAT=2 BENCH_DOC=/tmp/b.md scripts/bench-pace.sh    # smoke run, docs untouched
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-pace.sh scripts/bench_pace_report.py scripts/bench_doc.py scripts/quantiles.py crates/sleeplab/src crates/sleeplab-cli/src/experiments/pace crates/sleeplab-cli/src/contenders crates/sleeplab-stats/src"
FRAMES=${FRAMES:-1000}
REPEAT=${REPEAT:-3}
STRATEGIES=std-sleep,clock-nanosleep-abs,spin,seed-hybrid,sdl-precise,fixed-margin,spin-sleep,precise
cargo build --release -q -p sleeplab-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
cmd=(sleeplab pace --rate 60 --frames "$FRAMES" --block 50 --strategies "$STRATEGIES" --timer-slack 1ns --repeat "$REPEAT")
"target/release/${cmd[0]}" "${cmd[@]:1}" --json "$out/pace.json" -q
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
python3 scripts/bench_pace_report.py "$out/pace.json" "${cmd[*]}" "$load_before" "$load_after" "$DOC"
