# The tracefs set-up the scripts that read the kernel's tracepoints as plain text share
# (explain-independent.sh, host-validate.sh), sourced after lib/bench.sh as
# `. "$(dirname "$0")/lib/tracefs.sh" || exit 2`: where tracefs is, a fresh instance of
# our own, and taking instances down again (also those of earlier runs that died without
# their trap).

# tracefs_root: sets `tracefs` to a tracefs with instances (/sys/kernel/tracing,
# mounting it there if needed, or /sys/kernel/debug/tracing), else says so and exits 1.
tracefs_root() {
    tracefs=/sys/kernel/tracing
    [ -d "$tracefs/instances" ] || mount -t tracefs nodev "$tracefs" 2>/dev/null || true
    [ -d "$tracefs/instances" ] || tracefs=/sys/kernel/debug/tracing
    if [ ! -d "$tracefs/instances" ]; then
        echo "$(basename "$0" .sh): no tracefs instances" >&2
        exit 1
    fi
}

# tracefs_new DIR BUFFER_KB: makes the instance DIR, off, on the `mono` trace clock (the
# clock of sleeplab's tracer and its CSVs), BUFFER_KB per CPU, overwrite off (a full
# buffer drops new events, and its stats say so, instead of losing old ones to a wrap).
tracefs_new() {
    mkdir "$1"
    echo 0 >"$1/tracing_on"
    echo mono >"$1/trace_clock"
    echo "$2" >"$1/buffer_size_kb"
    echo 0 >"$1/options/overwrite"
}

# tracefs_remove DIR: stops and removes the instance DIR if it is there (a reader that
# still holds one of its files keeps it busy for a moment: a few tries).
tracefs_remove() {
    [ -d "$1" ] || return 0
    echo 0 >"$1/tracing_on" 2>/dev/null || true
    echo 0 >"$1/events/enable" 2>/dev/null || true
    : >"$1/set_event_pid" 2>/dev/null || true
    for _ in 1 2 3 4 5; do rmdir "$1" 2>/dev/null && return 0; sleep 0.2; done
    echo "$(basename "$0" .sh): could not remove $1" >&2
}

# tracefs_reap PREFIX: removes the instances PREFIX<pid>* whose process is gone (runs
# that died without their trap, by SIGKILL).
tracefs_reap() {
    local old pid
    for old in "$tracefs/instances/$1"*; do
        [ -d "$old" ] || continue
        pid=${old##*/"$1"}
        pid=${pid%%[!0-9]*}
        [ -n "$pid" ] && [ -d "/proc/$pid" ] && continue
        tracefs_remove "$old"
    done
}
