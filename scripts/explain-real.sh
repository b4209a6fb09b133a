#!/usr/bin/env bash
# `sleeplab explain -- CMD` on programs no one here wrote the waits of, pinned to CPU 0
# (the kernels here record nothing CPU 1's idle task emits): python3's time.sleep,
# node's setTimeout (libuv), Go's time.Sleep (each SLEEPS sleeps of REQUEST_US µs,
# logged from the program's own CLOCK_MONOTONIC reads: scripts/real-sleep.*) and
# coreutils sleep(1), a process per sleep under sh. scripts/explain_real.py checks each
# sleep against the waits explain found and writes the `explain-real` section of
# docs/BENCHMARKS.md. A runtime that is missing is skipped, and the section says so.
# As root (about 10 s).
#
#   scripts/explain-real.sh
#   SLEEPS=20 BENCH_DOC=/tmp/b.md scripts/explain-real.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
export BENCH_SOURCES="scripts/explain-real.sh scripts/explain_real.py scripts/explain_program.py scripts/bench_doc.py scripts/quantiles.py scripts/real-sleep.go scripts/real-sleep.mjs scripts/real-sleep.py crates/sleeplab-account/src crates/sleeplab-capture crates/sleeplab-cli/src/experiments/explain/program"
SLEEPS=${SLEEPS:-200}
REQUEST_US=${REQUEST_US:-2000}
PIN=${PIN:-0}

need_root "the kernel's tracepoints"
python3 scripts/explain_real.py --self-test >/dev/null
cargo build --release -q -p sleeplab-cli
bin="${CARGO_TARGET_DIR:-target}/release/sleeplab"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# follow NAME CMD...: explain's JSON in $tmp/NAME.json, its summary on stdout.
follow() {
    local name=$1
    shift
    echo "== $name"
    "$bin" -q explain --json "$tmp/$name.json" -- taskset -c "$PIN" "$@"
}

follow python python3 scripts/real-sleep.py "$tmp/python.csv" "$SLEEPS" "$REQUEST_US"
if command -v node >/dev/null; then
    follow node node scripts/real-sleep.mjs "$tmp/node.csv" "$SLEEPS" "$REQUEST_US"
else
    echo "node is not installed" >"$tmp/node.skipped"
fi
if command -v go >/dev/null && go build -o "$tmp/real-sleep-go" scripts/real-sleep.go; then
    follow go "$tmp/real-sleep-go" "$tmp/go.csv" "$SLEEPS" "$REQUEST_US"
else
    echo "go is not installed, or the program did not build" >"$tmp/go.skipped"
fi
seconds=$(python3 -c "print($REQUEST_US / 1e6)")
follow sleep sh -c "for i in \$(seq $SLEEPS); do sleep $seconds; done"
python3 scripts/explain_real.py "$DOC" \
    "scripts/explain-real.sh   # SLEEPS=$SLEEPS REQUEST_US=$REQUEST_US PIN=$PIN" \
    "$((REQUEST_US * 1000))" "$SLEEPS" "$tmp"
