#!/usr/bin/env bash
# The question "on an idle VM, what makes the tail: the timer interrupt, the run
# queue, or something else?", answered by `sleeplab explain` itself: the default
# mechanisms at 1 ms and 100 µs, idle and with one busy thread per CPU, interleaved
# rounds, each wake split by the kernel's tracepoints. Prints the full components table (`--wide`) and
# the `why-late` sentences (each names the typical wake's and the tail's biggest parts,
# checked against the numbers) and writes them into the `explain-tail` section of
# docs/BENCHMARKS.md. As root; run it on a quiet machine, never beside compilers (about
# 60 s by default).
#
#   scripts/bench-explain.sh
#   ITERATIONS=5000 ROUNDS=5 scripts/bench-explain.sh
#   ITERATIONS=100 ROUNDS=1 BENCH_DOC=/tmp/b.md scripts/bench-explain.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-explain.sh crates/sleeplab-account/src crates/sleeplab-cli/src/experiments/explain crates/sleeplab-capture crates/sleeplab/src"
ITERATIONS=${ITERATIONS:-1000}
ROUNDS=${ROUNDS:-10}
DURATIONS=${DURATIONS:-100us,1ms}
LOADS=${LOADS:-0,$(nproc)}
# CPU 0: the kernels here record nothing CPU 1's idle task emits (a thread's switch onto
# an idle CPU 1 is lost, and its wakes there come out partly unexplained).
PIN=${PIN:-0}

need_root "the kernel's tracepoints"
cargo build --release -q -p sleeplab-cli
args=(explain --durations "$DURATIONS" --load "$LOADS" --iterations "$ITERATIONS" --rounds "$ROUNDS" --pin "$PIN" --wide -q)
out=$(target/release/sleeplab "${args[@]}")
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(nproc) CPUs (\`scripts/bench-explain.sh\`, which runs \`sleeplab ${args[*]}\`):

\`\`\`text
$out
\`\`\`"
echo "$body"
python3 scripts/bench_doc.py "$DOC" explain-tail <<<"$body"
