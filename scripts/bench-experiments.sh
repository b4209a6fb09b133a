#!/usr/bin/env bash
# The three C experiments behind the benchmarks' reading, their output written verbatim
# into docs/BENCHMARKS.md (or BENCH_DOC): scripts/eevdf-lag.c (why a woken or spinning
# thread waits behind a busy one: section "eevdf-lag"), scripts/host-gaps.c (what stops a
# thread that never sleeps: "host-gaps") and scripts/wake-gaps.c (whether a thread that
# spins right after a wake from halt loses its CPU more often than one that never halted,
# and when after the wake: "wake-gaps"). Run it on a quiet machine (about 5 min).
#
#   scripts/bench-experiments.sh
#   EEVDF_RUNS=2,1 HOST_GAPS_RUNS=1,0 WAKE_GAPS_RUNS=2,0 BENCH_DOC=/tmp/b.md scripts/bench-experiments.sh   # smoke
. "$(dirname "$0")/lib/bench.sh" || exit 2
# Each run's arguments (separated by spaces or commas), runs separated by ';'.
EEVDF_RUNS=${EEVDF_RUNS:-2 12;5 12}
HOST_GAPS_RUNS=${HOST_GAPS_RUNS:-5 0;5 1}
WAKE_GAPS_RUNS=${WAKE_GAPS_RUNS:-60 0;60 1}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -Wall -Wextra -o "$out/eevdf-lag" scripts/eevdf-lag.c -lpthread
cc -O2 -Wall -Wextra -o "$out/host-gaps" scripts/host-gaps.c -lpthread
cc -O2 -Wall -Wextra -o "$out/wake-gaps" scripts/wake-gaps.c -lpthread
run_all() { # NAME TITLE PROGRAM RUNS
    local name=$1 title=$2 prog=$3 i=0 args=()
    IFS=';' read -ra runs <<<"$4"
    for r in "${runs[@]}"; do
        i=$((i + 1))
        r=${r//,/ }
        # shellcheck disable=SC2086 # each run's arguments split on purpose
        "$out/$prog" $r >"$out/$name-$i.txt"
        args+=("$out/$name-$i.txt" "/tmp/$prog $r   # cc -O2 -o /tmp/$prog scripts/$prog.c -lpthread")
    done
    # Each section's figures depend on this script and its own program (bench_doc.py
    # stamps them; scripts/doc_freshness.py says when a later commit changed one).
    BENCH_SOURCES="scripts/bench-experiments.sh scripts/bench_output_section.py scripts/$prog.c" \
        python3 scripts/bench_output_section.py "$DOC" "$name" "$title" "${args[@]}"
}
run_all eevdf-lag "scripts/eevdf-lag.c: a 60 Hz absolute sleep beside busy threads, variants interleaved" eevdf-lag "$EEVDF_RUNS"
run_all host-gaps "scripts/host-gaps.c: the gaps a pinned spinning thread sees" host-gaps "$HOST_GAPS_RUNS"
run_all wake-gaps "scripts/wake-gaps.c: spin gaps after a wake from halt against a spin that never halts, blocks interleaved" wake-gaps "$WAKE_GAPS_RUNS"
