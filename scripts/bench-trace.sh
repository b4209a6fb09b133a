#!/usr/bin/env bash
# Issue 24's cost of the tracer (sleeplab_cli::trace::Tracer, behind `explain` and
# `--trace`): the `trace_cost` example (crates/sleeplab-cli/examples/trace_cost/)
# runs ROUNDS rounds of {untraced block, traced block} of WAITS waits each (the pair's
# order alternating by round) on a 1 kHz absolute clock_nanosleep grid and a 1 ms
# nanosleep, and reports per loop the median lateness of each side with its 95 %
# interval (order statistics), the difference traced − untraced (target ≤ 2 µs), and the
# CPU the tracing takes: the whole machine's busy time per second from /proc/stat,
# traced − untraced (target ≤ 1 % of a core at 1 kHz), and the measuring process's own.
# Prints the tables and writes them into the `trace-cost` section of docs/BENCHMARKS.md.
# As root; run it on a quiet machine, never beside compilers (about 85 s by default:
# 10 × 2 × 2 blocks of 2 s).
#
#   scripts/bench-trace.sh
#   ROUNDS=20 WAITS=5000 scripts/bench-trace.sh
#   ROUNDS=2 WAITS=50 BENCH_DOC=/tmp/b.md scripts/bench-trace.sh   # smoke run
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-10}
WAITS=${WAITS:-2000}
DOC=${BENCH_DOC:-docs/BENCHMARKS.md}

if [ "$(id -u)" != 0 ]; then
    echo "bench-trace: needs root (the tracer records kernel tracepoints in a tracefs instance)" >&2
    exit 2
fi
cargo build --release -q -p sleeplab-cli --example trace_cost
args=(--rounds "$ROUNDS" --waits "$WAITS" --period 1ms)
tables=$(target/release/examples/trace_cost "${args[@]}" 2>/dev/null)
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(nproc) CPUs (\`scripts/bench-trace.sh\`, which runs \`trace_cost ${args[*]}\`):

$tables"
echo "$body"
python3 scripts/bench_doc.py "$DOC" trace-cost <<<"$body"
