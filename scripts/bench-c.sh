#!/usr/bin/env bash
# The C benchmark: a 60 Hz loop, nanosleep vs sleeplab_sleep_ns vs sleeplab_sleep_until_ns (libsleeplab.so)
# vs a pure spin, interleaved in blocks of 60 frames (p99 lateness with n, CPU % per
# contender), REPEAT (3) times. Rewrites the "c" section of docs/BENCHMARKS.md. Run it on a
# quiet machine (about 12 min), never beside compilers. 3600 frames a contender, as the Python benchmark:
# p99 is the 36th-worst frame, which one stretch of host stalls sets less often.
#
#   scripts/bench-c.sh
#   FRAMES=6 BLOCK=3 REPEAT=2 BENCH_DOC=/tmp/b.md scripts/bench-c.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-c.sh crates/sleeplab-ffi include bindings/python/bench/report.py scripts/bench_doc.py scripts/quantiles.py crates/sleeplab/src"
FRAMES=${FRAMES:-3600}
BLOCK=${BLOCK:-60}
REPEAT=${REPEAT:-3}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
# The library as a user installs it (release build, stripped, SONAME links, pkg-config).
scripts/install-c.sh "$out/prefix"
cc -O2 -std=c11 -Wall -Wextra -o "$out/pace" crates/sleeplab-ffi/bench/pace.c \
    $(PKG_CONFIG_PATH="$out/prefix/lib/pkgconfig" pkg-config --cflags --libs sleeplab)
args=(--frames "$FRAMES" --block "$BLOCK" --rate 60)
# REPEAT runs of the whole comparison (see bench-python.sh).
files=()
for i in $(seq 1 "$REPEAT"); do
    "$out/pace" "${args[@]}" >"$out/c-$i.json"
    files+=("$out/c-$i.json")
done
python3 bindings/python/bench/report.py "$(IFS=,; echo "${files[*]}")" c \
    "scripts/bench-c.sh   # runs $REPEAT times: crates/sleeplab-ffi/bench/pace.c ${args[*]}" "$DOC"
