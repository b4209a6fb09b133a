#!/usr/bin/env bash
# An independent reader of six of `sleeplab explain`'s components (slack, idle_delivery,
# timer_irq, idle_wakeup, run_queue, kernel_exit), on the same run: while explain runs,
# this script's own tracefs instances record the same tracepoints (`xcheck-<pid>`:
# timer:hrtimer_start, timer:hrtimer_expire_entry, sched:sched_waking and
# sched:sched_switch of every thread, and where the kernel has them the guest's
# interrupts and softirqs and the idle loop's states, power:cpu_idle;
# `xcheck-<pid>-sys`: raw_syscalls:sys_exit of sleeplab's threads only, by
# set_event_pid and event-fork), trace clock `mono` (the clock of explain's tracer and of
# its per-wake CSV), overwrite off. Their `trace` files, read as plain text, go with
# explain's CSV to scripts/explain_independent.py, which shares no code with sleeplab's
# tracer but shares the account's rules, re-implemented (so it catches decoding and
# bookkeeping errors, not a wrong rule), and compares each component with explain's. Prints the
# table and writes it into the `explain-independent` section of docs/BENCHMARKS.md. As
# root; run it on a quiet machine, never beside compilers (about 30 s with the defaults).
#
#   scripts/explain-independent.sh
#   ITERATIONS=80 ROUNDS=8 BENCH_DOC=/tmp/b.md scripts/explain-independent.sh   # smoke run
#   KEEP=/tmp/xcheck scripts/explain-independent.sh   # keeps the CSV, the text traces, the
#                                                     # instances' stats and the evidence
. "$(dirname "$0")/lib/bench.sh" || exit 2
. "$(dirname "$0")/lib/tracefs.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/explain-independent.sh scripts/explain_independent.py scripts/explain_crosscheck.py scripts/text_trace.py scripts/lib/tracefs.sh scripts/bench_doc.py scripts/quantiles.py crates/sleeplab-account/src crates/sleeplab-cli/src/experiments/explain crates/sleeplab-capture"
# The settings given in the environment, for the command the section names.
given=$(for v in ITERATIONS ROUNDS MECHANISMS DURATIONS LOADS PIN BUFFER_KB SYS_BUFFER_KB; do
    [ -z "${!v:-}" ] || printf '%s=%s ' "$v" "${!v}"
done)
ITERATIONS=${ITERATIONS:-1000}
ROUNDS=${ROUNDS:-10}
MECHANISMS=${MECHANISMS:-nanosleep,clock-nanosleep-abs,timerfd,futex}
DURATIONS=${DURATIONS:-100us,1ms}
LOADS=${LOADS:-0,$(nproc)}
# The measuring thread on CPU 0: the kernels here record nothing CPU 1's idle task emits,
# so a switch onto an idle CPU 1 would be missing from both readers.
PIN=${PIN:-0}
# Each CPU's buffer, KiB: the whole run stays in it (overwrite off: nothing is lost to
# a wrap; a full buffer drops new events, and the stats say so).
BUFFER_KB=${BUFFER_KB:-65536}
SYS_BUFFER_KB=${SYS_BUFFER_KB:-16384}
KEEP=${KEEP:-}

need_root "tracefs instances, and explain's tracer"
tracefs_root
tracefs_reap xcheck-
cargo build --release -q -p sleeplab-cli --bin sleeplab

work=$(mktemp -d)
sched="$tracefs/instances/xcheck-$$"
sys="$tracefs/instances/xcheck-$$-sys"
cleanup() {
    tracefs_remove "$sched"
    tracefs_remove "$sys"
    if [ -n "$KEEP" ]; then
        mkdir -p "$KEEP" && cp -r "$work"/. "$KEEP"/ && echo "explain-independent: kept $KEEP" >&2
    fi
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

setup() {  # instance, buffer KiB
    tracefs_new "$1" "$2"
    # The irq-info column (the reader tells interrupt context from it); no tgid column.
    echo 1 >"$1/options/irq-info"
    echo 0 >"$1/options/record-tgid"
}
setup "$sched" "$BUFFER_KB"
setup "$sys" "$SYS_BUFFER_KB"
# Every thread, unfiltered: a filter on sched_switch loses events on these kernels.
for e in timer/hrtimer_start timer/hrtimer_expire_entry sched/sched_waking sched/sched_switch; do
    echo 1 >"$sched/events/$e/enable"
done
# The guest's interrupts and softirqs and the idle loop's states, where the kernel has
# them: an idle CPU's timer delivery is told from the guest's work on them.
for e in irq_vectors/local_timer_entry irq_vectors/local_timer_exit irq/irq_handler_entry \
    irq/irq_handler_exit irq/softirq_entry irq/softirq_exit power/cpu_idle; do
    [ -e "$sched/events/$e/enable" ] && echo 1 >"$sched/events/$e/enable" || true
done
# sys_exit of sleeplab's threads only: the subshell that becomes sleeplab is the pid
# followed, and event-fork adds every thread it makes. (A filter instead would build
# every other process's record only to drop it.)
echo 1 >"$sys/options/event-fork"
echo 1 >"$sys/events/raw_syscalls/sys_exit/enable"

explain=(explain -q --pin "$PIN" --mechanisms "$MECHANISMS" --durations "$DURATIONS" --load "$LOADS"
    --iterations "$ITERATIONS" --rounds "$ROUNDS")
(
    echo "$BASHPID" >"$sys/set_event_pid"
    echo 1 >"$sched/tracing_on"
    echo 1 >"$sys/tracing_on"
    exec target/release/sleeplab "${explain[@]}" --csv "$work/explain.csv"
) >"$work/explain.txt" 2>"$work/explain.err" || { cat "$work/explain.err" "$work/explain.txt" >&2; exit 1; }
echo 0 >"$sched/tracing_on"
echo 0 >"$sys/tracing_on"
cat "$sched/trace" >"$work/sched.txt"
cat "$sys/trace" >"$work/sys.txt"

# What each instance says about its recording: per CPU the events in its buffer, and
# those overrun or dropped (a full buffer).
field() {  # stats file, name
    awk -F': *' -v k="$2" '$1==k{print $2}' "$1"
}
notes=""
for side in sched sys; do
    i=${!side}
    for s in "$i"/per_cpu/cpu*/stats; do
        cpu=$(basename "$(dirname "$s")")
        printf '%s %s %s\n' "$side" "$cpu" "$(tr '\n' ';' <"$s")" >>"$work/stats.txt"
        notes+="${notes:+; }$side $cpu: $(field "$s" entries) events, $(field "$s" overrun) overrun,"
        notes+=" $(field "$s" 'dropped events') dropped"
    done
done

command="${given}scripts/explain-independent.sh   # runs: sleeplab ${explain[*]}, traced meanwhile by tracefs instances xcheck-PID (timer, sched, interrupt and idle-state events, every thread) and xcheck-PID-sys (sys_exit, sleeplab's threads), read as text"
python3 scripts/explain_independent.py "$work/explain.csv" "$work/sched.txt" "$work/sys.txt" \
    "$command" "$notes" --evidence "$work/evidence.txt" >"$work/section.md"
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(nproc) CPUs.

$(cat "$work/section.md")"
echo "$body"
python3 scripts/bench_doc.py "$DOC" explain-independent <<<"$body"
