#!/usr/bin/env bash
# Does the monitor measure the 1 ms periodic wake as `sleeplab timers` does alone?
# (the monitor's agreement target; run on a quiet machine, not beside compilers)
#
#   1. `sleeplab timers --mechanisms clock-nanosleep-abs --periods 1ms --seconds SECONDS`
#      RUNS times, alone: the run-to-run spread [min, max] of its p99 lateness;
#   2. the default `sleeplab monitor` for SECONDS (after a 5 s start-up), alone: the p99
#      of its `tick:clock-nanosleep-abs@1ms` cell over that span, from the difference of
#      two scrapes of its histogram, interpolated as histogram_quantile does, and the
#      bucket (lo, hi] it falls in;
#   3. agreement when that bucket overlaps [min, max] (the timers' spread widened by the
#      histogram's resolution; the monitor exports buckets, not exact quantiles); where
#      it does not, the buckets its p99 could fall in by sampling alone (95 %) decide: a
#      60 s monitor holds 600 ticks and its p99 rests on the 6 slowest, so where those
#      buckets overlap the spread the run cannot tell (undecided), and only where they
#      do not either does the monitor disagree.
#
# Both are the same wait: the clock_nanosleep(TIMER_ABSTIME) loop on the grid t0 + k·1 ms,
# under the timer slack both inherit from this shell (checked: the script stops if they
# differ), lateness per scheduled tick (a tick a late wake swallowed counts with its own
# lateness in both). They differ in duty cycle: timers runs 1000 ticks a second without
# pause; the monitor runs a burst of 10 ticks a second beside its three other cells.
# The result goes into docs/BENCHMARKS.md between the monitor-agreement markers.
#
#   scripts/bench-monitor-agreement.sh            # 3 timers runs, 60 s each
#   scripts/bench-monitor-agreement.sh 5 120      # RUNS SECONDS
#   MONITOR_ARGS="--mechanisms tick:clock-nanosleep-abs@1ms" scripts/bench-monitor-agreement.sh
#       # the monitor with other flags (here: the tick cell alone), to tell a difference
#       # the other cells make from one the duty cycle makes
#   BENCH_DOC=/tmp/b.md scripts/bench-monitor-agreement.sh 1 3   # smoke run, docs untouched
set -euo pipefail
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-monitor-agreement.sh crates/sleeplab-cli/src/monitor crates/sleeplab-cli/src/commands/monitor.rs crates/sleeplab-cli/src/ticks crates/sleeplab-cli/src/experiments/timers crates/sleeplab/src/wait"

runs="${1:-3}"
seconds="${2:-60}"
root="$(cd "$(dirname "$0")/.." && pwd)"
cargo build --release --quiet --manifest-path "$root/Cargo.toml" -p sleeplab-cli --bin sleeplab
bin="$root/target/release/sleeplab"
work="$(mktemp -d)"
pid=""
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$work"' EXIT
started="$(date -u +%Y-%m-%dT%H:%M:%SZ)"

for i in $(seq "$runs"); do
  echo "timers run $i of $runs ($seconds s)" >&2
  "$bin" timers --mechanisms clock-nanosleep-abs --periods 1ms --seconds "$seconds" \
    --json "$work/timers-$i.json" -q >/dev/null
done

echo "monitor ($seconds s after a 5 s start-up)" >&2
# shellcheck disable=SC2086 # MONITOR_ARGS is a list of flags
"$bin" monitor --listen 127.0.0.1:0 ${MONITOR_ARGS:-} 2>"$work/monitor.err" &
pid=$!
for _ in $(seq 50); do grep -q http:// "$work/monitor.err" && break; sleep 0.1; done
url=$(grep -o 'http://[0-9.:]*/metrics' "$work/monitor.err" | head -1)
sleep 5
curl -sf "$url" >"$work/before.txt"
sleep "$seconds"
curl -sf "$url" >"$work/after.txt"
kill -TERM "$pid"
wait "$pid"
pid=""

python3 - "$work" "$runs" "$seconds" "$started" "${BENCH_DOC:-$root/docs/BENCHMARKS.md}" "${MONITOR_ARGS:-}" "$root" <<'PY'
import json, math, os, re, sys

work, runs, seconds, started, doc, monitor_args, root = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7]
sys.path.insert(0, os.path.join(root, "scripts"))
from bench_doc import markers, write_section
from quantiles import ci_ranks
which = f"the monitor with `{monitor_args}`" if monitor_args else "the default monitor"
CELL = 'mechanism="tick:clock-nanosleep-abs",requested="0.001"'

def us(s):
    if s is None:
        return "–"
    return f"{s * 1e6:.1f} µs" if s < 1e-3 else f"{s * 1e3:.3f} ms"

# 1. The timers runs: p99 lateness (null when n < 100) and the slack they ran under.
timers = []
for i in range(1, runs + 1):
    cell = json.load(open(f"{work}/timers-{i}.json"))["data"]["cells"][0]
    m = cell["merged"]
    p99 = m["p99_lateness_ns"]
    timers.append((None if p99 is None else p99 / 1e9, cell["timer_slack_ns"], m["expected"]))

# 2. The monitor: buckets over the span (after − before), its slack from host_info.
def scrape(path):
    buckets, slack = {}, None
    for line in open(path):
        if line.startswith("sleeplab_wake_latency_seconds_bucket{") and CELL in line:
            le = re.search(r'le="([^"]+)"', line).group(1)
            buckets[math.inf if le == "+Inf" else float(le)] = float(line.rsplit(" ", 1)[1])
        elif line.startswith("sleeplab_host_info{"):
            slack = float(re.search(r'timer_slack_seconds="([^"]+)"', line).group(1))
    return buckets, slack

before, _ = scrape(f"{work}/before.txt")
after, monitor_slack = scrape(f"{work}/after.txt")
cumulative = sorted((le, after[le] - before.get(le, 0.0)) for le in after)
n = cumulative[-1][1]

def histogram_quantile(q, cum):
    """Prometheus's histogram_quantile: linear within the bucket holding rank q·n;
    in the +Inf bucket, the highest finite bound. Also that bucket's (lo, hi]."""
    total = cum[-1][1]
    rank = q * total
    lo, prev = 0.0, 0.0
    for le, c in cum:
        if c >= rank:
            if math.isinf(le):
                return lo, (lo, le)
            return lo + (le - lo) * (rank - prev) / (c - prev), (lo, le)
        lo, prev = le, c
    return None, None

slacks = {s for _, s, _ in timers}
monitor_slack_ns = round(monitor_slack * 1e9) if monitor_slack is not None else None
if slacks != {monitor_slack_ns}:
    sys.exit(f"not comparable: timers ran under timer slack {sorted(slacks)} ns, the monitor under {monitor_slack_ns} ns")

values = [p for p, _, _ in timers if p is not None]
lines = []
ci = None
if n * (1 - 0.99) < 1 or len(values) < runs:
    verdict = f"no verdict: a p99 needs n ≥ 100 (the monitor's n = {n:.0f}; timers runs with a p99: {len(values)} of {runs})"
    p99 = bucket = None
else:
    p99, bucket = histogram_quantile(0.99, cumulative)
    # How far the p99 of n ticks may stray by sampling alone: the order statistics of
    # its 95 % interval (exact binomial ranks, as every sleeplab interval:
    # scripts/quantiles.py), read off the buckets as histogram_quantile would. An upper
    # rank that runs off the sample leaves the interval open above.
    lo_rank, hi_rank = ci_ranks(round(n), 0.99)
    ci_lo = 0.0 if lo_rank is None else histogram_quantile(lo_rank / n, cumulative)[1][0]
    ci_hi = math.inf if hi_rank is None else histogram_quantile(hi_rank / n, cumulative)[1][1]
    ci = (lo_rank, hi_rank, ci_lo, ci_hi)
    overlaps = lambda lo, hi: lo < max(values) and hi >= min(values)
    spread = f"the timers runs' p99 range [{us(min(values))}, {us(max(values))}]"
    lo, hi = bucket
    if overlaps(lo, hi):
        verdict = f"the monitor's p99 bucket ({us(lo)}, {us(hi)}] overlaps {spread}: agrees (pass)"
    elif overlaps(ci_lo, ci_hi):
        # The point bucket misses, but the p99 of so few ticks could lie in one that
        # does not: the run cannot tell.
        verdict = (
            f"the monitor's p99 bucket ({us(lo)}, {us(hi)}] does not overlap {spread}, but "
            f"the buckets its p99 could lie in by sampling alone do: undecided"
        )
    else:
        verdict = (
            f"not even the buckets the monitor's p99 could lie in by sampling alone overlap "
            f"{spread}: does not agree (fail)"
        )
lines.append(
    f"timers alone, {runs} runs × {seconds} s (clock-nanosleep-abs, 1 ms; "
    + ", ".join(f"{t:.0f}" for _, _, t in timers)
    + " ticks): p99 "
    + ", ".join(us(p) for p, _, _ in timers)
)
lines.append(
    f"{which} over {seconds} s (tick:clock-nanosleep-abs@1ms, n = {n:.0f} ticks): "
    f"p99 ≈ {us(p99)} (histogram_quantile), in the bucket "
    + ("–" if bucket is None else f"({us(bucket[0])}, {us(bucket[1])}]")
)
if ci is not None:
    lo_rank, hi_rank, ci_lo, ci_hi = ci
    ranks = f"{'–' if lo_rank is None else lo_rank}–{'(none)' if hi_rank is None else hi_rank}"
    lines[-1] += (
        f"; by sampling alone (95 %, ranks {ranks} of {n:.0f}) "
        f"its p99 could lie anywhere in ({us(ci_lo) if lo_rank is not None else '–'}, "
        f"{us(ci_hi) if not math.isinf(ci_hi) else '∞'}]"
    )
lines.append(f"timer slack {monitor_slack_ns} ns in both; {verdict}")
print("\n".join(lines))

begin, end = markers("monitor-agreement")
write_section(
    doc,
    "monitor-agreement",
    f"{begin}\nRun {started} (`"
    + (f"MONITOR_ARGS=\"{monitor_args}\" " if monitor_args else "")
    + f"scripts/bench-monitor-agreement.sh {runs} {seconds}`):\n\n"
    + "".join(f"- {l}\n" for l in lines)
    + end,
)
print(f"written into {doc}")
PY
