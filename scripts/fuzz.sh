#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ one after another, each for SECONDS (default 300),
# with overflow checks on (-a: debug assertions), seeded from fuzz/seeds/<target> (the
# probe-protocol test vectors, small real result files, hand-picked durations) and a
# dictionary from fuzz/dicts/. Prints libFuzzer's final statistics per target and a
# summary line; a crash stops with exit 1 and leaves its input in fuzz/artifacts/<target>/.
#
#   scripts/fuzz.sh                 # 4 × 5 minutes
#   scripts/fuzz.sh 30              # 4 × 30 s
#   scripts/fuzz.sh 300 durations   # one target
#
# Needs a nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). Logs go to
# fuzz/logs/<target>.log; the growing corpora live in fuzz/corpus/<target>/ (not kept).
set -euo pipefail

cd "$(dirname "$0")/../fuzz"
seconds="${1:-300}"
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(durations settings result_json probe_output)
fi

mkdir -p logs
# Inputs up to this size; the largest seed (a runtimes result) is ~31 KB.
max_len=65536

cargo +nightly fuzz build -O -a >/dev/null 2>logs/build.log \
    || { cat logs/build.log; exit 1; }

status=0
for t in "${targets[@]}"; do
    mkdir -p "corpus/$t"
    cp -n seeds/"$t"/* "corpus/$t/" 2>/dev/null || true
    log="logs/$t.log"
    echo "== $t: ${seconds}s (log: fuzz/$log)"
    if cargo +nightly fuzz run -O -a "$t" "corpus/$t" -- \
        -max_total_time="$seconds" -max_len="$max_len" -dict="dicts/$t.dict" \
        -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 >"$log" 2>&1; then
        :
    else
        status=1
        echo "   CRASH: see fuzz/$log and fuzz/artifacts/$t/"
    fi
    # The last status line (executions, coverage, features, corpus) and the final stats.
    grep -E '^#[0-9]+' "$log" | tail -n 1 | sed 's/^/   /'
    grep -E 'stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$log" \
        | sed 's/^/   /'
done
exit "$status"
