#!/usr/bin/env bash
# The sleeper through every door, across moments: MOMENTS times (6), one after the other,
# each moment runs
#   - the `host_share` example (the noise probe before and after, then the precise sleeper
#     beside the fixed margins MARGINS (300 µs, 500 µs, 700 µs, 1 ms: the CPU/tail frontier
#     that says whether a third of the plain sleep's p99 can be had at 3 % of a core), a
#     plain absolute sleep and a spin), which classes the moment noisy or quiet;
#   - the doors of Rust (crates/sleeplab/examples/doors.rs, tokio's included), C
#     (crates/sleeplab-ffi/bench/doors.c) and Python (bindings/python/bench/doors.py): every
#     way into the library, used as a user would, against the plain sleep of the same
#     language, each contender on a thread of its own and timed from its first frame;
# then the moments join those kept in docs/bench-data/doors (scripts/moment_store.py: from
# a clean tree only, and only while no commit changes the code they measured), and
# scripts/bench_doors_report.py judges every kept moment and writes the `doors` section of
# docs/BENCHMARKS.md, the verdicts counted per class of moment and judged again on the
# class's blocks pooled. The host's noise changes within minutes and from machine to
# machine: each run adds moments to the others'. Run it on a quiet machine, never beside
# compilers (about 10 min a moment by default).
#
#   scripts/bench-doors.sh
#   MOMENTS=3 GAP=600 scripts/bench-doors.sh            # 10 min between moments
#   MOMENTS=0 scripts/bench-doors.sh                    # rewrite the section from the store
#   MOMENTS=1 FRAMES=100 BLOCK=10 HOST_FRAMES=100 HOST_BLOCK=10 PROBE=200ms \
#       BENCH_DOC=/tmp/b.md scripts/bench-doors.sh         # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
MOMENTS=${MOMENTS:-6}
GAP=${GAP:-0}
FRAMES=${FRAMES:-1200}
BLOCK=${BLOCK:-50}
HOST_FRAMES=${HOST_FRAMES:-1800}
HOST_BLOCK=${HOST_BLOCK:-100}
PROBE=${PROBE:-1s}
MARGINS=${MARGINS:-300us,500us,700us,1ms}
if ! [[ $MOMENTS =~ ^[0-9]+$ ]]; then
    echo "bench-doors: MOMENTS=$MOMENTS: a count (0 rewrites the section from the stored moments)" >&2
    exit 2
fi
for v in FRAMES BLOCK HOST_FRAMES HOST_BLOCK; do
    if ! [[ ${!v} =~ ^[1-9][0-9]*$ ]]; then
        echo "bench-doors: $v=${!v}: a count of at least 1" >&2
        exit 2
    fi
done
if ! [[ $GAP =~ ^[0-9]+$ ]]; then
    echo "bench-doors: GAP=$GAP: seconds, a whole number" >&2
    exit 2
fi

# What the moments measured (a stored moment counts while no commit changes these), and
# what the section also depends on (how the moments are judged and written).
MEASURED="scripts/bench-doors.sh scripts/install-c.sh crates/sleeplab/src crates/sleeplab/examples/doors.rs crates/sleeplab-ffi/src crates/sleeplab-ffi/bench/doors.c include bindings/python/src bindings/python/python bindings/python/bench/doors.py crates/sleeplab-cli/examples/host_share"
export BENCH_SOURCES="$MEASURED scripts/bench_doors_report.py scripts/bench_host_report.py scripts/bench_doc.py scripts/quantiles.py scripts/moment_store.py"
# The store lives beside the document it feeds: a smoke run into another document keeps
# its moments out of the published ones.
if [ "$DOC" = docs/BENCHMARKS.md ]; then
    STORE=docs/bench-data/doors
else
    STORE=${DOC%.md}.doors-moments
fi
report() {
    local command="scripts/bench-doors.sh   # MOMENTS=$MOMENTS GAP=$GAP FRAMES=$FRAMES BLOCK=$BLOCK HOST_FRAMES=$HOST_FRAMES HOST_BLOCK=$HOST_BLOCK PROBE=$PROBE MARGINS=$MARGINS"
    ((MOMENTS > 0)) || command="MOMENTS=0 scripts/bench-doors.sh"
    python3 scripts/bench_doors_report.py --store "$STORE" --measured-by "${MEASURED// /,}" \
        "$DOC" "$command" "$@"
}

python3 scripts/bench_doors_report.py --self-test >/dev/null
python3 scripts/moment_store.py --self-test >/dev/null
if ((MOMENTS == 0)); then
    report
    exit
fi
target=${CARGO_TARGET_DIR:-target}
cargo build --release -q -p sleeplab-cli --example host_share
cargo build --release -q -p sleeplab --features tokio --example doors
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# The C door as a user builds it: the library installed (SONAME links, pkg-config), then
# the program compiled against that install.
scripts/install-c.sh "$tmp/prefix" >/dev/null
cc -O2 -std=c11 -Wall -Wextra -o "$tmp/doors-c" crates/sleeplab-ffi/bench/doors.c \
    $(PKG_CONFIG_PATH="$tmp/prefix/lib/pkgconfig" pkg-config --cflags --libs sleeplab) -lpthread
py=$(scripts/python-env.sh)

door_args=(--frames "$FRAMES" --block "$BLOCK")
host_args=(--frames "$HOST_FRAMES" --block "$HOST_BLOCK" --probe "$PROBE" --margins "$MARGINS")
dirs=()
for k in $(seq 1 "$MOMENTS"); do
    dir=$tmp/moment-$k
    mkdir -p "$dir"
    date -u +%Y-%m-%dT%H:%M:%SZ >"$dir/when"
    echo "bench-doors: moment $k of $MOMENTS ($(date -u +%H:%M:%S), load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    "$target/release/examples/host_share" "${host_args[@]}" >"$dir/host.json" 2>"$dir/host.err" || {
        tail -n 3 "$dir/host.err" >&2
        exit 2
    }
    "$target/release/examples/doors" "${door_args[@]}" >"$dir/rust.json"
    "$tmp/doors-c" "${door_args[@]}" >"$dir/c.json"
    "$py" bindings/python/bench/doors.py "${door_args[@]}" >"$dir/python.json"
    dirs+=("$dir")
    if ((k < MOMENTS && GAP > 0)); then
        sleep "$GAP"
    fi
done
report "${dirs[@]}"
