#!/usr/bin/env bash
# The accuracy-versus-CPU frontier benchmark (issue 14): a 60 Hz loop for every
# contender at several settings, interleaved in blocks of 50 frames within each load
# level (idle, one busy thread per CPU, CPUs + 3), all under 1 ns timer slack; then the
# recorded traces replayed through precise against the oracle (best fixed margin in
# hindsight). Prints the tables and rewrites the "frontier" section of
# docs/BENCHMARKS.md with the numbers and the verdict on each of the issue's targets.
#
#   scripts/bench-frontier.sh                         # the benchmark (about 16 min)
#   FRAMES=100 LOADS=0 scripts/bench-frontier.sh      # a quicker look (numbers too few for p99.9)
#   DOC=/tmp/b.md FRAMES=10 LOADS=0 scripts/bench-frontier.sh   # smoke test, docs untouched
set -euo pipefail
cd "$(dirname "$0")/.."
FRAMES=${FRAMES:-1000}
cpus=$(nproc)
LOADS=${LOADS:-0,$cpus,$((cpus + 3))}
DOC=${DOC:-docs/BENCHMARKS.md}
STRATEGIES=${STRATEGIES:-std-sleep,spin,sdl-precise,seed-hybrid:x=0,seed-hybrid,seed-hybrid:x=2,seed-hybrid:x=3,spin-sleep:50us,spin-sleep,spin-sleep:500us,spin-sleep:1ms,fixed-margin:50us,fixed-margin:250us,fixed-margin:500us,fixed-margin:1ms,precise:q=0.999,precise:cap=500us,precise:budget=none,precise}
cargo build --release -q -p sleeplab-cli
cargo build --release -q -p sleeplab --example frontier_replay
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
pace=(sleeplab pace --rate 60 --frames "$FRAMES" --block 50 --load "$LOADS" --strategies "$STRATEGIES" --timer-slack 1ns)
"target/release/${pace[0]}" "${pace[@]:1}" --json "$out/pace.json"
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
replay=(target/release/examples/frontier_replay crates/sleeplab/tests/traces/*.csv -s precise -s precise:q=0.999 -s precise:cap=500us -s fixed-margin:250us -s seed-hybrid)
"${replay[@]}" > "$out/replay.txt"
python3 scripts/bench_frontier_report.py "$out/pace.json" "${pace[*]}" "$load_before" "$load_after" \
    "$out/replay.txt" "${replay[*]}" "$DOC"
