#!/usr/bin/env bash
# The floor under two recorders: what recording the five tracepoints a wake's account
# cannot do without (sched_waking, sched_switch, hrtimer_start, hrtimer_expire_entry,
# sys_exit, every task's) adds to a timed wait's median lateness, when ftrace records
# them (one tracefs instance, trace clock mono, no saved comms, as the trace-cost
# section's bare side) and when BPF does (scripts/wake-recorder.bpf.c: BTF-typed raw
# tracepoints, each writing the fields the account reads into a ring buffer that
# scripts/wake-recorder.c drains every 100 ms). Whether explain's tracer could meet the
# target of adding at most 2 µs to a program's median wake (trace-cost) turns on this
# floor.
#
# REPEAT runs (3) of ROUNDS rounds (20); each round runs, per loop (an absolute
# clock_nanosleep grid of 1 ms and a 1 ms nanosleep, scripts/floor-waits.c on CPU 0),
# one block of WAITS waits (1000) per side: untraced, ftrace, BPF, their order rotating
# by round. scripts/bench_floor_report.py judges, per run and loop, the rounds' median
# of each side's block median less the untraced block's against the target, and BPF
# against ftrace, each on the interval of the rounds' median. Installs clang, libbpf-dev
# and bpftool when missing (the BPF side is built against the running kernel's BTF, for
# x86: it reads the system call's number from x86's registers).
# Writes the `floor-recorders` section of docs/BENCHMARKS.md. As root, on a quiet
# machine, never beside compilers (about 8 min by default).
#
#   scripts/bench-floor.sh
#   ROUNDS=4 WAITS=200 REPEAT=1 BENCH_DOC=/tmp/b.md scripts/bench-floor.sh   # smoke run
#   scripts/bench-floor.sh --check   # builds both sides, runs one short block of each,
#                                    # fails unless each recorded the thread's wakes
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-floor.sh scripts/bench_floor_report.py scripts/floor-waits.c scripts/wake-recorder.c scripts/wake-recorder.bpf.c scripts/quantiles.py scripts/bench_doc.py"
ROUNDS=${ROUNDS:-20}
WAITS=${WAITS:-1000}
REPEAT=${REPEAT:-3}
PERIOD_NS=1000000
EVENTS=(sched/sched_waking sched/sched_switch timer/hrtimer_start timer/hrtimer_expire_entry
    raw_syscalls/sys_exit)

case "${1:-}" in
    "" | --check) ;;
    *) echo "bench-floor: unknown argument $1 (only --check)" >&2; exit 2 ;;
esac
need_root "both recorders attach to kernel tracepoints"
[ -r /sys/kernel/btf/vmlinux ] || { echo "bench-floor: the kernel has no BTF (/sys/kernel/btf/vmlinux)" >&2; exit 1; }
missing=()
command -v clang >/dev/null || missing+=(clang)
[ -r /usr/include/bpf/libbpf.h ] || missing+=(libbpf-dev)
command -v bpftool >/dev/null || missing+=(bpftool)
if ((${#missing[@]})); then
    apt-get install -y -qq "${missing[@]}" >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get install -y -qq "${missing[@]}" >/dev/null; }
fi
tracefs=/sys/kernel/tracing
[ -d "$tracefs/instances" ] || tracefs=/sys/kernel/debug/tracing
work=$(mktemp -d)
# Named as sleeplab's own instances are (sleeplab-PID-…), so that where this script is
# killed before its trap runs, the next sleeplab tracer removes the instance it left.
instance="$tracefs/instances/sleeplab-$$-floor"
# The journal of the record-cmd change (named and written as the tracer's; field 22 of
# /proc/PID/stat is the start time that tells this script from a later owner of its pid).
run_dir=${SLEEPLAB_RUN_DIR:-/run/sleeplab}
journal="$run_dir/trace-$$-$(awk '{print $22}' /proc/$$/stat).jsonl"
cleanup() {
    # Interrupted between the record-cmd change and its undoing: undone from the journal.
    if [ -f "$journal" ]; then
        sed -n 's/.*"value":"\([^"]*\)".*/\1/p' "$journal" >"$tracefs/options/record-cmd"
        rm -f "$journal"
    fi
    [ -d "$instance" ] && { echo 0 >"$instance/tracing_on"; rmdir "$instance"; }
    rm -rf "$work"
}
trap cleanup EXIT
bpftool btf dump file /sys/kernel/btf/vmlinux format c >"$work/vmlinux.h"
clang -O2 -g -target bpf -D__TARGET_ARCH_x86 -I"$work" -c scripts/wake-recorder.bpf.c \
    -o "$work/wake-recorder.bpf.o"
cc -O2 -Wall -Wextra -o "$work/wake-recorder" scripts/wake-recorder.c -lbpf
cc -O2 -Wall -Wextra -o "$work/floor-waits" scripts/floor-waits.c

# untraced|ftrace|bpf LOOP: one block of LOOP (grid or relative); prints
# "median_ns events lost switch_ins".
untraced() { echo "$("$work/floor-waits" "$1" "$WAITS" "$PERIOD_NS") 0 0 -"; }
ftrace() {
    # Made as the tracer makes its instances: while the machine's record-cmd is off, so
    # that its events keep no saved comms (a lock all CPUs share, on every wake's way),
    # the change journaled as the tracer journals it (sleeplab_capture's instance.rs:
    # the next sleeplab run puts the option back where this script is killed between).
    local cmd option="$tracefs/options/record-cmd"
    cmd=$(cat "$option")
    mkdir -p "$run_dir"
    printf '{"path":"%s","value":"%s"}\n' "$option" "$cmd" >"$journal"
    echo 0 >"$option"
    mkdir "$instance" || { echo "$cmd" >"$option"; rm -f "$journal"; exit 1; }
    echo "$cmd" >"$option"
    rm -f "$journal"
    echo mono >"$instance/trace_clock"
    echo 0 >"$instance/options/overwrite"
    echo 1024 >"$instance/buffer_size_kb"
    for e in "${EVENTS[@]}"; do echo 1 >"$instance/events/$e/enable"; done
    echo 1 >"$instance/tracing_on"
    local median
    median=$("$work/floor-waits" "$1" "$WAITS" "$PERIOD_NS")
    echo 0 >"$instance/tracing_on"
    local entries lost ins
    entries=$(cat "$instance"/per_cpu/cpu*/stats | awk '/^entries:/ {s += $2} END {print s}')
    lost=$(cat "$instance"/per_cpu/cpu*/stats |
        awk '/^overrun:|^dropped events:/ {s += $NF} END {print s}')
    ins=$(grep -c "next_comm=floor-waits " "$instance/trace" || true)
    for e in "${EVENTS[@]}"; do echo 0 >"$instance/events/$e/enable"; done
    rmdir "$instance"
    echo "$median $entries $lost $ins"
}
bpf() {
    "$work/wake-recorder" "$work/wake-recorder.bpf.o" floor-waits >"$work/bpf.out" &
    local reader=$!
    for _ in $(seq 500); do grep -q ready "$work/bpf.out" 2>/dev/null && break; sleep 0.01; done
    grep -q ready "$work/bpf.out" || { echo "bench-floor: the BPF recorder did not start" >&2; exit 1; }
    local median
    median=$("$work/floor-waits" "$1" "$WAITS" "$PERIOD_NS")
    kill -INT "$reader"
    wait "$reader"
    read -r _ records _ dropped _ ins < <(tail -1 "$work/bpf.out")
    echo "$median $records $dropped $ins"
}

if [ "${1:-}" = --check ]; then
    WAITS=50
    for side in ftrace bpf; do
        read -r median events lost ins < <("$side" grid)
        if [ -z "$median" ] || [ "${ins:-0}" -lt $((WAITS / 2)) ] || [ "$events" -le 0 ]; then
            echo "bench-floor: the $side side recorded ${events:-no} events and ${ins:-no} of the thread's $WAITS switch-ins" >&2
            exit 1
        fi
        echo "bench-floor --check: $side recorded $events events, $ins of $WAITS switch-ins, $lost lost"
    done
    exit 0
fi
sides=(untraced ftrace bpf)
data="$work/blocks.csv"
echo "run,round,loop,side,median_ns,events,lost,switch_ins" >"$data"
stamps=()
for run in $(seq 1 "$REPEAT"); do
    stamps+=("$(date -u +%Y-%m-%dT%H:%M:%SZ)")
    for round in $(seq 1 "$ROUNDS"); do
        for loop in grid relative; do
            for k in 0 1 2; do
                side=${sides[$(((k + round) % 3))]}
                read -r median events lost ins < <("$side" "$loop")
                [ -n "$median" ] || { echo "bench-floor: the $side block failed" >&2; exit 1; }
                echo "$run,$round,$loop,$side,$median,$events,$lost,$ins" >>"$data"
            done
        done
        echo "bench-floor: run $run of $REPEAT, round $round of $ROUNDS" >&2
    done
done
command="scripts/bench-floor.sh   # ROUNDS=$ROUNDS WAITS=$WAITS REPEAT=$REPEAT: floor-waits grid|relative $WAITS $PERIOD_NS, untraced, under an ftrace instance and under wake-recorder"
body="Run $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -r), $(nproc) CPUs (runs began ${stamps[*]}).

$(python3 scripts/bench_floor_report.py "$data" "$WAITS" "$command")"
echo "$body"
python3 scripts/bench_doc.py "$DOC" floor-recorders <<<"$body"
