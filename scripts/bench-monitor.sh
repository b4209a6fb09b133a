#!/usr/bin/env bash
# The monitor's own cost and its scrape latency, for docs/BENCHMARKS.md (run on a quiet
# machine, not beside compilers):
#   1. the default `sleeplab monitor` for SECONDS (default 60): its CPU time over that
#      span (process_cpu_seconds_total, read through /metrics) as a share of one core
#      (target ≤ 0.5 %);
#   2. 100 concurrent scrapers on the loopback, 20 scrapes each: the p50/p99 of the
#      scrape time (target p99 ≤ 5 ms), while the measurements go on.
#
#   scripts/bench-monitor.sh          # 60 s
#   scripts/bench-monitor.sh 300
set -euo pipefail

seconds="${1:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli
bin="$root/target/release/sleeplab"
err="$(mktemp)"
"$bin" monitor --listen 127.0.0.1:0 2>"$err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -f "$err"' EXIT
for _ in $(seq 50); do grep -q http:// "$err" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/metrics' "$err" | head -1)

cpu() { curl -sf "$url" | awk '$1 == "process_cpu_seconds_total" {print $2}'; }
# Skip the start-up (building the fingerprint, the first bursts).
sleep 5
c0=$(cpu); t0=$(date +%s.%N)
sleep "$seconds"
c1=$(cpu); t1=$(date +%s.%N)
python3 -c "print(f'monitor CPU: {100 * ($c1 - $c0) / ($t1 - $t0):.3f} % of one core over {$t1 - $t0:.0f} s (target <= 0.5 %)')"

python3 - "$url" <<'PY'
import sys, time, threading, urllib.request
url = sys.argv[1]
times, lock = [], threading.Lock()
def scraper():
    for _ in range(20):
        t = time.perf_counter()
        with urllib.request.urlopen(url, timeout=30) as r:
            r.read()
        with lock:
            times.append(time.perf_counter() - t)
threads = [threading.Thread(target=scraper) for _ in range(100)]
for t in threads: t.start()
for t in threads: t.join()
times.sort()
q = lambda p: times[min(len(times) - 1, int(p * len(times)))] * 1e3
print(f"scrape latency, 100 concurrent scrapers x 20: n={len(times)} p50={q(0.5):.2f} ms p99={q(0.99):.2f} ms (target p99 <= 5 ms)")
PY
kill -TERM "$pid"
wait "$pid"
