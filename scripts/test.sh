#!/usr/bin/env bash
# Runs every test of sleeplab on a fresh machine: installs what the tests need, then
# format, module-graph and lint checks, then the whole cargo test suite (unit, integration, probe
# conformance, browser test of the report, the C ABI's C programs, the ground truth of
# explain's account as root), then the Python package's tests (built as an abi3 wheel
# and installed into .venv).
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/install-deps.sh
# Every dependency is installed now: a test that finds one missing fails instead of
# skipping (each checks `CI`).
export CI=${CI:-1}
# Incremental caches only help a build that runs again; on a fresh clone they are
# gigabytes of disk a small CI machine may not have (Cargo.toml's profiles say the rest).
export CARGO_INCREMENTAL=0

cargo fmt --all -- --check
# The module graph of every crate: no cycle at any level, the layer order of
# docs/ARCHITECTURE.md (a map whose paths exist, at most 250 lines of 100 characters),
# every source file opening with its doc line, and no CLI flag named in a string below
# the command layer (experiments/, trace/, report/).
python3 scripts/module_graph.py --self-test
python3 scripts/module_graph.py
# Every generated section of the docs stamped and fresh: measured at a commit no later
# change to its declared source paths follows (docs/stale-sections.txt: the known-stale
# ones, reported without failing).
python3 scripts/bench_doc.py --self-test
python3 scripts/doc_freshness.py --self-test
python3 scripts/doc_freshness.py
cargo clippy --workspace --all-targets -- -D warnings
# The CLI without its monitor (no HTTP server, no Prometheus encoding) builds and lints clean.
cargo clippy -p sleeplab-cli --no-default-features --all-targets -- -D warnings
# ... and its absent monitor answers every bad input the table and the walk give it with
# the one line naming the feature (exit 2).
cargo test -q -p sleeplab-cli --no-default-features --test bad_input
# The API docs build warning-free: every intra-doc link resolves, none to a private item.
RUSTDOCFLAGS="-D warnings" cargo doc --workspace --no-deps
# The same for the CLI without its monitor (commands/monitor_absent.rs, no monitor/).
RUSTDOCFLAGS="-D warnings" cargo doc -p sleeplab-cli --no-deps --no-default-features
cargo test --workspace --release
# The capture crate's decoders of kernel memory layouts, fuzzed briefly.
scripts/fuzz-capture.sh 30
python3 scripts/bench_frontier_report.py --self-test
python3 scripts/quantiles.py
python3 scripts/bench_pace_report.py --self-test
python3 scripts/bench_async_report.py --self-test
python3 scripts/explain_crosscheck.py --self-test
python3 scripts/explain_independent.py --self-test
python3 scripts/explain_program.py --self-test
python3 scripts/explain_real.py --self-test
python3 scripts/explain_rate.py --self-test
python3 scripts/bench_host_report.py --self-test
python3 scripts/bench_doors_report.py --self-test
python3 scripts/moment_store.py --self-test
python3 scripts/bench_precise_why.py --self-test
python3 scripts/host_validate.py --self-test
python3 scripts/bench_floor_report.py --self-test
# The experiments behind precise's regimes and the benchmarks' noise compile warning-free.
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/eevdf-lag.c -lpthread
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/host-gaps.c -lpthread
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/wake-gaps.c -lpthread
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/host-spin.c
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/rearm-cost.c
# The recorders' floor: its timed waits, and its BPF recorder built, loaded and reading
# the waits' wakes beside the ftrace instance (as root, on a kernel with BTF).
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/floor-waits.c
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/wake-recorder.c -lbpf
if [ "$(id -u)" = 0 ] && [ -r /sys/kernel/btf/vmlinux ]; then
    scripts/bench-floor.sh --check
else
    echo "bench-floor --check: skipped (needs root and the kernel's BTF)"
fi
# The ground truth of explain for a program: its known waits, and its known cause.
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/program-target.c
cc -O2 -Wall -Wextra -Werror -o /dev/null scripts/program-hog.c
# A followed program's threads found across a wrap of the machine's pids (as root, where
# pid_max wraps within a minute; elsewhere the script says it is skipped).
scripts/explain-pid-wrap.sh
# The door benchmark's C harness, against the built library.
cc -O2 -std=c11 -Wall -Wextra -Werror -Iinclude -o /dev/null crates/sleeplab-ffi/bench/doors.c \
    -L"$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/release" -lsleeplab -lpthread

py=$(scripts/python-env.sh)
(cd bindings/python && "$py" -m pytest -q)
# What the run left on disk, for the next machine's budget.
du -sh "$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')" fuzz/capture/target 2>/dev/null || true
