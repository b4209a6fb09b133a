#!/usr/bin/env bash
# Fuzzes the capture crate's decoders of kernel memory layouts (the ring-buffer page
# reader and the record decoders, by a 6.18 kernel's own formats) for SECONDS (default
# 30), seeded with pages that kernel wrote (crates/sleeplab-capture/testdata). The test
# command runs it briefly on every run; longer runs find more:
#
#   scripts/fuzz-capture.sh          # 30 s
#   scripts/fuzz-capture.sh 600      # 10 minutes
#
# Installs what it needs when missing: a nightly toolchain (minimal profile) and
# cargo-fuzz. The fuzz package (fuzz/capture) depends on sleeplab-capture alone, so it
# builds in about a minute. A crash exits 1 and leaves its input in
# fuzz/capture/artifacts/trace_pages/.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-30}"

rustup toolchain list | grep -q '^nightly' ||
    rustup toolchain install nightly --profile minimal >/dev/null 2>&1
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked -q

cd fuzz/capture
mkdir -p corpus/trace_pages logs
cp -n ../../crates/sleeplab-capture/testdata/linux-6.18/page_*.raw corpus/trace_pages/
cargo +nightly fuzz build --fuzz-dir . -O -a trace_pages >/dev/null 2>logs/build.log ||
    { cat logs/build.log; exit 1; }
if cargo +nightly fuzz run --fuzz-dir . -O -a trace_pages corpus/trace_pages -- \
    -max_total_time="$seconds" -max_len=8192 -timeout=10 -print_final_stats=1 \
    >logs/trace_pages.log 2>&1; then
    echo "fuzz-capture: trace_pages $(grep -oE 'stat::number_of_executed_units: *[0-9]+' logs/trace_pages.log | grep -oE '[0-9]+$') runs in ${seconds}s, no crash"
else
    tail -40 logs/trace_pages.log >&2
    echo "fuzz-capture: trace_pages crashed; the input is in fuzz/capture/artifacts/trace_pages/" >&2
    exit 1
fi
