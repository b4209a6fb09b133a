#!/usr/bin/env bash
# The host component checked against an independent measurement and against steal.
# ROUNDS rounds, each in turn:
#
#  1. scripts/host-spin.c (no code shared with sleeplab) spins SPIN_SECONDS on CPU PIN
#     and writes every gap of at least 5 µs between its clock reads, while this script's
#     own tracefs instance (`hostv-<pid>`, CPU PIN only, trace clock `mono`) records the
#     guest's interrupts (irq, irq_vectors), softirqs and context switches; the CPU's
#     steal (/proc/stat) is read before and after; then the same for SPIN_SECONDS of
#     spins that follow a halt (an absolute sleep to 1 ms before each 4 ms deadline, then
#     a spin to it);
#  2. then `sleeplab explain` on the same CPU (`spin`, `precise` and `clock-nanosleep-abs`
#     at 1 ms, ITERATIONS wakes each over ROUNDS interleaved rounds, its own tracer),
#     while the same instance records the same events.
#
# Then scripts/host_validate.py reads the text traces alone (a gap's time not covered by
# a guest interrupt, softirq or switch-out is the host's): what stopped the C spins, and
# the host's share of their time, over the rounds; the steal over each continuous spin
# beside the host time found in it; explain's host per spinning wake against the text
# trace's; and what share of the sleepers' tails explain gives the host. It writes the
# `host-validate` section of docs/BENCHMARKS.md. As root; run
# it on a quiet machine, never beside compilers (about 2 min with the defaults).
#
#   scripts/host-validate.sh
#   ROUNDS=2 ITERATIONS=100 SPIN_SECONDS=0.3 BENCH_DOC=/tmp/b.md scripts/host-validate.sh  # smoke
. "$(dirname "$0")/lib/bench.sh" || exit 2
. "$(dirname "$0")/lib/tracefs.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/host-validate.sh scripts/host_validate.py scripts/host-spin.c scripts/text_trace.py scripts/explain_crosscheck.py scripts/lib/tracefs.sh scripts/bench_doc.py scripts/quantiles.py crates/sleeplab-account/src crates/sleeplab-cli/src/experiments/explain crates/sleeplab-capture"
given=$(for v in ROUNDS ITERATIONS SPIN_SECONDS PIN; do
    [ -z "${!v:-}" ] || printf '%s=%s ' "$v" "${!v}"
done)
ROUNDS=${ROUNDS:-10}
ITERATIONS=${ITERATIONS:-3000}
SPIN_SECONDS=${SPIN_SECONDS:-2}
# CPU 0: the kernels here record nothing CPU 1's idle task emits.
PIN=${PIN:-0}

need_root "a tracefs instance, and explain's tracer"
tracefs_root
python3 scripts/host_validate.py --self-test >/dev/null
cargo build --release -q -p sleeplab-cli --bin sleeplab
work=$(mktemp -d)
cc -O2 -o "$work/host-spin" scripts/host-spin.c

# Instances of earlier runs that died without their trap (SIGKILL) are taken down first.
tracefs_reap hostv-
inst="$tracefs/instances/hostv-$$"
cleanup() {
    tracefs_remove "$inst"
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tracefs_new "$inst" 65536
printf '%x\n' $((1 << PIN)) >"$inst/tracing_cpumask"
for e in irq/irq_handler_entry irq/irq_handler_exit irq/softirq_entry irq/softirq_exit sched/sched_switch; do
    echo 1 >"$inst/events/$e/enable"
done
for e in "$inst"/events/irq_vectors/*_entry "$inst"/events/irq_vectors/*_exit; do
    [ -d "$e" ] && echo 1 >"$e/enable"
done

steal() {  # the CPU's steal in USER_HZ ticks
    awk -v c="cpu$PIN" '$1==c{print $9}' /proc/stat
}
# One C spin (its arguments after SECONDS CPU, if any) into directory $1/$2: its gaps,
# the text trace of its moment, the CPU's steal over it and the trace's dropped events.
c_spin() {
    local d="$1/$2"
    shift 2
    mkdir "$d"
    : >"$inst/trace"
    local s0 s1
    s0=$(steal)
    echo 1 >"$inst/tracing_on"
    "$work/host-spin" "$SPIN_SECONDS" "$PIN" "$@" >"$d/gaps.txt"
    echo 0 >"$inst/tracing_on"
    s1=$(steal)
    cat "$inst/trace" >"$d/trace.txt"
    echo "steal_ticks $((s1 - s0))" >>"$d/gaps.txt"
    echo "dropped_events $(awk -F': *' '$1=="dropped events"{print $2}' "$inst/per_cpu/cpu$PIN/stats")" >>"$d/gaps.txt"
}
rounds=()
for r in $(seq 1 "$ROUNDS"); do
    echo "host-validate: C spins, round $r of $ROUNDS (load average: $(cut -d' ' -f1-3 /proc/loadavg))" >&2
    d="$work/round$r"
    mkdir "$d"
    c_spin "$d" spin
    c_spin "$d" after-halt 4000 1000
    rounds+=("$d")
done
# explain's own rounds, its wakes read again from the text trace of the same run.
explain=(explain -q --pin "$PIN" --mechanisms spin,precise,clock-nanosleep-abs --durations 1ms
    --load 0 --iterations "$ITERATIONS" --rounds "$ROUNDS")
echo "host-validate: sleeplab ${explain[*]}" >&2
: >"$inst/trace"
echo 1 >"$inst/tracing_on"
target/release/sleeplab "${explain[@]}" --json "$work/explain.json" >/dev/null
echo 0 >"$inst/tracing_on"
cat "$inst/trace" >"$work/explain-trace.txt"
explain_dropped=$(awk -F': *' '$1=="dropped events"{print $2}' "$inst/per_cpu/cpu$PIN/stats")
command="${given}scripts/host-validate.sh   # $ROUNDS rounds of host-spin $SPIN_SECONDS $PIN and host-spin $SPIN_SECONDS $PIN 4000 1000 (gaps ≥ 5 µs), then sleeplab ${explain[*]}; each beside a text trace of CPU $PIN's interrupts, softirqs and switches"
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(nproc) CPUs, USER_HZ $(getconf CLK_TCK).

$(python3 scripts/host_validate.py "$command" "$(getconf CLK_TCK)" "$work/explain.json" \
    "$work/explain-trace.txt" "$explain_dropped" "${rounds[@]}")"
echo "$body"
python3 scripts/bench_doc.py "$DOC" host-validate <<<"$body"
