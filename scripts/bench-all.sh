#!/usr/bin/env bash
# Every published number, re-measured in one quiet run: runs each benchmark script in
# sequence, and each rewrites its sections of docs/BENCHMARKS.md and README.md (between
# `<!-- NAME:begin … -->` and `<!-- NAME:end -->`, scripts/bench_doc.py), each section
# stamped with the commit, date and machine it was measured at and the source paths it
# depends on (scripts/doc_freshness.py checks them). Every figure the docs quote outside
# a generated section fails a test (crates/sleeplab-cli/tests/published_figures.rs).
# Run it as root on a quiet machine, with nothing compiling (about 3 hours: the door benchmark's six moments take one), from a
# committed tree (a stamp of uncommitted code fails the freshness check: the real run
# refuses to start on one). Each script's output goes to a log of its own; the terminal
# gets one line per script, then which sections the run refreshed and which it did not.
#
#   scripts/bench-all.sh              # the real run: rewrites the docs
#   scripts/bench-all.sh --smoke      # every script with tiny parameters, into temp copies
#                                     # of the docs (printed at the end); the docs untouched
#   scripts/bench-all.sh --list       # the scripts and the sections each writes
set -euo pipefail
cd "$(dirname "$0")/.."

# script | sections it writes (BENCHMARKS.md, README.md) | tiny parameters for --smoke
STEPS=(
  "scripts/bench-options.sh|README: options|"
  "scripts/bench-survey.sh|survey-time|SMOKE=1"
  "scripts/bench-pace.sh|pace|FRAMES=10 REPEAT=2"
  "scripts/bench-async.sh|async|RUNS=2 FRAMES_60=200 FRAMES_1K=400 TASKS=1 TASK_SECONDS=1 BLOCKS=2 SWEEP_ITERATIONS=40 ROUNDS=2"
  "scripts/bench-frontier.sh|frontier; README: readme-frontier|FRAMES=10 FOCUS_FRAMES=10 REPEAT=2 LOADS=0 FOCUS_LOADS=1 STRATEGIES=std-sleep,spin,sdl-precise,precise FOCUS=std-sleep,sdl-precise,precise IDLE_FOCUS=std-sleep,spin,precise"
  "scripts/bench-python.sh|python, python-return-path, python-warm-finish|FRAMES=6 BLOCK=3 CALLS=1000 REPEAT=2 RETURN_N=5 WARM_FRAMES=50"
  "scripts/bench-c.sh|c|FRAMES=6 BLOCK=3 REPEAT=2"
  "scripts/bench-experiments.sh|eevdf-lag, host-gaps, wake-gaps|EEVDF_RUNS=2,1 HOST_GAPS_RUNS=1,0 WAKE_GAPS_RUNS=2,0"
  "scripts/bench-host.sh|host|FRAMES=100 BLOCK=50 REPEAT=1 PROBE=200ms"
  "scripts/bench-doors.sh|doors|MOMENTS=1 FRAMES=100 BLOCK=10 HOST_FRAMES=100 HOST_BLOCK=10 PROBE=200ms"
  "scripts/bench-precise-why.sh|precise-why|FRAMES=100 BLOCK=10 REPEAT=1 PROBE=200ms"
  "scripts/host-validate.sh|host-validate|ROUNDS=2 ITERATIONS=200 SPIN_SECONDS=0.3"
  "scripts/bench-monitor.sh 60|monitor-cost; README: readme-monitor|LOAD_SECONDS=1 SECONDS_ARG=3"
  "scripts/bench-monitor-agreement.sh 3 60|monitor-agreement|RUNS_ARG=1 SECONDS_ARG=3"
  "scripts/bench-monitor-keep.sh 30|monitor-keep|ROUNDS=1 KEEP_SECONDS=3 SECONDS_ARG=3"
  "scripts/explain-crosscheck.sh|explain-crosscheck|ITERATIONS=40 ROUNDS=8"
  "scripts/explain-independent.sh|explain-independent|ITERATIONS=40 ROUNDS=8"
  "scripts/bench-trace.sh|trace-cost|ROUNDS=2 WAITS=50 REPEAT=1"
  "scripts/bench-floor.sh|floor-recorders|ROUNDS=2 WAITS=50 REPEAT=1"
  "scripts/bench-explain.sh|explain-tail|ITERATIONS=100 ROUNDS=1"
  "scripts/explain-groundtruth.sh|explain-groundtruth|WAKES=20 ROUNDS=6 BLOCK_WAITS=20"
  "scripts/explain-program.sh|explain-program|ROUNDS=20 HOG_ROUNDS=20"
  "scripts/explain-rate.sh|explain-rate|WAITS=2000 REPEAT=1"
  "scripts/explain-real.sh|explain-real|SLEEPS=20"
  "scripts/bench-tune.sh|tune|QUICK=1 ROUNDS=3"
)

mode=${1:-}
case "$mode" in
  ""|--smoke|--list) ;;
  *) echo "bench-all: unknown argument '$mode' (usage: bench-all.sh [--smoke|--list])" >&2; exit 2 ;;
esac

if [ "$mode" = --list ]; then
  for s in "${STEPS[@]}"; do
    IFS='|' read -r cmd sections _ <<<"$s"
    echo "$cmd: $sections"
  done
  exit 0
fi

export BENCH_DOC=${BENCH_DOC:-docs/BENCHMARKS.md}
export README_DOC=${README_DOC:-README.md}
if [ "$mode" = --smoke ]; then
  tmp=$(mktemp -d)
  cp docs/BENCHMARKS.md "$tmp/BENCHMARKS.md"
  cp README.md "$tmp/README.md"
  export BENCH_DOC="$tmp/BENCHMARKS.md" README_DOC="$tmp/README.md"
fi

# Every section's stamp (name, commit, date) of the two documents, one per line.
stamps() {
  python3 - "$BENCH_DOC" "$README_DOC" <<'PY'
import sys
sys.path.insert(0, "scripts")
from bench_doc import sections
for path in sys.argv[1:]:
    for name, stamp, _ in sections(open(path).read()):
        print(name, stamp.get("commit", "-"), stamp.get("date", "-"))
PY
}

if [ "$mode" != --smoke ]; then
  dirty=$(python3 -c 'import sys; sys.path.insert(0, "scripts"); import bench_doc; print(bench_doc.commit() or "")')
  case "$dirty" in
    *-dirty) echo "bench-all: the tree has uncommitted changes ($dirty): commit them first, so that the stamps name the code measured" >&2; exit 2 ;;
  esac
fi
logs=$(mktemp -d /tmp/bench-all.XXXXXX)
before=$(stamps)
cargo build --release -q --workspace
t0=$(date +%s)
failed=()
i=0
for s in "${STEPS[@]}"; do
  i=$((i + 1))
  IFS='|' read -r cmd _ smoke <<<"$s"
  read -ra argv <<<"$cmd"
  envs=()
  if [ "$mode" = --smoke ]; then
    # The tiny parameters: environment variables, except the positional RUNS and SECONDS
    # of the monitor scripts.
    for kv in $smoke; do
      case "$kv" in
        RUNS_ARG=*) argv[1]=${kv#RUNS_ARG=} ;;
        SECONDS_ARG=*) argv[${#argv[@]} - 1]=${kv#SECONDS_ARG=} ;;
        *) envs+=("$kv") ;;
      esac
    done
  fi
  log="$logs/$(printf '%02d' "$i")-$(basename "${argv[0]}" .sh).log"
  t=$(date +%s)
  if env "${envs[@]}" "${argv[@]}" >"$log" 2>&1; then
    echo "bench-all: [$i/${#STEPS[@]}] ${envs[*]:+${envs[*]} }${argv[*]}: done in $(( $(date +%s) - t )) s" >&2
  else
    echo "bench-all: [$i/${#STEPS[@]}] ${envs[*]:+${envs[*]} }${argv[*]}: FAILED (exit $?), see $log" >&2
    failed+=("${argv[0]}")
  fi
done
after=$(stamps)
echo "bench-all: done in $(( $(date +%s) - t0 )) s; logs in $logs; wrote $BENCH_DOC and $README_DOC" >&2
# Which sections this run refreshed (their stamp changed), and which it left as they were.
refreshed=$(comm -13 <(sort <<<"$before") <(sort <<<"$after") | cut -d' ' -f1 | sort -u)
all=$(cut -d' ' -f1 <<<"$after" | sort -u)
left=$(comm -23 <(echo "$all") <(echo "$refreshed"))
# shellcheck disable=SC2086 # one line of names
echo "bench-all: refreshed ($(wc -w <<<"$refreshed")): $(echo ${refreshed:-none})"
# shellcheck disable=SC2086
echo "bench-all: not refreshed ($(wc -w <<<"$left")): $(echo ${left:-none})"
if [ "$mode" = --smoke ]; then
  # Every section each script writes is in the temp copies, whole.
  python3 - "$BENCH_DOC" "$README_DOC" <<'PY'
import re, sys
for path in sys.argv[1:]:
    text = open(path).read()
    begins = re.findall(r"<!-- (\S+):begin[^>]*-->", text)
    ends = re.findall(r"<!-- (\S+):end -->", text)
    assert begins == ends, f"{path}: unbalanced sections {begins} vs {ends}"
    print(f"{path}: sections {', '.join(begins)}")
PY
fi
if [ ${#failed[@]} -gt 0 ]; then
  echo "bench-all: ${#failed[@]} scripts failed: ${failed[*]}" >&2
  exit 1
fi
