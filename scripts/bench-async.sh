#!/usr/bin/env bash
# The async benchmark: every way to wait from async code, and the io_uring and
# futex_waitv waits beside clock_nanosleep. RUNS (3) times, in turn:
#
#  1. `sleeplab pace` at 60 Hz and at 1 kHz with the async contenders (ours, `asleep`,
#     `asleep-reactor` and the periodic `asleep-interval`; tokio's sleep_until and interval with Burst and Delay; async-io's
#     Timer; a timerfd in tokio's reactor; spin_sleep in a blocking task), `precise`, and the floor
#     `clock-nanosleep-abs` (a plain absolute sleep: one kernel wake per frame, the least
#     a wake on time costs here), interleaved in blocks (100 frames at 60 Hz, 200 at
#     1 kHz), every frame kept;
#  2. the N-task benchmark (`examples/async_tasks.rs`): TASKS (1, 100, 10 000) tasks
#     with staggered deadlines, one every millisecond for all of them together, on a
#     2-worker tokio runtime, per contender, cut into BLOCKS blocks;
#  3. `sleeplab sweep` of clock_nanosleep (relative and absolute), futex_waitv, the three
#     io_uring waits and epoll_pwait2 at 1 µs, 50 µs and 1 ms, at the default 50 µs timer
#     slack and at 1 ns, in ROUNDS interleaved rounds;
#  4. scripts/rearm-cost.c: REARM_ROUNDS (10) rounds of a 1 kHz loop on one timerfd
#     re-armed per wake for the next deadline against two alternating (REARM_WAKES wakes
#     each), what re-arming the kernel's earliest timer costs.
#
# Then scripts/bench_async_report.py writes the "async" section of docs/BENCHMARKS.md (or
# BENCH_DOC): each verdict over blocks (paired blocks of the two sides, the median of
# their ratios with its 95 % interval), per run, and how often it held over the runs.
#
#   scripts/bench-async.sh            # the benchmark (about 55 min, on a quiet machine)
#   scripts/bench-async.sh --smoke    # tiny parameters, into a temp copy of the docs
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-async.sh scripts/bench_async_report.py scripts/bench_doc.py scripts/quantiles.py scripts/rearm-cost.c crates/sleeplab/src crates/sleeplab-cli/src/experiments/pace crates/sleeplab-cli/src/experiments/sweep crates/sleeplab-cli/src/contenders crates/sleeplab-stats/src crates/sleeplab-cli/examples/async_tasks.rs"
RUNS=${RUNS:-3}
FRAMES_60=${FRAMES_60:-1000}
FRAMES_1K=${FRAMES_1K:-4000}
TASKS=${TASKS:-1 100 10000}
TASK_SECONDS=${TASK_SECONDS:-30}
BLOCKS=${BLOCKS:-20}
SWEEP_ITERATIONS=${SWEEP_ITERATIONS:-1000}
ROUNDS=${ROUNDS:-10}
REARM_ROUNDS=${REARM_ROUNDS:-10}
REARM_WAKES=${REARM_WAKES:-3000}
if [ "${1:-}" = --smoke ]; then
  RUNS=2 FRAMES_60=200 FRAMES_1K=400 TASKS="1 100" TASK_SECONDS=1 BLOCKS=2 SWEEP_ITERATIONS=40 ROUNDS=2 REARM_ROUNDS=2 REARM_WAKES=100
  if [ -z "${BENCH_DOC:-}" ]; then
    DOC=$(mktemp -d)/BENCHMARKS.md
    cp docs/BENCHMARKS.md "$DOC"
  fi
elif [ -n "${1:-}" ]; then
  echo "bench-async: unknown argument '$1' (usage: bench-async.sh [--smoke])" >&2
  exit 2
fi
STRATEGIES=asleep,asleep-reactor,asleep-interval,tokio-sleep-until,tokio-interval-burst,tokio-interval-delay,async-io-timer,tokio-timerfd,tokio-spin-sleep,precise,clock-nanosleep-abs
CONTENDERS="asleep asleep-reactor tokio-sleep-until tokio-interval-burst tokio-interval-delay async-io-timer tokio-timerfd tokio-spin-sleep"
MECHANISMS=clock-nanosleep,clock-nanosleep-abs,futex-waitv,io-uring-timeout,io-uring-timeout-abs,io-uring-wait,epoll-pwait2
cargo build --release -q -p sleeplab-cli --bin sleeplab --example async_tasks
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc -O2 -o "$out/rearm-cost" scripts/rearm-cost.c
bin=target/release/sleeplab
load_before=$(cut -d' ' -f1-3 /proc/loadavg)
pace=(pace --strategies "$STRATEGIES" --timer-slack 1ns --json-samples 10000000 -q)
sweep=(sweep --mechanisms "$MECHANISMS" --durations 1us,50us,1ms --timer-slack 50us,1ns --iterations "$SWEEP_ITERATIONS" --rounds "$ROUNDS" --json-samples 10000000 -q)
for run in $(seq 1 "$RUNS"); do
  echo "bench-async: run $run of $RUNS" >&2
  "$bin" "${pace[@]}" --rate 60 --frames "$FRAMES_60" --block 100 --json "$out/pace60-$run.json" >/dev/null
  "$bin" "${pace[@]}" --rate 1000 --frames "$FRAMES_1K" --block 200 --json "$out/pace1k-$run.json" >/dev/null
  for tasks in $TASKS; do
    for c in $CONTENDERS; do
      target/release/examples/async_tasks --contender "$c" --tasks "$tasks" \
        --seconds "$TASK_SECONDS" --blocks "$BLOCKS" >>"$out/tasks-$run.jsonl"
    done
  done
  "$bin" "${sweep[@]}" --json "$out/sweep-$run.json" >/dev/null
  for round in $(seq 1 "$REARM_ROUNDS"); do
    "$out/rearm-cost" 1 "$REARM_WAKES" >>"$out/rearm-$run.jsonl"
    "$out/rearm-cost" 2 "$REARM_WAKES" >>"$out/rearm-$run.jsonl"
  done
done
load_after=$(cut -d' ' -f1-3 /proc/loadavg)
commands="sleeplab ${pace[*]} --rate 60 --frames $FRAMES_60 --block 100
sleeplab ${pace[*]} --rate 1000 --frames $FRAMES_1K --block 200
for each contender and N in $TASKS: async_tasks --contender C --tasks N --seconds $TASK_SECONDS --blocks $BLOCKS
sleeplab ${sweep[*]}
rearm-cost 1 $REARM_WAKES; rearm-cost 2 $REARM_WAKES   # alternately, $REARM_ROUNDS rounds"
python3 scripts/bench_async_report.py "$out" "$RUNS" "$commands" "$load_before" "$load_after" "$DOC"
echo "bench-async: wrote $DOC" >&2
