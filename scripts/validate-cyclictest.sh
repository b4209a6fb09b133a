#!/usr/bin/env bash
# Validates `sleeplab timers` against cyclictest, the reference for periodic wake-up
# latency: both wake every 1 ms on absolute CLOCK_MONOTONIC deadlines with
# clock_nanosleep(TIMER_ABSTIME), SCHED_OTHER, default timer slack, one thread pinned to
# CPU 0 (cyclictest pins its thread N to CPU N; sleeplab gets --pin 0). The two tools run
# alternately, RUNS times each, and the script prints every run's average and maximum
# latency, then checks that sleeplab's averages lie within the spread (min..max) of
# cyclictest's averages.
#
# sleeplab's average here uses cyclictest's definition: one sample per wake, measured
# against the deadline it slept for (after a stall cyclictest skips the deadlines already
# passed without measuring them). sleeplab's own headline figure, one sample per
# scheduled tick (every tick a stall delayed counts), is printed beside it.
#
# Verdict: PASS when the median of sleeplab's averages lies within cyclictest's min..max
# of averages (each run's in/out is printed too). Exit 0 on PASS, 1 on FAIL, 2 when a
# tool is missing.
#
# Usage: scripts/validate-cyclictest.sh            (RUNS=7 LOOPS=3000 PIN=0 by default)
#        RUNS=10 LOOPS=2000 scripts/validate-cyclictest.sh
set -euo pipefail
cd "$(dirname "$0")/.."

RUNS=${RUNS:-7}
LOOPS=${LOOPS:-3000}
PIN=${PIN:-0}

if ! command -v cyclictest >/dev/null 2>&1; then
    echo "validate-cyclictest: cyclictest not found (apt-get install rt-tests, or scripts/install-deps.sh)" >&2
    exit 2
fi
if ! command -v python3 >/dev/null 2>&1; then
    echo "validate-cyclictest: python3 not found" >&2
    exit 2
fi

cargo build --release --quiet -p sleeplab-cli
bin=target/release/sleeplab
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

echo "validate-cyclictest: $RUNS runs each, $LOOPS wake-ups of 1 ms per run, alternating" >&2
for i in $(seq 1 "$RUNS"); do
    cyclictest -t1 -i1000 --policy=other --default-system -N -q -l "$LOOPS" \
        >"$tmp/ct$i.txt" 2>"$tmp/ct$i.err"
    "$bin" timers -q --mechanisms clock-nanosleep-abs --periods 1ms --seconds "${LOOPS}ms" \
        --pin "$PIN" --csv "$tmp/sl$i.csv" >"$tmp/sl$i.txt"
done

python3 - "$tmp" "$RUNS" <<'EOF'
import csv, re, statistics, sys
from collections import defaultdict

tmp, runs = sys.argv[1], int(sys.argv[2])
rows = []  # (run, tool, avg_us, max_us, per_tick_avg_us)
for i in range(1, runs + 1):
    text = open(f"{tmp}/ct{i}.txt").read()
    m = re.search(r"C:\s*(\d+)\s+Min:\s*(-?\d+)\s+Act:\s*(-?\d+)\s+Avg:\s*(-?\d+)\s+Max:\s*(-?\d+)", text)
    if not m:
        sys.exit(f"cannot parse cyclictest output of run {i}: {text!r}")
    rows.append((i, "cyclictest", int(m.group(4)) / 1e3, int(m.group(5)) / 1e3, None))

    first_of_wake = {}
    per_tick = []
    with open(f"{tmp}/sl{i}.csv") as f:
        for r in csv.DictReader(f):
            lat = int(r["lateness_ns"])
            per_tick.append(lat)
            w = int(r["wake"])
            if w not in first_of_wake:  # rows are in tick order: the first tick of each wake
                first_of_wake[w] = lat
    per_wake = list(first_of_wake.values())
    rows.append((i, "sleeplab", statistics.fmean(per_wake) / 1e3, max(per_wake) / 1e3,
                 statistics.fmean(per_tick) / 1e3))

ct = [r[2] for r in rows if r[1] == "cyclictest"]
lo, hi = min(ct), max(ct)
print(f"{'run':>3}  {'tool':<10}  {'avg (µs)':>9}  {'max (µs)':>9}  {'per-tick avg':>12}  within cyclictest's avg range")
for run, tool, avg, mx, tick in rows:
    within = "" if tool == "cyclictest" else ("yes" if lo <= avg <= hi else "no")
    tick_s = "" if tick is None else f"{tick:12.1f}"
    print(f"{run:>3}  {tool:<10}  {avg:9.1f}  {mx:9.1f}  {tick_s:>12}  {within}")
sl = [r[2] for r in rows if r[1] == "sleeplab"]
inside = sum(lo <= a <= hi for a in sl)
med = statistics.median(sl)
print()
print(f"cyclictest averages: min {lo:.1f} µs, median {statistics.median(ct):.1f} µs, max {hi:.1f} µs")
print(f"sleeplab averages:   min {min(sl):.1f} µs, median {med:.1f} µs, max {max(sl):.1f} µs")
print(f"sleeplab runs within cyclictest's range: {inside}/{len(sl)}")
ok = lo <= med <= hi
print(f"verdict: {'PASS' if ok else 'FAIL'} (median of sleeplab's averages "
      f"{'inside' if ok else 'outside'} cyclictest's min..max)")
sys.exit(0 if ok else 1)
EOF
