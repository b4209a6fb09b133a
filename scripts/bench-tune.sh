#!/usr/bin/env bash
# What each setting of this machine does to the same waits, and what it costs: runs
# `sleeplab tune` (as root it also tries the system-wide settings, journaled and restored)
# and writes its tables and the time it took into the `tune` section of
# docs/BENCHMARKS.md. Targets: a full run under 3 minutes, `--quick` under 40 s. Run it on
# a quiet machine, never beside compilers.
#
#   scripts/bench-tune.sh
#   QUICK=1 scripts/bench-tune.sh
#   QUICK=1 ROUNDS=3 BENCH_DOC=/tmp/b.md scripts/bench-tune.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-tune.sh crates/sleeplab-cli/src/experiments/tune crates/sleeplab-results/src/experiments/tune crates/sleeplab-results/src/setting_info.rs crates/sleeplab-cli/src/tuning crates/sleeplab-cli/src/contenders crates/sleeplab-stats/src crates/sleeplab/src/system"
args=(tune -q)
if [ -n "${QUICK:-}" ]; then args+=(--quick); fi
if [ -n "${ROUNDS:-}" ]; then args+=(--rounds "$ROUNDS"); fi
cargo build --release -q -p sleeplab-cli
t0=$(date +%s.%N)
out=$(target/release/sleeplab "${args[@]}")
t1=$(date +%s.%N)
secs=$(python3 -c "print(f'{$t1 - $t0:.0f}')")
# The target of this kind of run: a full run within 3 minutes, --quick within 40 s.
if [ -n "${QUICK:-}" ]; then target=40 kind=--quick; else target=180 kind="a full run"; fi
if [ "$secs" -le "$target" ]; then against="within"; else against="over"; fi
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(nproc) CPUs, as $( [ "$(id -u)" = 0 ] && echo root || echo a user ) (\`scripts/bench-tune.sh\`, which runs \`sleeplab ${args[*]}\`; it took ${secs} s, $against the target for $kind of at most ${target} s: one run, by point value):

\`\`\`text
$out
\`\`\`"
echo "$body"
python3 scripts/bench_doc.py "$DOC" tune <<<"$body"
