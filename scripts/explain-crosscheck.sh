#!/usr/bin/env bash
# The run queue's cross-check: does `sleeplab explain`'s run-queue wait agree with an
# independent tool's on the same run? `perf sched record` (Debian's linux-perf,
# installed here if missing) records the scheduler's tracepoints system-wide with
# CLOCK_MONOTONIC timestamps (`-k CLOCK_MONOTONIC`, the clock explain's tracer and its
# per-wake deadline_ns/end_ns use) while explain runs; `perf sched timehist` then gives
# each switch-in of the measuring thread its "sch delay" (wakeup → on CPU), which
# scripts/explain_crosscheck.py matches to explain's wakes and compares with their
# idle_wakeup + run_queue, per wake (within 2 µs: timehist prints µs) and in
# distribution (p50/p90/p99); and the run queue alone, explain's rule "another task held
# the CPU" against perf's own switches on that CPU (`perf script --ns`: to the ns, where
# timehist's lines are truncated to µs at both ends of each run), from each wake-up to
# the thread's switch-in. Prints the table and writes it into the
# `explain-crosscheck` section of docs/BENCHMARKS.md. As root; run it on a quiet
# machine, never beside compilers (about 30 s with the defaults).
#
#   scripts/explain-crosscheck.sh
#   ITERATIONS=2000 LOADS=0,2 MECHANISMS=nanosleep,timerfd,epoll scripts/explain-crosscheck.sh
#   ITERATIONS=80 ROUNDS=8 BENCH_DOC=/tmp/b.md scripts/explain-crosscheck.sh   # smoke run
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/explain-crosscheck.sh scripts/explain_crosscheck.py scripts/bench_doc.py scripts/quantiles.py crates/sleeplab-account/src crates/sleeplab-cli/src/experiments/explain crates/sleeplab-capture"
ITERATIONS=${ITERATIONS:-1000}
ROUNDS=${ROUNDS:-10}
MECHANISMS=${MECHANISMS:-nanosleep,timerfd}
DURATIONS=${DURATIONS:-1ms}
LOADS=${LOADS:-0,$(nproc)}
# The measuring thread on CPU 0: the kernels here record nothing CPU 1's idle task emits.
PIN=${PIN:-0}

need_root "perf sched record, and explain's tracer"
if ! perf version >/dev/null 2>&1; then
    apt-get install -y -qq linux-perf >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq linux-perf >/dev/null; }
fi
cargo build --release -q -p sleeplab-cli --bin sleeplab
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

explain=(explain -q --pin "$PIN" --mechanisms "$MECHANISMS" --durations "$DURATIONS" --load "$LOADS"
    --iterations "$ITERATIONS" --rounds "$ROUNDS")
record=(perf sched record -k CLOCK_MONOTONIC -o "$work/perf.data")
"${record[@]}" -- target/release/sleeplab "${explain[@]}" --csv "$work/explain.csv" \
    >"$work/explain.txt" 2>"$work/record.err" ||
    { cat "$work/record.err" "$work/explain.txt" >&2; exit 1; }
perf sched timehist -i "$work/perf.data" >"$work/timehist.txt" 2>"$work/timehist.err" ||
    { cat "$work/timehist.err" >&2; exit 1; }
perf script -i "$work/perf.data" --ns -F cpu,tid,time,event,trace >"$work/switches.txt" \
    2>"$work/script.err" || { cat "$work/script.err" >&2; exit 1; }
# What perf says about the recording: its sample count, and any events it lost.
notes=$( (grep -ohE "[0-9]+ samples" "$work/record.err"; grep -hi "lost" "$work/record.err" "$work/timehist.err") |
    paste -sd ';' - | sed 's/;/; /g' || true)

command="scripts/explain-crosscheck.sh   # runs: ${record[*]:0:5} -- sleeplab ${explain[*]}; perf sched timehist; perf script --ns"
python3 scripts/explain_crosscheck.py "$work/explain.csv" "$work/timehist.txt" \
    "$work/switches.txt" "$command" "$notes" >"$work/section.md"
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(perf version).

$(cat "$work/section.md")"
echo "$body"
python3 scripts/bench_doc.py "$DOC" explain-crosscheck <<<"$body"
