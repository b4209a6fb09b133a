#!/usr/bin/env bash
# Fuzzes the capture crate's readers of bytes it did not write itself, SECONDS each
# (default 30): the decoders of kernel memory layouts (the ring-buffer page reader and
# the record decoders, by a 6.18 kernel's own formats; target trace_pages, seeded with
# pages that kernel wrote) and the saved trace's reader (target saved_trace, seeded with
# traces `sleeplab explain --save` wrote; crates/sleeplab-capture/testdata). The test
# command runs them briefly on every run; longer runs find more:
#
#   scripts/fuzz-capture.sh          # 30 s
#   scripts/fuzz-capture.sh 600      # 10 minutes
#
# Installs what it needs when missing: a nightly toolchain (minimal profile) and
# cargo-fuzz. The fuzz package (fuzz/capture) depends on sleeplab-capture alone, so it
# builds in about a minute. A crash exits 1 and leaves its input in
# fuzz/capture/artifacts/TARGET/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"

rustup toolchain list | grep -q '^nightly' ||
    rustup toolchain install nightly --profile minimal >/dev/null 2>&1
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked -q

cd fuzz/capture
mkdir -p corpus/trace_pages corpus/saved_trace logs
cp -n ../../crates/sleeplab-capture/testdata/linux-6.18/page_*.raw corpus/trace_pages/
cp -n ../../crates/sleeplab-capture/testdata/saved/*.sltrace corpus/saved_trace/
for target in trace_pages saved_trace; do
    cargo +nightly fuzz build --fuzz-dir . -O -a "$target" >/dev/null 2>logs/build.log ||
        { cat logs/build.log; exit 1; }
    if cargo +nightly fuzz run --fuzz-dir . -O -a "$target" "corpus/$target" -- \
        -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
        >"logs/$target.log" 2>&1; then
        echo "fuzz-capture: $target $(grep -oE 'stat::number_of_executed_units: *[0-9]+' "logs/$target.log" | grep -oE '[0-9]+$') runs in ${seconds}s, no crash"
    else
        tail -40 "logs/$target.log" >&2
        echo "fuzz-capture: $target crashed; the input is in fuzz/capture/artifacts/$target/" >&2
        exit 1
    fi
done
