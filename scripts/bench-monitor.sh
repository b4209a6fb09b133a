#!/usr/bin/env bash
# The monitor's own cost and its scrape latency, for docs/BENCHMARKS.md (run on a quiet
# machine, not beside compilers):
#   1. the default `sleeplab monitor` for SECONDS (default 60): its CPU time over that
#      span (process_cpu_seconds_total, read through /metrics) as a share of one core
#      (target ≤ 0.5 %);
#      and where it went: each thread's share over the same span (/proc/PID/task/*/schedstat);
#   2. 100 concurrent scrapers on the loopback, 20 scrapes each (the scrape_load
#      example: threads, one connection per scrape): the p50/p99 of the scrape time
#      (target p99 ≤ 5 ms), while the measurements go on.
#
#   scripts/bench-monitor.sh          # 60 s
#   scripts/bench-monitor.sh 300
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli --bin sleeplab --example scrape_load
bin="$root/target/release/sleeplab"
load="$root/target/release/examples/scrape_load"
err="$(mktemp)"
"$bin" monitor --listen 127.0.0.1:0 2>"$err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$err" "$err.t0" "$err.t1"' EXIT
for _ in $(seq 50); do grep -q http:// "$err" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/metrics' "$err" | head -1)

cpu() { curl -sf "$url" | awk '$1 == "process_cpu_seconds_total" {print $2}'; }
# Skip the start-up (building the fingerprint, the first bursts).
sleep 5
# Each thread's name and run time (ns), from the scheduler's accounting.
threads() { for t in /proc/"$pid"/task/*; do echo "$(cat "$t/comm") $(cut -d' ' -f1 "$t/schedstat")"; done; }
c0=$(cpu); t0=$(date +%s.%N); threads >"$err.t0"
sleep "$seconds"
c1=$(cpu); t1=$(date +%s.%N); threads >"$err.t1"
python3 -c "print(f'monitor CPU: {100 * ($c1 - $c0) / ($t1 - $t0):.3f} % of one core over {$t1 - $t0:.0f} s (target <= 0.5 %)')"
python3 - "$err.t0" "$err.t1" "$t0" "$t1" <<'PY'
import sys, collections
def read(p):
    d = collections.Counter()
    for line in open(p):
        name, ns = line.rsplit(maxsplit=1)
        d[name] += int(ns)
    return d
a, b, span = read(sys.argv[1]), read(sys.argv[2]), float(sys.argv[4]) - float(sys.argv[3])
# monitor-0.. are the cells in --mechanisms order; sleeplab is the main thread (and tiny_http's).
print("  by thread: " + ", ".join(f"{k} {100 * (b[k] - a[k]) / 1e9 / span:.3f} %" for k in sorted(b)))
PY

addr="${url#http://}"
"$load" "${addr%/metrics}" 100 20
kill -TERM "$pid"
wait "$pid"
