#!/usr/bin/env bash
# How long the default survey and `--quick` take on this machine: runs both (release
# build), checks their results, and rewrites the "survey-time" section of
# docs/BENCHMARKS.md (or BENCH_DOC). Run it on a quiet machine (about 90 s).
#
#   scripts/bench-survey.sh
#   SMOKE=1 BENCH_DOC=/tmp/b.md scripts/bench-survey.sh   # smoke: --quick twice
. "$(dirname "$0")/lib/bench.sh" || exit 2
# What the figures of the sections this script writes depend on (bench_doc.py stamps
# them; scripts/doc_freshness.py says when a later commit changed one).
export BENCH_SOURCES="scripts/bench-survey.sh scripts/bench_survey_report.py crates/sleeplab-cli/src crates/sleeplab-report/src crates/sleeplab-results/src crates/sleeplab-account/src crates/sleeplab-stats/src crates/sleeplab/src crates/sleeplab-capture"
cargo build --release -q -p sleeplab-cli
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
full=(sleeplab -q -o "$out/full")
[ -n "${SMOKE:-}" ] && full=(sleeplab --quick -q -o "$out/full")
quick=(sleeplab --quick -q -o "$out/quick")
timed() {
    local t0 t1
    t0=$(date +%s.%N)
    "target/release/$1" "${@:2}" >/dev/null
    t1=$(date +%s.%N)
    python3 -c "print(f'{$t1 - $t0:.1f}')"
}
full_s=$(timed "${full[@]}")
quick_s=$(timed "${quick[@]}")
# The commands as the section shows them: without the temp output directory.
full_cmd="${full[*]}"
quick_cmd="${quick[*]}"
python3 scripts/bench_survey_report.py "$full_s" "$out/full" "${full_cmd% -o*}" \
    "$quick_s" "$out/quick" "${quick_cmd% -o*}" "$DOC"
