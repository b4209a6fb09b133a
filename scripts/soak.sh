#!/usr/bin/env bash
# Soak: one long `sleeplab sweep` of cheap waits (≥ 10^7 samples in ~10 minutes) while
# its resident memory and open file descriptors are sampled from /proc every few
# seconds. Prints peak RSS, RSS at 1 minute vs at the end (bounded memory: at most
# 100 000 raw samples per cell plus an HDR histogram), and the fd count at the start vs
# the end (no leak: `timerfd` creates and closes one fd per call, `timerfd-reuse`,
# `epoll-pwait2` and the poll family keep one).
#
#   scripts/soak.sh              # ~600 s
#   scripts/soak.sh 120          # ~2 minutes (fewer samples)
#   SOAK_DIR=/tmp/soak scripts/soak.sh
#
# The iteration count is calibrated first (a 20 000-sample pass over the same cells) so
# the sweep lasts about SECONDS on this machine, whatever its load. Exit 1 when fewer
# than 10^7 samples were taken, the fd count grew, the sweep failed, or the RSS at the
# end exceeds the RSS at 1 minute by more than 50 % (a leak would grow with samples).
#
#   scripts/soak.sh monitor [SECONDS]   # `sleeplab monitor` instead (see soak_monitor;
#                                       # SECONDS defaults to $SOAK_SECONDS, else 600)
set -euo pipefail

# `sleeplab monitor` for SECONDS (default 600, or $SOAK_SECONDS) at a fast pace (a burst
# every 50 ms), scraped every second, RSS and fds sampled from /proc; then SIGTERM.
# "Start" is the sample at min(60 s, SECONDS / 4), after the warm-up (the first scrapes,
# tiny_http's first connection threads). Prints RSS and fds at start and end; exit 1
# when it did not exit 0 after SIGTERM, a scrape failed, the fds at the end exceed those
# at start by more than 2 (a scrape's connection may still be closing), or the RSS at
# the end exceeds the RSS at start by more than 20 %.
#
#   scripts/soak.sh monitor               # 10 minutes
#   SOAK_SECONDS=20 scripts/soak.sh monitor
soak_monitor() {
    local seconds="$1" root out bin pid port t rss fds rc
    root="$(cd "$(dirname "$0")/.." && pwd)"
    out="${SOAK_DIR:-$root/target/soak}"
    mkdir -p "$out"
    cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli
    bin="$root/target/release/sleeplab"
    "$bin" monitor --listen 127.0.0.1:0 --interval 50ms 2>"$out/monitor.err" &
    pid=$!
    for _ in $(seq 50); do grep -q http:// "$out/monitor.err" && break; sleep 0.1; done
    port=$(sed -n 's|.*http://127.0.0.1:\([0-9]*\)/.*|\1|p' "$out/monitor.err" | head -1)
    echo -e "t_s\trss_kb\tfds" >"$out/monitor-proc.tsv"
    for ((t = 0; t < seconds; t++)); do
        curl -sf "http://127.0.0.1:$port/metrics" -o /dev/null || { echo "scrape $t failed"; kill "$pid"; exit 1; }
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status")
        fds=$(ls "/proc/$pid/fd" | wc -l)
        echo -e "$t\t$rss\t$fds" >>"$out/monitor-proc.tsv"
        sleep 1
    done
    kill -TERM "$pid"
    rc=0
    wait "$pid" || rc=$?
    [ "$rc" = 0 ] || { echo "FAIL: the monitor exited $rc after SIGTERM"; exit 1; }
    python3 - "$out/monitor-proc.tsv" "$seconds" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1]), delimiter="\t"))
start = rows[min(min(60, int(sys.argv[2]) // 4), len(rows) - 1)]
end = rows[-1]
peak = max(int(r["rss_kb"]) for r in rows)
print(f"monitor soak, {len(rows)} s, {len(rows)} scrapes: "
      f"RSS {start['rss_kb']} kB at {start['t_s']} s (start), {end['rss_kb']} kB at {end['t_s']} s (end), peak {peak} kB; "
      f"fds {start['fds']} (start) -> {end['fds']} (end)")
ok = int(end["rss_kb"]) <= 1.2 * int(start["rss_kb"]) and int(end["fds"]) <= int(start["fds"]) + 2
print("flat: pass" if ok else "FAIL: RSS grew by more than 20 % or fds by more than 2")
sys.exit(0 if ok else 1)
PY
}

if [ "${1:-}" = monitor ]; then
    soak_monitor "${2:-${SOAK_SECONDS:-600}}"
    exit $?
fi

seconds="${1:-600}"
root="$(cd "$(dirname "$0")/.." && pwd)"
out="${SOAK_DIR:-$root/target/soak}"
interval=2
mkdir -p "$out"

cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli
bin="$root/target/release/sleeplab"

# Cheap waits (a few hundred ns) and ~30 µs ones (1 ns requests that really arm a timer
# at 1 ns slack): 10 cells.
mechs="spin,select,pselect,ppoll,epoll-pwait2,timerfd,timerfd-reuse"
common=(sweep -q --mechanisms "$mechs" --durations 0,1ns --timer-slack 1ns --rounds 10
        --warmup 3 --json-samples 100)

cal_n=20000
t0=$(date +%s.%N)
"$bin" "${common[@]}" --iterations "$cal_n" --json "$out/calibration.json" >/dev/null
t1=$(date +%s.%N)
iters=$(python3 -c "
t = $t1 - $t0
n = int($cal_n * $seconds / max(t, 0.1))
print(max(min(n, 1_000_000_000), $cal_n))")
echo "calibration: $cal_n samples per cell in $(python3 -c "print(f'{$t1 - $t0:.1f}')") s -> --iterations $iters for ~${seconds} s"

"$bin" "${common[@]}" --iterations "$iters" --json "$out/soak.json" --csv "$out/soak.csv" \
    >"$out/soak.txt" 2>"$out/soak.err" &
pid=$!
start=$(date +%s.%N)
echo -e "t_s\trss_kb\thwm_kb\tfds\tthreads" >"$out/proc.tsv"
while kill -0 "$pid" 2>/dev/null; do
    if [ -r "/proc/$pid/status" ]; then
        rss=$(awk '/^VmRSS:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        hwm=$(awk '/^VmHWM:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        thr=$(awk '/^Threads:/ {print $2}' "/proc/$pid/status" 2>/dev/null || true)
        fds=$(ls "/proc/$pid/fd" 2>/dev/null | wc -l)
        now=$(date +%s.%N)
        if [ -n "$rss" ] && [ "$fds" -gt 0 ]; then
            echo -e "$(python3 -c "print(f'{$now - $start:.1f}')")\t$rss\t$hwm\t$fds\t$thr" >>"$out/proc.tsv"
        fi
    fi
    sleep "$interval"
done
set +e
wait "$pid"
rc=$?
set -e
end=$(date +%s.%N)

python3 - "$out" "$rc" "$start" "$end" <<'EOF'
import csv, json, sys
out, rc, start, end = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), float(sys.argv[4])
rows = list(csv.DictReader(open(f"{out}/proc.tsv"), delimiter="\t"))
rows = [{k: float(v) for k, v in r.items()} for r in rows]
ok = rc == 0
print(f"sweep exit code {rc}, {end - start:.0f} s wall")
if rc == 0:
    res = json.load(open(f"{out}/soak.json"))
    cells = res["data"]["cells"]
    total = sum(c["summary"]["count"] for c in cells)
    early = sum(c["summary"]["early_count"] for c in cells)
    print(f"samples: {total:,} in {len(cells)} cells ({total / (end - start):,.0f}/s), early returns: {early}")
    if total < 10**7:
        print("FAIL: fewer than 10^7 samples")
        ok = False
    csv_rows = sum(1 for _ in open(f"{out}/soak.csv")) - 1
    print(f"CSV rows (raw samples kept, at most 100 000 per cell + warm-ups): {csv_rows:,}")
if rows:
    # The waiters open their fds when the sweep starts: "start" is the first sample
    # after 4 s. One or two more at the end are a sample racing a fresh timerfd or
    # the JSON/CSV being written; a leak would add one per call (millions).
    first = next((r for r in rows if r["t_s"] >= 4), rows[0])
    last = rows[-1]
    at_1min = min(rows, key=lambda r: abs(r["t_s"] - 60))
    peak = max(r["hwm_kb"] for r in rows)
    print(f"RSS: {first['rss_kb'] / 1024:.1f} MiB at {first['t_s']:.0f} s, "
          f"{at_1min['rss_kb'] / 1024:.1f} MiB at {at_1min['t_s']:.0f} s, "
          f"{last['rss_kb'] / 1024:.1f} MiB at {last['t_s']:.0f} s (end); peak (VmHWM) {peak / 1024:.1f} MiB")
    print(f"fds: {first['fds']:.0f} at start, {last['fds']:.0f} at end "
          f"(min {min(r['fds'] for r in rows):.0f}, max {max(r['fds'] for r in rows):.0f}); "
          f"threads {first['threads']:.0f} -> {last['threads']:.0f}; {len(rows)} samples every few s")
    if last["fds"] > first["fds"] + 2:
        print("FAIL: the fd count grew")
        ok = False
    if end - start > 90 and last["rss_kb"] > 1.5 * at_1min["rss_kb"]:
        print("FAIL: RSS grew by more than 50 % after the first minute")
        ok = False
print(f"files: {out}/proc.tsv, soak.json, soak.csv")
sys.exit(0 if ok else 1)
EOF
