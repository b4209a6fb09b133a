#!/usr/bin/env bash
# The monitor's own cost and its scrape latency, for docs/BENCHMARKS.md (run on a quiet
# machine, not beside compilers):
#   1. the default `sleeplab monitor` for SECONDS (default 60): its CPU time over that
#      span (process_cpu_seconds_total, read through /metrics) as a share of one core
#      (target ≤ 0.5 %);
#      and where it went: each thread's share over the same span (/proc/PID/task/*/schedstat);
#   2. 100 concurrent scrapers on the loopback, 20 scrapes each (the scrape_load
#      example: threads, each scraping without pause), while the measurements go on:
#      the p50/p99 of the scrape time (target p99 ≤ 5 ms) and its phases, with a new
#      connection per scrape, then over one keep-alive connection per scraper (as
#      Prometheus scrapes); for each, the throughput and the CPU a scrape costs the
#      client and the monitor (its threads' run time over the load / scrapes). These
#      scrapers never pause (the most the machine takes: by Little's law the mean is
#      100 / throughput); a third run paces each scraper to one scrape every 100 ms
#      (1000 scrapes/s offered, timed from when each was due).
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
# monitor-0.. are the cells in --mechanisms order; monitor-http serves; sleeplab is the main thread.
print("  by thread: " + ", ".join(f"{k} {100 * (b[k] - a[k]) / 1e9 / span:.3f} %" for k in sorted(b)))
PY

addr="${url#http://}"
run_ns() { cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {printf "%d", s}'; }
for mode in "" --keep-alive "--every 100ms"; do
  r0=$(run_ns)
  # shellcheck disable=SC2086 # mode is a list of flags
  "$load" "${addr%/metrics}" 100 20 $mode
  r1=$(run_ns)
  echo "  the monitor's CPU: $(( (r1 - r0) / 2000 / 1000 )) us per scrape"
done
kill -TERM "$pid"
wait "$pid"
