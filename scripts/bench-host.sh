#!/usr/bin/env bash
# The host's share of a precise sleeper's tail (the `host_share` example,
# crates/sleeplab-cli/examples/host_share/): at 60 Hz, a pause spin, a plain absolute
# sleep (margin 0), fixed margins of 300 µs and 1 ms (absolute sleep, then a pause
# spin) and the adaptive precise sleeper, each FRAMES frames per run in blocks of BLOCK,
# the blocks interleaved, each contender on a thread of its own at 1 ns timer slack;
# the noise probe spins PROBE on each CPU before and after each run. REPEAT runs; then
# scripts/bench_host_report.py judges each run over its blocks (per-block p99, the
# blocks' median and its order-statistic interval), prints the noise beside every
# verdict, says which moments (quiet or busy host) it saw, and writes the `host`
# section of docs/BENCHMARKS.md. Run it on a quiet machine, never beside compilers
# (about 6 min by default: 3 runs of 5 × 20 s of frames and the probes).
#
#   scripts/bench-host.sh
#   FRAMES=2400 REPEAT=5 scripts/bench-host.sh
#   FRAMES=100 BLOCK=50 REPEAT=1 PROBE=200ms BENCH_DOC=/tmp/b.md scripts/bench-host.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-host.sh scripts/bench_host_report.py scripts/bench_doc.py scripts/quantiles.py crates/sleeplab-cli/examples/host_share crates/sleeplab/src"
FRAMES=${FRAMES:-1200}
BLOCK=${BLOCK:-100}
REPEAT=${REPEAT:-3}
PROBE=${PROBE:-1s}

python3 scripts/bench_host_report.py --self-test >/dev/null
cargo build --release -q -p sleeplab-cli --example host_share
args=(--frames "$FRAMES" --block "$BLOCK" --probe "$PROBE")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=()
for k in $(seq 1 "$REPEAT"); do
    echo "bench-host: run $k of $REPEAT (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "${CARGO_TARGET_DIR:-target}"/release/examples/host_share "${args[@]}" >"$tmp/run$k.json" 2>/dev/null
    runs+=("$tmp/run$k.json")
done
python3 scripts/bench_host_report.py "$DOC" "host_share ${args[*]}" "${runs[@]}"
