#!/usr/bin/env bash
# Why a precise sleeper's frame is late on this host (the `precise_why` example,
# crates/sleeplab-cli/examples/precise_why.rs): at 60 Hz, the plain absolute sleep, a
# pure spin (the floor the host's gaps leave a spinning thread), fixed margins of 300 µs
# and 500 µs, the sleeper with its defaults and three variants, each testing one
# candidate cause of its tail (`precise:q=0.998`: the quantile its margin covers;
# `precise:host=ignore`: shortening the spin when the host takes the spinning CPU;
# `precise:prior=1ms`: the cold start), FRAMES frames per lane per run in blocks of
# BLOCK, the blocks interleaved, each lane on a thread of its own at 1 ns timer slack and
# built at the start of the run; the noise probe spins PROBE on each CPU before and
# after. REPEAT runs, GAP seconds apart; then scripts/bench_precise_why.py tells each
# tail frame's cause from the sleeper's own reports and writes the `precise-why` section
# of docs/BENCHMARKS.md. Run it on a quiet machine, never beside compilers (about 5 min
# a run by default).
#
#   scripts/bench-precise-why.sh
#   REPEAT=6 GAP=300 scripts/bench-precise-why.sh
#   FRAMES=100 BLOCK=10 REPEAT=1 PROBE=200ms BENCH_DOC=/tmp/b.md scripts/bench-precise-why.sh
. "$(dirname "$0")/lib/bench.sh" || exit 2
export BENCH_SOURCES="scripts/bench-precise-why.sh scripts/bench_precise_why.py scripts/bench_host_report.py scripts/bench_doc.py scripts/quantiles.py crates/sleeplab-cli/examples/precise_why.rs crates/sleeplab-cli/examples/host_share/noise.rs crates/sleeplab/src"
FRAMES=${FRAMES:-1800}
BLOCK=${BLOCK:-100}
REPEAT=${REPEAT:-3}
GAP=${GAP:-0}
PROBE=${PROBE:-1s}
for v in FRAMES BLOCK REPEAT; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "bench-precise-why: $v=${!v}: a count of at least 1" >&2
        exit 2
    fi
done
if ! [[ $GAP =~ ^[0-9]+$ ]]; then
    echo "bench-precise-why: GAP=$GAP: seconds, a whole number" >&2
    exit 2
fi

python3 scripts/bench_precise_why.py --self-test >/dev/null
cargo build --release -q -p sleeplab-cli --example precise_why
args=(--frames "$FRAMES" --block "$BLOCK" --probe "$PROBE")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
runs=()
for k in $(seq 1 "$REPEAT"); do
    echo "bench-precise-why: run $k of $REPEAT ($(date -u +%H:%M:%S), load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "${CARGO_TARGET_DIR:-target}"/release/examples/precise_why "${args[@]}" >"$tmp/run$k.json" 2>/dev/null
    runs+=("$tmp/run$k.json")
    if ((k < REPEAT && GAP > 0)); then
        sleep "$GAP"
    fi
done
python3 scripts/bench_precise_why.py "$DOC" \
    "scripts/bench-precise-why.sh   # FRAMES=$FRAMES BLOCK=$BLOCK REPEAT=$REPEAT GAP=$GAP PROBE=$PROBE" "${runs[@]}"
