#!/usr/bin/env bash
# Records the native-oversleep traces that the margin estimator's tests replay in virtual
# time (crates/sleeplab/tests/traces/): 60 Hz, 3000 waits each, absolute clock_nanosleep
# at 1 ns timer slack, beside 0 busy threads, one per CPU, and CPUs + 3.
#
#   scripts/record-traces.sh "quiet machine"        # all three loads (about 2.5 min)
#   scripts/record-traces.sh "quiet machine" 0      # only the idle trace
#   FRAMES=1000 scripts/record-traces.sh "..." cpus # a shorter one
#
# CONDITIONS (first argument) goes into each trace's header as it is: say honestly what
# else the machine was doing. The load average before and after is recorded too.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ $# -lt 1 ] || [ -z "$1" ]; then
    echo "usage: scripts/record-traces.sh CONDITIONS [LOAD ...]   (LOAD: N, cpus or cpus+K; default: 0 cpus cpus+3)" >&2
    exit 2
fi
conditions=$1
shift
loads=("$@")
[ ${#loads[@]} -gt 0 ] || loads=(0 cpus cpus+3)
FRAMES=${FRAMES:-3000}
dir=crates/sleeplab/tests/traces
mkdir -p "$dir"
cargo build --release -q -p sleeplab --example record_trace
for load in "${loads[@]}"; do
    case $load in
        0) name=60hz-idle ;;
        *) name=60hz-load-${load/+/plus} ;;
    esac
    target/release/examples/record_trace --load "$load" --frames "$FRAMES" --hz 60 \
        --conditions "$conditions" --out "$dir/$name.csv"
done
