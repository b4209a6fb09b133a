#!/usr/bin/env bash
# Extreme but valid (or just out of range) settings through a DEBUG build of sleeplab,
# where integer overflow panics instead of wrapping: day-long durations with a billion
# iterations, day-long budgets, 1 ns periods over a day, the largest seeds, … Each runs
# for up to 3 s, then gets Ctrl-C (and a second one 4 s later if a day-long wait is in
# progress: one Ctrl-C lets the current wait finish). Passes when nothing panics and
# every exit code is 0, 1 (a failure reported as such, e.g. every probe refused the
# request), 2 (rejected) or 130 (interrupted). "(2nd Ctrl-C)" marks a run the first
# Ctrl-C did not end within 4 s: fine during a day-long wait, a hang otherwise.
#
#   scripts/edge-overflow.sh
set -uo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli || exit 1
bin="$root/target/debug/sleeplab"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

cases=(
    "sweep --mechanisms nanosleep --durations 86400s --iterations 1000000000 --json o.json --csv o.csv"
    "sweep --mechanisms spin,yield --durations 0,1ns --iterations 1000000000 --rounds 1000 --json o.json --csv o.csv"
    "sweep --mechanisms nanosleep --durations 86400s --budget 86400s --max-iterations 1000000000 --min-iterations 1000000000 --json o.json"
    "sweep --mechanisms spin --durations 0 --budget 86400s --max-iterations 1000000000 --json o.json"
    "sweep --mechanisms spin --durations 1ns --timer-slack 86400s --iterations 3 --json o.json"
    "sweep --mechanisms precise,spin-sleep,seed-hybrid,sdl-precise,fixed-margin --durations 86400s --iterations 1 --json o.json"
    "sweep --mechanisms timerfd-interval,poll,epoll,select,futex,condvar --durations 86400s --iterations 1 --json o.json"
    "sweep --mechanisms spin --durations 1ns --iterations 5 --rounds 1000 --json-samples 18446744073709551615 --json o.json"
    "pace --rate 0.1 --frames 10000000 --json o.json --csv o.csv"
    "pace --rate 100000 --frames 10000000 --block 10000000 --json o.json --csv o.csv"
    "pace --rate 0.1 --work 9s --frames 3 --json o.json"
    "cpu --intervals 86400s --seconds 86400s --json o.json --csv o.csv"
    "cpu --intervals 1ns --seconds 86400s --json o.json --csv o.csv"
    "advise --period 1ns --tolerance 0 --seconds 86400s --json o.json"
    "advise --duration 86400s --tolerance 86400s --seconds 86400s --json o.json"
    "timers --periods 1us --seconds 3600 --threads 64 --json o.json --csv o.csv"
    "timers --periods 1ms --seconds 3600 --threads 64 --load 1024 --json o.json"
    "timers --periods 86400s --seconds 3600 --json o.json --csv o.csv"
    "timers --periods 1ms --seconds 1 --histogram-max 1000000 --histogram o.hist --json o.json"
    "short --batch 1000000 --batch-time 60s --repetitions 1000000 --json o.json --csv o.csv"
    "short --batch-time 0 --json o.json"
    "simulate --intervals 10s --periods 1..1000ms --sleeps 1000000000 --json o.json --csv o.csv"
    "simulate --intervals 1ns --periods 1ns --sleeps 1000 --json o.json --csv o.csv"
    "simulate --strategies spin --intervals 10s --periods 1ms --sleeps 2 --warmup 0 --json o.json"
    "simulate --seed 18446744073709551615 --sleeps 10 --json o.json"
    "runtimes --runtimes c --durations 86400s --count 1 --json o.json"
    "runtimes --runtimes c --durations 1ns --budget 86400s --max-count 100000000 --json o.json"
    "runtimes --runtimes c --methods timerfd-interval --period 86400s --ticks 100000000 --json o.json"
)

bad=0
for c in "${cases[@]}"; do
    rm -f o.json o.csv o.hist
    # shellcheck disable=SC2086
    "$bin" -q $c >out.txt 2>err.txt &
    pid=$!
    for _ in $(seq 30); do sleep 0.1; kill -0 "$pid" 2>/dev/null || break; done
    kill -INT "$pid" 2>/dev/null
    second=""
    for _ in $(seq 40); do sleep 0.1; kill -0 "$pid" 2>/dev/null || break; done
    if kill -0 "$pid" 2>/dev/null; then kill -INT "$pid"; second=" (2nd Ctrl-C)"; fi
    wait "$pid"
    rc=$?
    verdict=ok
    if grep -qiE "panicked|attempt to .* with overflow" err.txt || ! [[ $rc =~ ^(0|1|2|130)$ ]]; then
        verdict=FAIL
        bad=$((bad + 1))
    fi
    printf '%-4s exit %3s%-15s %s\n' "$verdict" "$rc" "$second" "$c"
    [ "$verdict" = ok ] || sed 's/^/     /' err.txt | head -5
    if [ "$rc" = 1 ] || [ "$rc" = 2 ]; then sed 's/^/     /' err.txt | head -1; fi
done
echo "${#cases[@]} extreme invocations, $bad failed"
[ "$bad" -eq 0 ]
