"""The one way a benchmark writes its section of docs/BENCHMARKS.md: between
`<!-- NAME:begin -->` and `<!-- NAME:end -->`, replaced in place (or appended), the file
written whole or not at all. Used by bench_pace_report.py, bench_frontier_report.py and
bindings/python/bench/report.py (Python and C); from a shell script, the section's body
on standard input:

    python3 scripts/bench_doc.py DOC NAME <body.md   # e.g. explain-crosscheck.sh, bench-trace.sh
"""
import os
import sys

from quantiles import INDISTINGUISHABLE, wilson

HEADER = "# Benchmarks\n\nEvery number here comes from a command in this file; rerun it to refresh.\n\n"


def markers(name):
    """The begin and end markers of section NAME."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def replace_section(doc, name, text):
    """`doc` with its NAME section replaced by `text` (which carries the markers), or
    `text` appended if the section is absent."""
    begin, end = markers(name)
    if begin in doc and end in doc:
        head, rest = doc.split(begin, 1)
        _, tail = rest.split(end, 1)
        return head + text + tail
    return doc.rstrip("\n") + "\n\n" + text + "\n"


def write_section(path, name, text):
    """Replaces section NAME of the file at `path` by `text` (temp file + rename)."""
    try:
        with open(path) as f:
            doc = f.read()
    except FileNotFoundError:
        doc = HEADER
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write(replace_section(doc, name, text))
    os.replace(tmp, path)


def wrapped(name, body):
    """`body` between the markers of section NAME."""
    begin, end = markers(name)
    return f"{begin}\n{body.strip()}\n{end}"


# ---- Verdicts over runs, shared by every benchmark report.

# A target is called out of reach only when it was missed in at least this many runs and
# met in none (issue 25: one run is not evidence that something cannot be done).
OUT_OF_REACH_RUNS = 3

# How a verdict line starts, by outcome: met, missed, undecided (the intervals overlap:
# "indistinguishable in this run"), not judged (too few samples).
MARKS = {"met": "✅", "missed": "❌", None: "–"}


def mark(outcome) -> str:
    """The mark of an outcome ("met", "missed", None, or anything else: undecided)."""
    return MARKS.get(outcome, "⚪")


def share_outcome(k: int, n: int, share: float):
    """A target "at least `share` of the samples" that k of n samples met: "met" when the
    95 % Wilson interval of k/n lies at or above `share`, "missed" when it lies below, else
    undecided (the interval straddles it); None without samples."""
    if n == 0:
        return None
    lo, hi = wilson(k, n)
    if lo >= share:
        return "met"
    if hi < share:
        return "missed"
    return INDISTINGUISHABLE


def verdict_line(label: str, outcome, detail: str, undecided: str) -> str:
    """A target's line in one run: ✅ met, ❌ missed, ⚪ undecided (the intervals overlap:
    `undecided` names it), – not judged (too few samples)."""
    if outcome is None:
        return f"- – {label}: not judged ({detail})"
    if outcome not in ("met", "missed"):
        return f"- ⚪ {label}: undecided, {undecided}: {detail}"
    return f"- {mark(outcome)} {label}: {detail}"


def target_summary(label: str, outcomes: list, undecided: str) -> str:
    """`- label: met in 2 of 3 runs, missed in 1, undecided (…) in 0`, and "out of reach
    here" only where it was missed in every one of at least OUT_OF_REACH_RUNS runs.
    `undecided` is the outcome (and the words) of overlapping intervals."""
    met = sum(o == "met" for o in outcomes)
    missed = sum(o == "missed" for o in outcomes)
    unjudged = sum(o is None for o in outcomes)
    between = len(outcomes) - met - missed - unjudged
    n = len(outcomes)
    text = f"- {label}: met in {met} of {n} runs, missed in {missed}, undecided ({undecided}) in {between}"
    if unjudged:
        text += f", not judged (too few frames) in {unjudged}"
    if n >= OUT_OF_REACH_RUNS and missed == n:
        text += f": out of reach here (missed in all {n} runs)"
    elif missed and met == 0 and n < OUT_OF_REACH_RUNS:
        text += f" (fewer than {OUT_OF_REACH_RUNS} runs: not called out of reach)"
    return text


def pace_runs(data: dict) -> list[list[dict]]:
    """The runs of a `sleeplab pace --repeat N` result (`data`), each as a list of results
    shaped like `data["results"]` entries (strategy, load, cpu_percent, error with count,
    p99_ns, p99_ci_ns); one run (the results themselves) without `runs`."""
    runs = data.get("runs") or []
    if not runs:
        return [data["results"]]
    return [[{"strategy": p["strategy"], "load": p["load"], "cpu_percent": p["cpu_percent"],
              "error": {"count": p["frames"], "p99_ns": p["p99_ns"], "p99_ci_ns": p["p99_ci_ns"]}}
             for p in run["points"]] for run in runs]


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench_doc.py DOC NAME <body")
    write_section(sys.argv[1], sys.argv[2], wrapped(sys.argv[2], sys.stdin.read()))
