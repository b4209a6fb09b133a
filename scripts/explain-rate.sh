#!/usr/bin/env bash
# A fast program followed whole: `sleeplab explain -- CMD` on scripts/floor-waits.c
# making WAITS absolute clock_nanosleep waits on a PERIOD_NS grid (10 000 a second by
# default), pinned to CPU 0 (the kernels here record nothing CPU 1's idle task emits),
# REPEAT times; scripts/explain_rate.py counts, per run, the waits explain found of those
# the program made, how they ended, the events lost and the rate kept, and judges the
# target: every wait followed with 0 events lost, or the loss reported. Writes the
# `explain-rate` section of docs/BENCHMARKS.md. As root (about 20 s by default).
#
#   scripts/explain-rate.sh
#   WAITS=2000 REPEAT=1 BENCH_DOC=/tmp/b.md scripts/explain-rate.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
export BENCH_SOURCES="scripts/explain-rate.sh scripts/explain_rate.py scripts/floor-waits.c scripts/bench_doc.py scripts/quantiles.py crates/sleeplab-account/src crates/sleeplab-capture crates/sleeplab-cli/src/experiments/explain/program"
WAITS=${WAITS:-50000}
PERIOD_NS=${PERIOD_NS:-100000}
REPEAT=${REPEAT:-3}

need_root "the kernel's tracepoints"
python3 scripts/explain_rate.py --self-test >/dev/null
cargo build --release -q -p sleeplab-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -Wextra -o "$tmp/floor-waits" scripts/floor-waits.c
runs=()
for run in $(seq 1 "$REPEAT"); do
    "${CARGO_TARGET_DIR:-target}"/release/sleeplab -q explain --json "$tmp/run-$run.json" -- \
        "$tmp/floor-waits" grid "$WAITS" "$PERIOD_NS" >"$tmp/run-$run.txt"
    runs+=("$tmp/run-$run.json")
    echo "explain-rate: run $run of $REPEAT" >&2
done
cat "$tmp/run-$REPEAT.txt"
python3 scripts/explain_rate.py "$DOC" \
    "scripts/explain-rate.sh   # WAITS=$WAITS PERIOD_NS=$PERIOD_NS REPEAT=$REPEAT" \
    "$WAITS" "${runs[@]}"
