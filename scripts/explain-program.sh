#!/usr/bin/env bash
# Ground truth for `sleeplab explain -- CMD` (a program's own waits): runs
# scripts/program-target.c under it, pinned to CPU 0 (the kernels here record nothing
# CPU 1's idle task emits), ROUNDS rounds of one wait of each kind with a timeout of
# WAIT_US µs and the thread's timer slack set to SLACK_NS, the program logging each
# wait's lateness from its own clock reads; scripts/explain_program.py then looks every
# one of them up among the waits explain found and compares the two latenesses, and
# writes the `explain-program` section of docs/BENCHMARKS.md. Then a second run of the
# program (HOG_ROUNDS rounds) beside a known cause: scripts/program-hog.c, a SCHED_FIFO
# thread on the same CPU spinning HOG_BURST_US µs every HOG_PERIOD_US µs and logging its
# bursts; the run-queue time explain books to it by name is checked against the bursts.
# As root (about 15 s).
#
#   scripts/explain-program.sh
#   ROUNDS=20 BENCH_DOC=/tmp/b.md scripts/explain-program.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
export BENCH_SOURCES="scripts/explain-program.sh scripts/explain_program.py scripts/bench_doc.py scripts/quantiles.py scripts/program-target.c scripts/program-hog.c crates/sleeplab-account/src crates/sleeplab-capture crates/sleeplab-cli/src/experiments/explain/program"
ROUNDS=${ROUNDS:-400}
WAIT_US=${WAIT_US:-1000}
SLACK_NS=${SLACK_NS:-50000}
PIN=${PIN:-0}
HOG_ROUNDS=${HOG_ROUNDS:-100}
HOG_PERIOD_US=${HOG_PERIOD_US:-1700}
HOG_BURST_US=${HOG_BURST_US:-300}

need_root "the kernel's tracepoints"
python3 scripts/explain_program.py --self-test >/dev/null
cargo build --release -q -p sleeplab-cli
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cc -O2 -Wall -o "$tmp/program-target" scripts/program-target.c
"${CARGO_TARGET_DIR:-target}"/release/sleeplab -q explain --json "$tmp/explain.json" -- \
    taskset -c "$PIN" "$tmp/program-target" "$ROUNDS" "$WAIT_US" "$tmp/truth.csv" "$SLACK_NS" \
    >"$tmp/explain.txt"
cat "$tmp/explain.txt"
# The hog outlives the program: 13 waits a round, each WAIT_US and its way, and 3 s more.
cc -O2 -Wall -o "$tmp/program-hog" scripts/program-hog.c
hog_seconds=$((HOG_ROUNDS * 13 * (WAIT_US + 300) / 1000000 + 3))
taskset -c "$PIN" "$tmp/program-hog" "$hog_seconds" "$HOG_PERIOD_US" "$HOG_BURST_US" \
    "$tmp/hog.csv" &
hog=$!
sleep 0.5
"${CARGO_TARGET_DIR:-target}"/release/sleeplab -q explain --json "$tmp/explain-hog.json" -- \
    taskset -c "$PIN" "$tmp/program-target" "$HOG_ROUNDS" "$WAIT_US" "$tmp/truth-hog.csv" \
    "$SLACK_NS" >"$tmp/explain-hog.txt"
wait "$hog" || { echo "explain-program: program-hog failed" >&2; exit 1; }
cat "$tmp/explain-hog.txt"
python3 scripts/explain_program.py "$DOC" \
    "scripts/explain-program.sh   # ROUNDS=$ROUNDS WAIT_US=$WAIT_US SLACK_NS=$SLACK_NS PIN=$PIN" \
    "$tmp/truth.csv" "$tmp/explain.json" "$SLACK_NS" \
    --hog "program-hog, HOG_ROUNDS=$HOG_ROUNDS HOG_PERIOD_US=$HOG_PERIOD_US HOG_BURST_US=$HOG_BURST_US" \
    "$tmp/hog.csv" "$tmp/truth-hog.csv" "$tmp/explain-hog.json"
