#!/usr/bin/env bash
# The monitor's own cost and its scrape latency, for docs/BENCHMARKS.md (run on a quiet
# machine, not beside compilers). Prints a table and writes it into BENCHMARKS.md's
# `monitor-cost` section:
#   1. the default `sleeplab monitor` for SECONDS (default 60): its CPU time over that
#      span (process_cpu_seconds_total, read through /metrics) as a share of one core
#      (target ≤ 0.5 %), and each thread's share (/proc/PID/task/*/schedstat);
#   2. 100 concurrent scrapers on the loopback while the measurements go on, from
#      standard load generators (one epoll thread each, so the client's own cost is
#      small), for LOAD_SECONDS (default 10) or 20000 scrapes each:
#        - `wrk -t1 -c100`: one keep-alive connection per scraper, as Prometheus
#          scrapes (the target, p99 ≤ 5 ms, is read here);
#        - `ab -c 100`: a new connection per scrape;
#      both never pause, so there are always 100 scrapes in flight and the mean is
#      100 / throughput (Little's law): the p99 is the machine's saturation throughput
#      in disguise; the monitor's CPU per scrape is printed beside it;
#   3. the `scrape_load` example pacing each of 100 scrapers to one scrape every 100 ms
#      (1000 scrapes/s offered, a new connection each, each timed from when it was due).
#
#   scripts/bench-monitor.sh          # 60 s
#   LOAD_SECONDS=30 scripts/bench-monitor.sh 300
#   LOAD_SECONDS=2 BENCH_DOC=/tmp/b.md README_DOC=/tmp/r.md scripts/bench-monitor.sh 5   # smoke run, docs untouched
set -euo pipefail
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-monitor.sh crates/sleeplab-cli/src/monitor crates/sleeplab-cli/src/commands/monitor.rs crates/sleeplab-cli/src/ticks crates/sleeplab-cli/examples/scrape_load.rs"

seconds="${1:-60}"
load_seconds="${LOAD_SECONDS:-10}"
root="$(cd "$(dirname "$0")/.." && pwd)"
if ! command -v wrk >/dev/null || ! command -v ab >/dev/null; then
  if [ "$(id -u)" != 0 ]; then
    echo "bench-monitor: needs wrk and ab: apt-get install wrk apache2-utils" >&2
    exit 2
  fi
  apt-get install -y -qq wrk apache2-utils >/dev/null 2>&1 ||
    { apt-get update -qq && apt-get install -y -qq wrk apache2-utils >/dev/null; }
fi
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli --bin sleeplab --example scrape_load
bin="$root/target/release/sleeplab"
load="$root/target/release/examples/scrape_load"
work="$(mktemp -d)"
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
"$bin" monitor --listen 127.0.0.1:0 2>"$work/err" &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 50); do grep -q http:// "$work/err" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/metrics' "$work/err" | head -1)

cpu() { curl -sf "$url" | awk '$1 == "process_cpu_seconds_total" {print $2}'; }
# Each thread's name and run time (ns), from the scheduler's accounting.
threads() { for t in /proc/"$pid"/task/*; do echo "$(cat "$t/comm") $(cut -d' ' -f1 "$t/schedstat")"; done; }
# The monitor's whole run time (ns), all threads.
run_ns() { cat /proc/"$pid"/task/*/schedstat | awk '{s += $1} END {printf "%.0f", s}'; }

# Skip the start-up (building the fingerprint, the first bursts).
sleep 5
c0=$(cpu); t0=$(date +%s.%N); threads >"$work/t0"
sleep "$seconds"
c1=$(cpu); t1=$(date +%s.%N); threads >"$work/t1"
echo "$c0 $c1 $t0 $t1" >"$work/cpu"

addr="${url#http://}"
addr="${addr%/metrics}"
r0=$(run_ns); wrk -t1 -c100 -d"${load_seconds}s" --latency "$url" >"$work/wrk"; r1=$(run_ns)
echo "$((r1 - r0))" >"$work/wrk.ns"
r0=$(run_ns); ab -q -c 100 -n 20000 -e "$work/ab.csv" "$url" >"$work/ab"; r1=$(run_ns)
echo "$((r1 - r0))" >"$work/ab.ns"
"$load" "$addr" 100 20 --every 100ms >"$work/paced"
kill -TERM "$pid"
wait "$pid"

python3 - "$work" "$seconds" "$load_seconds" "$started" "$root" "${BENCH_DOC:-$root/docs/BENCHMARKS.md}" "${README_DOC:-$root/README.md}" <<'PY'
import collections, re, sys

work, seconds, load_seconds, started, root, doc, readme = sys.argv[1:8]
sys.path.insert(0, f"{root}/scripts")
from bench_doc import markers, write_section

def ms(s):
    return f"{s * 1e3:.2f} ms"

c0, c1, t0, t1 = map(float, open(f"{work}/cpu").read().split())
span = t1 - t0
cpu_pct = 100 * (c1 - c0) / span

def threads(path):
    d = collections.Counter()
    for line in open(path):
        name, ns = line.rsplit(maxsplit=1)
        d[name] += int(ns)
    return d
a, b = threads(f"{work}/t0"), threads(f"{work}/t1")
# monitor-0.. are the cells in --mechanisms order; monitor-http serves; sleeplab is the main thread.
by_thread = ", ".join(f"{k} {100 * (b[k] - a[k]) / 1e9 / span:.3f} %" for k in sorted(b))

def count(pattern, text):
    """The sum of every number `pattern` captures in `text` (0 where it is absent)."""
    return sum(int(x) for m in re.findall(pattern, text) for x in ((m,) if isinstance(m, str) else m))
# wrk: "     99%    3.02ms" (us, ms or s), "305674 requests in 5.00s", errors if any.
wrk = open(f"{work}/wrk").read()
scale = {"us": 1e-6, "ms": 1e-3, "s": 1.0}
def wrk_q(p):
    m = re.search(rf"^\s+{p}%\s+([\d.]+)(us|ms|s)$", wrk, re.M)
    return float(m.group(1)) * scale[m.group(2)]
m = re.search(r"(\d+) requests in ([\d.]+)s", wrk)
wrk_n, wrk_wall = int(m.group(1)), float(m.group(2))
wrk_bad = count(r"Non-2xx or 3xx responses: (\d+)", wrk)
wrk_bad += count(r"(?:connect|read|write|timeout) (\d+)", wrk)
wrk_cpu = int(open(f"{work}/wrk.ns").read()) / wrk_n

# ab: the percentiles from its CSV (ms); a "Length" failure is only a body whose size
# differs from the first one's (the counters grow), not an error.
ab = open(f"{work}/ab").read()
pct = dict(line.split(",") for line in open(f"{work}/ab.csv").read().splitlines()[1:])
ab_q = lambda p: float(pct[str(p)]) * 1e-3
ab_n = int(re.search(r"Complete requests:\s+(\d+)", ab).group(1))
ab_rate = float(re.search(r"Requests per second:\s+([\d.]+)", ab).group(1))
ab_bad = count(r"\(Connect: (\d+), Receive: (\d+), Length: \d+, Exceptions: (\d+)\)", ab)
ab_bad += count(r"Non-2xx responses:\s+(\d+)", ab)
ab_cpu = int(open(f"{work}/ab.ns").read()) / ab_n

paced = open(f"{work}/paced").read()
m = re.search(r"answered (\d+) of (\d+), p50 (\S+ \S+), p99 (\S+ \S+)", paced)
paced_n, paced_of, paced_p50, paced_p99 = m.groups()
paced_ok = paced_n == paced_of and paced_p99.endswith(" ms") and float(paced_p99.split()[0]) <= 5.0

ok = lambda good: "✅" if good else "❌"
rows = [
    ("CPU of the default monitor over %.0f s" % span,
     f"{cpu_pct:.3f} % of one core", f"≤ 0.5 % {ok(cpu_pct <= 0.5)}"),
    (f"scrape time, 100 concurrent scrapers never pausing, one keep-alive connection each "
     f"(`wrk -t1 -c100`, as Prometheus scrapes; n = {wrk_n}, {wrk_n / wrk_wall:.0f} scrapes/s, "
     f"{wrk_bad} errors; the monitor's CPU {wrk_cpu / 1e3:.1f} µs per scrape)",
     f"p50 {ms(wrk_q(50))}, p99 {ms(wrk_q(99))}", f"p99 ≤ 5 ms {ok(wrk_q(99) <= 5e-3 and wrk_bad == 0)}"),
    (f"the same, a new connection per scrape (`ab -c 100`; n = {ab_n}, {ab_rate:.0f} scrapes/s, "
     f"{ab_bad} errors; the monitor's CPU {ab_cpu / 1e3:.1f} µs per scrape)",
     f"p50 {ms(ab_q(50))}, p99 {ms(ab_q(99))}", "(saturation: see below)"),
    (f"100 concurrent scrapers, each scraping every 100 ms on a new connection "
     f"(`scrape_load`, 1000 scrapes/s offered; {paced_n} of {paced_of} answered)",
     f"p50 {paced_p50}, p99 {paced_p99}", f"p99 ≤ 5 ms {ok(paced_ok)}"),
]
table = ["| what | measured | target |", "|---|---:|---:|"]
table += [f"| {w} | {m} | {t} |" for w, m, t in rows]
text = "\n".join(table) + f"\n\nBy thread over the {span:.0f} s: {by_thread}.\n"
print(text)
begin, end = markers("monitor-cost")
write_section(
    doc,
    "monitor-cost",
    f"{begin}\nRun {started} (`"
    + (f"LOAD_SECONDS={load_seconds} " if load_seconds != "10" else "")
    + f"scripts/bench-monitor.sh {seconds}`):\n\n{text}{end}",
)
# The README's summary of the same run (inline, in its monitor paragraph).
begin, end = markers("readme-monitor")
write_section(
    readme,
    "readme-monitor",
    f"{begin}{cpu_pct:.2f} % of a core over {span:.0f} s and a scrape p99 of {ms(wrk_q(99))} over "
    f"keep-alive connections (`wrk`'s percentile), measured {started[:10]}{end}",
)
print(f"written into {doc} and {readme}")
PY
