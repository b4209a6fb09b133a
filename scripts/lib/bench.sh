# The preamble the benchmark scripts share, sourced first as
# `. "$(dirname "$0")/lib/bench.sh" || exit 2` (a script whose lib is missing stops
# there): strict mode, the repository's root as the working directory, DOC (the document
# the script writes its sections into: BENCH_DOC, or docs/BENCHMARKS.md), and need_root.
# Each script then declares, once, the source paths its sections' figures depend on:
# `export BENCH_SOURCES="path …"` (scripts/bench_doc.py stamps them into each section;
# scripts/doc_freshness.py fails when a later commit changed one).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/../.."
DOC=${BENCH_DOC:-docs/BENCHMARKS.md}

# need_root WHY: unless run as root, says "<script>: needs root (WHY)" and exits 2.
need_root() {
    if [ "$(id -u)" != 0 ]; then
        echo "$(basename "$0" .sh): needs root ($1)" >&2
        exit 2
    fi
}
