#!/usr/bin/env bash
# The README's table of the precise sleeper's options: every setting replayed over the
# recorded 60 Hz traces (crates/sleeplab/tests/traces/) in virtual time by the
# `frontier_replay` example, against the oracle (the best fixed margin in hindsight) at
# the same CPU. Deterministic (the numbers depend only on the traces and the code), so it
# may run anywhere; rewrites the "options" section of README.md (or README_DOC).
#
#   scripts/bench-options.sh
#   README_DOC=/tmp/r.md scripts/bench-options.sh   # smoke run, README untouched
set -euo pipefail
cd "$(dirname "$0")/.."
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-options.sh scripts/bench_options_report.py crates/sleeplab/src/precise crates/sleeplab/src/lab crates/sleeplab/examples/frontier_replay.rs crates/sleeplab/tests/traces"
DOC=${README_DOC:-README.md}
cargo build --release -q -p sleeplab --example frontier_replay
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
settings=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import bench_options_report as b; print(" ".join("-s " + s for s, _ in b.SETTINGS))')
replay=(target/release/examples/frontier_replay crates/sleeplab/tests/traces/*.csv $settings)
"${replay[@]}" > "$out/replay.txt"
python3 scripts/bench_options_report.py "$out/replay.txt" "${replay[*]}" "$DOC"
