"""The one way a benchmark writes its section of docs/BENCHMARKS.md: between
`<!-- NAME:begin -->` and `<!-- NAME:end -->`, replaced in place (or appended), the file
written whole or not at all. Used by bench_pace_report.py, bench_frontier_report.py and
bindings/python/bench/report.py (Python and C); from a shell script, the section's body
on standard input:

    python3 scripts/bench_doc.py DOC NAME <body.md   # e.g. explain-crosscheck.sh, bench-trace.sh
"""
import os
import sys

from quantiles import BY_POINT_VALUE, INDISTINGUISHABLE, MIN_UNITS, share_ci

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

# A target is called out of reach only when it was missed in at least this many runs, met
# in none, and no other contender met it (one run is not evidence that something cannot
# be done, and what another contender did here can be done here).
OUT_OF_REACH_RUNS = 3

# How a verdict line starts, by outcome: met, missed, undecided (the intervals overlap:
# "indistinguishable in this run"), not judged (too few samples).
MARKS = {"met": "✅", "missed": "❌", None: "–"}


def mark(outcome) -> str:
    """The mark of an outcome ("met", "missed", None, or anything else: undecided)."""
    return MARKS.get(outcome, "⚪")


def share_outcome(units, share: float):
    """A target "at least `share` of the samples", judged over units (rounds, blocks,
    runs: the samples of one unit share its moment, so the share's interval is taken over
    units, never over pooled samples). `units`: one (k, n) pair per unit, k of its n
    samples meeting the rule. "met" when the interval (quantiles.share_ci) lies at or
    above `share`, "missed" when it lies below, else undecided; None without samples or
    with fewer than MIN_UNITS units (not judged: `share_text` says why)."""
    c = share_ci(units)
    if c is None:
        return None
    lo, hi = c
    if lo >= share:
        return "met"
    if hi < share:
        return "missed"
    return INDISTINGUISHABLE


def share_text(units, unit: str = "rounds") -> str:
    """`k of n (lo–hi %)` with the share's interval over `unit`, or `k of n (p %; no
    interval: 3 rounds, fewer than 8)` where the units are too few; `–` without samples."""
    k = sum(a for a, _ in units)
    n = sum(b for _, b in units)
    if n == 0:
        return "–"
    c = share_ci(units)
    if c is None:
        used = sum(1 for _, b in units if b > 0)
        return (f"{k} of {n} ({100 * k / n:.1f} %; no interval: {used} {unit}, "
                f"fewer than {MIN_UNITS})")
    return f"{k} of {n} ({100 * c[0]:.1f}–{100 * c[1]:.1f} % over {unit})"


def overall_outcome(outcomes) -> object:
    """The outcome of a set of judged parts (cells, pairs): "met" when every one met,
    "missed" when any missed, None when none was judged, else undecided."""
    if outcomes and all(o == "met" for o in outcomes):
        return "met"
    if "missed" in outcomes:
        return "missed"
    if all(o is None for o in outcomes):
        return None
    return INDISTINGUISHABLE


def outcome_counts(outcomes, what: str, unit: str = "rounds") -> str:
    """`3 of 4 cells agree, 0 disagree, 1 undecided, 0 not judged (fewer than 8 rounds)`:
    `what` names the parts and their agreeing verb (`cells agree`)."""
    met, missed = outcomes.count("met"), outcomes.count("missed")
    unjudged = sum(o is None for o in outcomes)
    undecided = len(outcomes) - met - missed - unjudged
    noun, verb = what.rsplit(" ", 1)
    negative = "disagree" if verb == "agree" else f"not {verb}"
    return (f"{met} of {len(outcomes)} {noun} {verb}, {missed} {negative}, {undecided} "
            f"undecided ({INDISTINGUISHABLE}), {unjudged} not judged (fewer than "
            f"{MIN_UNITS} {unit})")


def verdict_line(label: str, outcome, detail: str, undecided: str) -> str:
    """A target's line in one run: ✅ met, ❌ missed, ⚪ undecided (the intervals overlap:
    `undecided` names it), – not judged (too few samples)."""
    if outcome is None:
        return f"- – {label}: not judged ({detail})"
    if outcome not in ("met", "missed"):
        return f"- ⚪ {label}: undecided, {undecided}: {detail}"
    return f"- {mark(outcome)} {label}: {detail}"


def target_summary(label: str, outcomes: list, undecided: str, met_by_others=None,
                   judged: str = "contender") -> str:
    """`- label: met in 2 of 3 runs, missed in 1, undecided (…) in 0`. A target missed in
    every one of at least OUT_OF_REACH_RUNS runs is called out of reach here only where
    `met_by_others` (per run, the other contenders that met the same target in it) shows
    that no contender met it either; where another did, the line names it; where the
    others were not judged against it (None), it says it is not called out of reach.
    `judged` names which contenders `met_by_others` judged (`contender that kept its
    schedule` where those that fell behind were left out). `undecided` is the outcome
    (and the words) of overlapping intervals."""
    met = sum(o == "met" for o in outcomes)
    missed = sum(o == "missed" for o in outcomes)
    unjudged = sum(o is None for o in outcomes)
    between = len(outcomes) - met - missed - unjudged
    n = len(outcomes)
    text = f"- {label}: met in {met} of {n} runs, missed in {missed}, undecided ({undecided}) in {between}"
    if unjudged:
        text += f", not judged (too few frames) in {unjudged}"
    if n >= OUT_OF_REACH_RUNS and missed == n:
        others = None if met_by_others is None else sorted({x for xs in met_by_others for x in xs})
        if others is None:
            text += (f": missed in all {n} runs, not called out of reach (no other contender "
                     "was judged against it)")
        elif others:
            text += f": missed in all {n} runs, though {', '.join(others)} met it: not out of reach"
        else:
            text += f": out of reach here (missed in all {n} runs, and no {judged} met it)"
    elif missed and met == 0 and n < OUT_OF_REACH_RUNS:
        text += f" (fewer than {OUT_OF_REACH_RUNS} runs: not called out of reach)"
    return text


def pace_runs(data: dict) -> list[list[dict]]:
    """The runs of a `sleeplab pace --repeat N` result (`data`), each as a list of results
    shaped like `data["results"]` entries (strategy, load, cpu_percent and its interval
    over the run's blocks, error with count, p99_ns, p99_ci_ns, and the intervals over the
    run's blocks, `units`); one run (the results themselves) without `runs`."""
    runs = data.get("runs") or []
    if not runs:
        return [data["results"]]
    return [[{"strategy": p["strategy"], "load": p["load"], "cpu_percent": p["cpu_percent"],
              "cpu_ci_percent": p.get("cpu_ci_percent"), "units": p.get("units"),
              "error": {"count": p["frames"], "p99_ns": p["p99_ns"], "p99_ci_ns": p["p99_ci_ns"]}}
             for p in run["points"]] for run in runs]


# ---- Intervals over units, shared by the pace reports.

def units_ci(x: dict, key: str):
    """The interval of quantile `key` (e.g. "p99") of a pace result over its blocks (the
    JSON's `units`), a tuple, or None: a result without one (too few blocks, or written
    before them) decides nothing."""
    c = (x.get("units") or {}).get(f"{key}_ci_ns")
    return None if c is None or x["error"].get(f"{key}_ns") is None else tuple(c)


def blocks(x: dict) -> int:
    """How many blocks a pace result's intervals rest on (0 without them)."""
    return (x.get("units") or {}).get("units", 0)


def why_no_interval(x: dict) -> str:
    """Why a pace result has no interval over blocks: `3 blocks; an interval needs 8`,
    or that the result holds none (written before them)."""
    n = blocks(x)
    if not x.get("units"):
        return "no intervals over blocks in this result"
    if n >= MIN_UNITS:
        return f"no interval over its {n} blocks"
    return f"{n} blocks; an interval needs {MIN_UNITS}"


def cpu_ci(x: dict):
    """A pace result's CPU interval over its blocks, % of a core, or None."""
    c = x.get("cpu_ci_percent")
    return None if c is None else tuple(c)


def cpu_text(x: dict) -> str:
    """`1.40 % [1.20–1.60 %]` with its interval over the blocks, or `1.40 % (by point
    value: no interval over blocks)`."""
    c = cpu_ci(x)
    if c is None:
        return f"{x['cpu_percent']:.2f} % ({BY_POINT_VALUE}: {why_no_interval(x)})"
    return f"{x['cpu_percent']:.2f} % [{c[0]:.2f}–{c[1]:.2f} %]"


def at_most(c, bound: float):
    """A target "at most `bound`" judged by the interval `c` (low, high; an open end
    None): "met" where it lies at or below the bound, "missed" where above, else
    undecided (INDISTINGUISHABLE); None (not judged: a point value decides no target)
    without an interval."""
    if c is None:
        return None
    if c[1] is not None and c[1] <= bound:
        return "met"
    if c[0] is not None and c[0] > bound:
        return "missed"
    return INDISTINGUISHABLE


def cpu_bound_outcome(x: dict, bound: float):
    """CPU at most `bound` % of a core, by its interval over blocks (`at_most`)."""
    return at_most(cpu_ci(x), bound)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench_doc.py DOC NAME <body")
    write_section(sys.argv[1], sys.argv[2], wrapped(sys.argv[2], sys.stdin.read()))
