#!/usr/bin/env bash
# The Python benchmark: a 60 Hz loop, time.sleep vs sleeplab.sleep vs
# sleeplab.PreciseSleeper.sleep_until vs a pure spin (the same work per frame for each),
# interleaved in blocks of 60 frames (p99 lateness with n and its 95 % interval, CPU % per
# contender), then the binding's per-call overhead against a direct Rust call; REPEAT (3)
# times; then the return-path and warm-finish experiments. Rewrites the "python",
# "python-return-path" and "python-warm-finish" sections of docs/BENCHMARKS.md (or
# BENCH_DOC). Run it on a quiet machine (about 15 min), never beside compilers.
# 3600 frames a contender: p99 is the 36th-worst frame, so one stretch of a host stall
# that recurs every sixth frame (docs/BENCHMARKS.md, scripts/host-gaps.c) sets it less
# often than at 1200 frames (the 12th-worst).
#
#   scripts/bench-python.sh
#   FRAMES=6 BLOCK=3 CALLS=1000 REPEAT=2 RETURN_N=5 WARM_FRAMES=50 BENCH_DOC=/tmp/b.md scripts/bench-python.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-python.sh bindings/python scripts/bench_output_section.py scripts/bench_doc.py scripts/quantiles.py crates/sleeplab/src"
FRAMES=${FRAMES:-3600}
BLOCK=${BLOCK:-60}
CALLS=${CALLS:-200000}
REPEAT=${REPEAT:-3}

py=$(scripts/python-env.sh)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
args=(--frames "$FRAMES" --block "$BLOCK" --rate 60 --calls "$CALLS")
# REPEAT runs of the whole comparison: the section gives the first in full, then each
# contender's p99 and CPU range across them and how often each target held.
files=()
for i in $(seq 1 "$REPEAT"); do
    "$py" bindings/python/bench/pace.py "${args[@]}" --json "$out/python-$i.json"
    files+=("$out/python-$i.json")
done
"$py" bindings/python/bench/report.py "$(IFS=,; echo "${files[*]}")" python \
    "scripts/bench-python.sh   # runs $REPEAT times: python bindings/python/bench/pace.py ${args[*]}" "$DOC"

# The two experiments the Python section's reading rests on, their output verbatim.
RETURN_N=${RETURN_N:-300}
WARM_FRAMES=${WARM_FRAMES:-3600}
"$py" bindings/python/bench/return_path.py "$RETURN_N" >"$out/return.txt"
python3 scripts/bench_output_section.py "$DOC" python-return-path \
    "The Python return path (bindings/python/bench/return_path.py: medians of N calls)" \
    "$out/return.txt" "python bindings/python/bench/return_path.py $RETURN_N"
"$py" bindings/python/bench/warm_finish.py "$WARM_FRAMES" 40 >"$out/warm.txt"
python3 scripts/bench_output_section.py "$DOC" python-warm-finish \
    "Finishing the wait in Python (bindings/python/bench/warm_finish.py: sleeplab to 40 µs before the deadline, then a Python loop)" \
    "$out/warm.txt" "python bindings/python/bench/warm_finish.py $WARM_FRAMES 40"
