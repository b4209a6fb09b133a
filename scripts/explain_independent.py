"""An independent reader of six of `sleeplab explain`'s components, for
scripts/explain-independent.sh: the same run, recorded by the script's own tracefs
instances and read as plain text (their `trace` files), gives each wake's way through
the kernel without any of sleeplab's parsing; slack, idle_delivery, timer_irq,
idle_wakeup, run_queue and kernel_exit come out of it by the rules of
scripts/text_trace.py, and each is compared with what explain wrote in its per-wake
CSV. The rules are the account's own, re-implemented (which timer is the thread's, when
a CPU counts as idle, what is the guest's work inside a delivery, who held the CPU), so
the comparison catches decoding and bookkeeping errors, not a wrong rule: run_queue's
rule is checked against `perf sched timehist` by scripts/explain-crosscheck.sh instead.
Not compared: overrun and entry (the caller's clock reads, in no trace), return (ends
at the caller's clock read), spin and spin_gap (the spin's gaps are in no trace),
unexplained.

Per wake (the CSV's tid, start_ns, deadline_ns, end_ns) scripts/text_trace.py reads the
components from the text trace alone, by the rules written there; a wake is read to
within about a microsecond (the text trace's stamps). A wake agrees when the two are
within AGREE_NS, and a (cell, component) agrees when the 95 % interval of its share of
agreeing wakes, taken over explain's rounds (the wakes of one round share its moment),
lies at or above AGREE_SHARE (disagrees when it lies below; undecided between; not
judged below 8 rounds).

Compared are the wakes explain traced whole whose every event the text trace has too;
a wake explain says never blocked is compared when the text trace shows it did, or shows
its timer waking it on the CPU (explain splits such a wake at its own timer when its context switches say it never
blocked). The others are
counted apart: not fully traced by explain (and how many of those the text trace has
whole), never waiting in either reader's trace (no switch-out, no wakeup), some event
missing from the text trace (which). Each compared wake that disagrees on some
component is classed by what differs (CLASSES).

    python3 scripts/explain_independent.py EXPLAIN.csv SCHED.txt SYS.txt COMMAND [NOTES] [--evidence FILE]
    python3 scripts/explain_independent.py --self-test

Prints the section's body (Markdown) on stdout; scripts/bench_doc.py puts it in
docs/BENCHMARKS.md. --evidence writes, for each compared wake that disagrees, each wake
only explain has whole and each only the text trace has whole: its CSV row, both
readers' instants (explain's as its row implies them) and the text-trace lines of its
window that concern it (its thread's events, the expiries and wakeups on its CPUs).
"""
import csv
import sys

from bench_doc import mark, outcome_counts, overall_outcome, share_text
from quantiles import INDISTINGUISHABLE, quantile
from text_trace import Trace, evidence_lines, read_wake, stamp_ns

# Per-wake agreement within AGREE_NS (two µs stamps, each read to ±0.5 µs, and the two
# instances' records of one tracepoint a fraction of a µs apart), and a (cell,
# component) agreeing when at least AGREE_SHARE of its wakes agree, over rounds: the
# run queue's cross-check's rule (`agreeing`, `agreement`).
from explain_crosscheck import AGREE_NS, AGREE_SHARE, agreeing, agreement  # noqa: E402

# (name in the table, explain's CSV columns summed): one component each.
COMPONENTS = [
    ("slack", ("slack_ns",)),
    # The timer ran → the guest's local_timer_entry on an idle CPU, less the guest's work
    # there (empty in explain's CSV where not told: then 0 in both).
    ("idle delivery", ("idle_delivery_ns",)),
    ("timer interrupt", ("timer_irq_ns",)),
    ("idle wakeup", ("idle_wakeup_ns",)),
    ("run queue", ("run_queue_ns",)),
    ("on CPU → sys_exit", ("kernel_exit_ns",)),
]


def ns_col(r, c):
    """Column `c` of explain's CSV row `r` in ns: 0 where it is absent or empty (a CSV
    from before the column, or a component not told for this wake)."""
    return int(r.get(c) or 0)


def implied(r):
    """Explain's instants as its CSV row implies them, where no preemption interleaves:
    each component of its way, in order, ends where the next begins (from the deadline
    on, as it clips)."""
    t = max(int(r["deadline_ns"]), int(r["start_ns"]))
    out = {}
    for name, cols in [("soft", ("entry_ns",)), ("ran", ("slack_ns",)),
                       ("waking", ("idle_delivery_ns", "timer_irq_ns")),
                       ("on CPU", ("idle_wakeup_ns", "run_queue_ns")),
                       ("sys_exit", ("kernel_exit_ns",))]:
        t += sum(ns_col(r, c) for c in cols)
        out[name] = t
    return out


def cells(rows):
    """Explain's CSV rows grouped by cell (mechanism, requested_ns, load), in order."""
    out = {}
    for r in rows:
        out.setdefault((r["mechanism"], int(r["requested_ns"]), int(r["load"])), []).append(r)
    return out


def wake_evidence(tr, r, parts, instants, why):
    """A wake's evidence: its CSV row, what is off, both readers' instants (explain's as
    its row implies them), and the text-trace lines of its window that concern it."""
    tid, start, end = int(r["tid"]), int(r["start_ns"]), int(r["end_ns"])
    out = [f"== {r['mechanism']} {r['requested_ns']} ns load {r['load']} wake {r['index']} "
           f"tid {tid}: start {start} deadline {r['deadline_ns']} end {end}; {why}",
           "   explain: " + ", ".join(f"{k}={v}" for k, v in r.items()
                                     if k.endswith("_ns") and k not in ("deadline_ns", "end_ns", "start_ns"))
           + f", holder={r.get('holder', '')}, traced={r['traced']}, blocked={r['blocked']}"]
    if instants:
        imp = implied(r)
        out.append(f"   text trace (timer {instants['timer']}): "
                   + ", ".join(f"{k} {instants[k]}" for k in imp))
        out.append("   explain implied: " + ", ".join(
            f"{k} {v} ({v - instants[k]:+d})" for k, v in imp.items()))
    return "\n".join(out + ["   " + line for line in evidence_lines(tr, tid, start, end)])


# The wakes of a cell, by what became of them (the keys of `compare`'s counts).
COUNTS = ["wakes", "compared", "untraced", "untraced, text complete", "no block (both)",
          "woken on CPU", "no block (explain only)", "text incomplete"]


def compare(tr, rows, evidence=None):
    """One cell: per component the (text trace, explain) pairs of the compared wakes; the
    counts of COUNTS; and what the text trace lacked in the wakes explain traced (event:
    wakes). Compared: explain traced the wake (found every event of its way) and the
    text trace has every event too; a wake explain says never blocked is compared when
    the text trace shows it blocked, or shows its timer waking it on the CPU (explain
    then splits it at its own timer, as for a wake that never slept). `evidence` (a
    list) collects the text of every wake that disagrees, and of every wake only one
    reader has whole."""
    pairs = {name: [] for name, _ in COMPONENTS}
    counts = dict.fromkeys(COUNTS, 0)
    missing_by = {}
    for r in rows:
        counts["wakes"] += 1
        tid, start = int(r["tid"]), int(r["start_ns"])
        deadline, end = int(r["deadline_ns"]), int(r["end_ns"])
        parts, instants, missing = read_wake(tr, tid, start, deadline, end)
        if r["traced"] != "true":
            counts["untraced"] += 1
            if parts is not None:
                counts["untraced, text complete"] += 1
                if evidence is not None:
                    evidence.append(wake_evidence(tr, r, parts, instants,
                                                  "explain: not fully traced; text trace: complete"))
            continue
        if r["blocked"] != "true":
            if missing == "did not block":
                counts["no block (both)"] += 1
                continue
            if parts is not None:
                counts["woken on CPU" if not instants["blocked"] else "no block (explain only)"] += 1
        if parts is None:
            counts["text incomplete"] += 1
            missing_by[missing] = missing_by.get(missing, 0) + 1
            if evidence is not None:
                evidence.append(wake_evidence(tr, r, None, None,
                                              f"explain: traced; text trace: no {missing}"))
            continue
        counts["compared"] += 1
        off = []
        for name, cols in COMPONENTS:
            ex = sum(ns_col(r, c) for c in cols)
            pairs[name].append((parts[name], ex, int(r.get("round") or 0)))
            if abs(parts[name] - ex) > AGREE_NS:
                off.append(f"{name}: text trace {parts[name]} ns, explain {ex} ns")
        if off:
            k, late = classify(r, instants, instants["preempted"])
            counts.setdefault("classes", {})
            counts["classes"][k] = counts["classes"].get(k, 0) + 1
            if late:
                counts.setdefault("late", []).append(late)
            if evidence is not None:
                evidence.append(wake_evidence(tr, r, parts, instants, f"[{k}] " + "; ".join(off)))
    return pairs, counts, missing_by


def us(ns):
    if ns is None:
        return "–"
    return f"{ns / 1e3:.2f} µs" if abs(ns) < 1e6 else f"{ns / 1e6:.3f} ms"


def q2(values):
    """`p50 / p99` of `values` (– where the quantile rule rejects one)."""
    return " / ".join(us(quantile(values, q)) for q in (0.5, 0.99))


def label(key):
    mech, req, load = key
    return f"{mech} | {us(req)} | {load}"


# How far apart two records of one instant may be and still count as the same reading:
# a rounded µs stamp (±0.5 µs) and the two instances' records of one tracepoint call
# (explain's probe runs after the reader's, a fraction of a µs later).
SAME_NS = 1_500

# Why a compared wake disagrees (see `classify`), in the order the section lists them.
CLASSES = {
    "no block": "explain found no switch-out to sleep and the wake's context switches "
                "said it never blocked (explain split it at its own timer, as a wake that "
                "never slept); the text trace shows the thread blocked",
    "woken on CPU": "no switch-out to sleep in either trace, but the thread's own timer "
                    "ran late and woke it while it was still current (it never left the "
                    "CPU): the two readers split that wake at different instants",
    "other timer": "explain's timer is not the thread's own: its soft expiry or the time "
                   "the timer ran differs from those of the hrtimer the thread armed",
    "one late record": "one event's record in explain's instance is later than the "
                       "reader's by more than 1.5 µs, every other instant agreeing "
                       "(explain's probe runs after the reader's on the same tracepoint call)",
    "preempted": "the thread was preempted in its window (explain's instants cannot be "
                 "inferred from its row)",
    "other": "anything else",
}


def classify(r, instants, preempted=False):
    """Why a compared wake disagrees: a key of CLASSES, and for a late record which
    event it is and how much later explain's is (ns), else None."""
    if r["blocked"] != "true":
        return ("no block" if instants["blocked"] else "woken on CPU"), None
    if preempted:
        return "preempted", None
    imp = implied(r)
    # Before the deadline explain's instants are clipped away: compare only those after.
    after = {k: v for k, v in imp.items() if instants[k] > int(r["deadline_ns"]) + SAME_NS}
    if any(abs(after[k] - instants[k]) > SAME_NS for k in ("soft", "ran") if k in after):
        return "other timer", None
    off = [k for k, v in after.items() if abs(v - instants[k]) > SAME_NS]
    # A late record moves its own instant and, through the cumulative sum, nothing else
    # (the next instant is its own record, which agrees).
    if len(off) == 1 and after[off[0]] > instants[off[0]]:
        return "one late record", (off[0], after[off[0]] - instants[off[0]])
    return "other", None


def section(csv_text, traces, command, notes="", evidence=None):
    """The section's body: the command, the wakes per cell, the table per component, the
    verdicts, why wakes disagree. `traces`: the text of each instance's `trace` file."""
    tr = Trace(*traces)
    by_cell = cells(list(csv.DictReader(csv_text.splitlines())))
    results = {key: compare(tr, rows, evidence) for key, rows in by_cell.items()}
    lines = [
        f"Command: `{command}`",
        "",
        "Compared: slack, idle_delivery, timer_irq, idle_wakeup, run_queue and "
        "kernel_exit, each on its own. The text reader shares the account's rules (which "
        "timer is the thread's own, when the timer's CPU counts as idle, what inside a "
        "delivery is the guest's work, who held the CPU the thread came on), re-implemented "
        "on the text trace: it catches errors of decoding and bookkeeping, not a wrong "
        "rule (run_queue's rule is set against perf sched timehist in the "
        "explain-crosscheck section). Not compared: overrun, entry and return (they end "
        "at the caller's clock reads, in no trace), spin and spin_gap (the spin's gaps "
        "are in no trace).",
        "",
        f"{len(tr.events)} events read from the text traces"
        + (f", which report {tr.lost} lost" if tr.lost else "") + ".",
        "",
        "Wakes per cell: compared (explain traced the wake, and the text trace has every "
        "event of its way); not fully traced by explain (of which the text trace has the whole "
        "way); no switch-out to sleep in explain's trace: none in the text trace either, "
        "and no wakeup (it never waited) / none, but its timer woke it on the CPU / the text "
        "trace has one (the latter two compared); traced by explain but some event missing "
        "from the text trace (which).",
        "",
        "| mechanism | requested | load | wakes | compared | not traced by explain (text "
        "trace whole) | no switch-out: never waited / woken on CPU / explain only | text "
        "trace incomplete |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for key, (_, c, missing_by) in results.items():
        what = ", ".join(f"{n} no {m}" for m, n in sorted(missing_by.items()))
        lines.append(
            f"| {label(key)} | {c['wakes']} | {c['compared']} | {c['untraced']} "
            f"({c['untraced, text complete']}) | {c['no block (both)']} / "
            f"{c['woken on CPU']} / {c['no block (explain only)']} | {c['text incomplete']}"
            + (f" ({what})" if what else "") + " |")
    lines += [
        "",
        f"Per wake and component: how many agree within {us(AGREE_NS)} (the share's 95 % "
        f"interval over rounds: ✅ at or above {100 * AGREE_SHARE:.0f} %, ❌ below, ⚪ "
        "undecided, – not judged: fewer than 8 rounds), "
        "and p50 / p99 of each side (– where n is too small: p99 needs 100 wakes).",
        "",
        "| mechanism | requested | load | component | compared | "
        f"within {us(AGREE_NS)} | text trace p50 / p99 | explain p50 / p99 |",
        "|---|---:|---:|---|---:|---:|---:|---:|",
    ]
    outcomes = {name: [] for name, _ in COMPONENTS}
    for key, (pairs, _, _) in results.items():
        for name, _ in COMPONENTS:
            p = pairs[name]
            units = agreeing(p)
            outcome = agreement(units)
            outcomes[name].append(outcome)
            lines.append(f"| {label(key)} | {name} | {len(p)} | {mark(outcome)} "
                         f"{share_text(units)} | {q2([a for a, _, _ in p])} | "
                         f"{q2([b for _, b, _ in p])} |")
    lines.append("")
    total = [o for name, _ in COMPONENTS for o in outcomes[name]]
    for name, _ in COMPONENTS:
        lines.append(f"- {name}: " + outcome_counts(outcomes[name], "cells agree"))
    lines.append(f"- {mark(overall_outcome(total))} overall (a pair agrees when at least "
                 f"{100 * AGREE_SHARE:.0f} % of its wakes lie within {us(AGREE_NS)}): "
                 + outcome_counts(total, "(cell, component) pairs agree"))
    why, late = {}, []
    for _, c, _ in results.values():
        for k, v in c.get("classes", {}).items():
            why[k] = why.get(k, 0) + v
        late += c.get("late", [])
    compared = sum(c["compared"] for _, c, _ in results.values())
    off = sum(why.values())
    lines.append(f"- {off} of {compared} compared wakes disagree (beyond {us(AGREE_NS)}) on "
                 "at least one component" + (":" if off else ""))
    for k, text in CLASSES.items():
        if why.get(k):
            detail = ""
            if k == "one late record" and late:
                events = sorted({e for e, _ in late}, key=lambda e: -sum(x == e for x, _ in late))
                by = ", ".join(f"{sum(x == e for x, _ in late)} {e}" for e in events)
                gaps = [g for _, g in late]
                detail = f" ({by}; later by {us(min(gaps))} to {us(max(gaps))})"
            lines.append(f"  - {why[k]}: {text}{detail}")
    if notes.strip():
        lines.append(f"- the reader's tracefs instances: {notes.strip()}")
    return "\n".join(lines)


SELF_TEST_SCHED = """\
# tracer: nop
#
# entries-in-buffer/entries-written: 40/40   #P:2
#           TASK-PID     CPU#  |||||  TIMESTAMP  FUNCTION
 sleeplab-explai-500     [000] d..1.  1000.000101: hrtimer_start: hrtimer=00000000aaaa0001 function=hrtimer_wakeup expires=1000000250300 softexpires=1000000200300 mode=REL was_armed=0
 sleeplab-explai-500     [000] d.h1.  1000.000103: hrtimer_start: hrtimer=00000000bbbb0001 function=tick_nohz_handler expires=1000000200000 softexpires=1000000200000 mode=ABS was_armed=0
 sleeplab-explai-500     [000] d..3.  1000.000109: hrtimer_start: hrtimer=00000000cccc0001 function=dl_task_timer expires=1001000000000 softexpires=1001000000000 mode=ABS|HARD was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.000110: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1.  1000.000200: hrtimer_expire_entry: hrtimer=00000000bbbb0001 function=tick_nohz_handler now=1000000200100
          <idle>-0       [000] d.h1.  1000.000262: hrtimer_expire_entry: hrtimer=00000000aaaa0001 function=hrtimer_wakeup now=1000000261800
          <idle>-0       [000] d.h3.  1000.000263: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  1000.000272: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..1.  1000.001001: hrtimer_start: hrtimer=00000000aaaa0002 function=hrtimer_wakeup expires=1000001150200 softexpires=1000001100200 mode=ABS was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.001002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=lto cgu.01 next_pid=600 next_prio=120
      lto cgu.01-600     [000] d.h..  1000.001130: hrtimer_expire_entry: hrtimer=00000000aaaa0002 function=hrtimer_wakeup now=1000001130400
      lto cgu.01-600     [000] d.h2.  1000.001131: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
      lto cgu.01-600     [000] d..2.  1000.001140: sched_switch: prev_comm=lto cgu.01 prev_pid=600 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..2.  1000.001141: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=R+ ==> next_comm=kworker/0:1 next_pid=700 next_prio=120
   kworker/0:1-700       [000] d..2.  1000.001146: sched_switch: prev_comm=kworker/0:1 prev_pid=700 prev_prio=120 prev_state=I ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..1.  1000.002001: hrtimer_start: hrtimer=00000000aaaa0003 function=hrtimer_wakeup expires=1000002150100 softexpires=1000002100100 mode=REL was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.002002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1.  1000.002160: hrtimer_expire_entry: hrtimer=00000000aaaa0003 function=hrtimer_wakeup now=1000002160000
          <idle>-0       [000] d.h3.  1000.002161: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  1000.002170: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..1.  1000.003001: hrtimer_start: hrtimer=00000000aaaa0004 function=hrtimer_wakeup expires=1000003150100 softexpires=1000003100100 mode=REL was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.003002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=sleeplab-load-0 next_pid=501 next_prio=120
 sleeplab-load-0-501     [000] d.h..  1000.003151: hrtimer_expire_entry: hrtimer=00000000aaaa0004 function=hrtimer_wakeup now=1000003150900
 sleeplab-load-0-501     [000] d.h2.  1000.003152: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
 sleeplab-explai-500     [000] d..1.  1000.004001: hrtimer_start: hrtimer=00000000aaaa0005 function=hrtimer_wakeup expires=1000004150100 softexpires=1000004100100 mode=REL was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.004002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1.  1000.004151: hrtimer_expire_entry: hrtimer=00000000aaaa0005 function=hrtimer_wakeup now=1000004151000
          <idle>-0       [000] d.h3.  1000.004152: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  1000.004160: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..1.  1000.005001: hrtimer_start: hrtimer=00000000aaaa0006 function=hrtimer_wakeup expires=1000005130000 softexpires=1000005080000 mode=ABS was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.005002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1.  1000.005131: hrtimer_expire_entry: hrtimer=00000000aaaa0006 function=hrtimer_wakeup now=1000005131000
          <idle>-0       [000] d.h3.  1000.005140: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  1000.005150: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..1.  1000.006001: hrtimer_start: hrtimer=00000000aaaa0007 function=hrtimer_wakeup expires=1000006150100 softexpires=1000006100100 mode=REL was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.006002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d.h1.  1000.006120: hrtimer_expire_entry: hrtimer=00000000bbbb0001 function=tick_nohz_handler now=1000006120000
          <idle>-0       [000] d.h1.  1000.006151: hrtimer_expire_entry: hrtimer=00000000aaaa0007 function=hrtimer_wakeup now=1000006150500
          <idle>-0       [000] d.h3.  1000.006152: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  1000.006160: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
 sleeplab-explai-500     [000] d..1.  1000.007001: hrtimer_start: hrtimer=00000000aaaa0008 function=hrtimer_wakeup expires=1000007150100 softexpires=1000007100100 mode=REL was_armed=0
 sleeplab-explai-500     [000] d..1.  1000.008001: hrtimer_start: hrtimer=00000000aaaa0009 function=hrtimer_wakeup expires=1000008150300 softexpires=1000008100300 mode=REL was_armed=0
 sleeplab-explai-500     [000] d.h1.  1000.008176: hrtimer_expire_entry: hrtimer=00000000aaaa0009 function=hrtimer_wakeup now=1000008176000
 sleeplab-explai-500     [000] d.h2.  1000.008177: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
CPU:1 [LOST 3 EVENTS]
 sleeplab-explai-500     [000] d..1.  1000.009001: hrtimer_start: hrtimer=00000000aaaa000a function=hrtimer_wakeup expires=1000009150000 softexpires=1000009100000 mode=ABS was_armed=0
 sleeplab-explai-500     [000] d..2.  1000.009002: sched_switch: prev_comm=sleeplab-explai prev_pid=500 prev_prio=120 prev_state=S ==> next_comm=swapper/0 next_pid=0 next_prio=120
          <idle>-0       [000] d..1.  1000.009003: cpu_idle: state=1 cpu_id=0
          <idle>-0       [000] d.h1.  1000.009149: irq_handler_entry: irq=11 name=virtio0
          <idle>-0       [000] d.h1.  1000.009151: irq_handler_exit: irq=11 ret=handled
          <idle>-0       [000] d..1.  1000.009152: cpu_idle: state=4294967295 cpu_id=0
          <idle>-0       [000] d..1.  1000.009153: cpu_idle: state=1 cpu_id=0
          <idle>-0       [000] d.h1.  1000.009160: local_timer_entry: vector=236
          <idle>-0       [000] d.h1.  1000.009161: hrtimer_expire_entry: hrtimer=00000000aaaa000a function=hrtimer_wakeup now=1000009160500
          <idle>-0       [000] d.h3.  1000.009162: sched_waking: comm=sleeplab-explai pid=500 prio=120 target_cpu=000
          <idle>-0       [000] d..2.  1000.009170: sched_switch: prev_comm=swapper/0 prev_pid=0 prev_prio=120 prev_state=R ==> next_comm=sleeplab-explai next_pid=500 next_prio=120
"""
SELF_TEST_SYS = """\
 sleeplab-explai-500     [000] .....  1000.000273: sys_exit: NR 230 = 0
 sleeplab-explai-500     [000] .....  1000.001140: sys_exit: NR 202 = -110
 sleeplab-explai-500     [000] .....  1000.002171: sys_exit: NR 230 = 0
 sleeplab-explai-500     [000] .....  1000.003300: sys_exit: NR 230 = 0
 sleeplab-explai-500     [000] .....  1000.005151: sys_exit: NR 230 = 0
 sleeplab-explai-500     [000] .....  1000.006161: sys_exit: NR 230 = 0
 sleeplab-explai-500     [000] .....  1000.008185: sys_exit: NR 230 = 0
 sleeplab-explai-500     [000] .....  1000.009171: sys_exit: NR 230 = 0
"""
# (start, deadline, end, traced, blocked, {component column: ns}) of explain's rows.
SELF_TEST_ROWS = [
    # A: idle; a tick re-armed in an interrupt and a scheduler timer also armed by the
    # thread, neither its own.
    (1000000100000, 1000000200000, 1000000273600, "true", "true",
     dict(entry_ns=300, slack_ns=50000, timer_irq_ns=12500, idle_wakeup_ns=9300,
          kernel_exit_ns=900, return_ns=600)),
    # B: the timer ran early (now < hard); preempted after its system call returned at
    # the very µs it came on CPU (the two instances' lines tie).
    (1000001000000, 1000001100000, 1000001147000, "true", "true",
     dict(entry_ns=200, slack_ns=30200, timer_irq_ns=500, run_queue_ns=14100,
          kernel_exit_ns=300, return_ns=1700)),
    # C: explain found no switch-out to sleep, the text trace did.
    (1000002000000, 1000002100000, 1000002172000, "true", "false", dict(spin_ns=72000)),
    # D: neither has the switch-in.
    (1000003000000, 1000003100000, 1000003301000, "false", "true",
     dict(entry_ns=100, slack_ns=50000, timer_irq_ns=1800, unexplained_ns=149100)),
    # E: the text trace lacks the sys_exit.
    (1000004000000, 1000004100000, 1000004162000, "true", "true",
     dict(entry_ns=100, slack_ns=50000, timer_irq_ns=1900, idle_wakeup_ns=8000,
          kernel_exit_ns=1000, return_ns=1000)),
    # F: soft expiry before the deadline (slack clipped); explain's sys_exit record
    # 3.5 µs later than the text trace's.
    (1000005000000, 1000005100000, 1000005160000, "true", "true",
     dict(slack_ns=30000, timer_irq_ns=10200, idle_wakeup_ns=9700, kernel_exit_ns=4600,
          return_ns=5500)),
    # G: explain took another timer (soft = hard = deadline + 20 µs).
    (1000006000000, 1000006100000, 1000006162000, "true", "true",
     dict(entry_ns=20000, timer_irq_ns=32000, idle_wakeup_ns=8000, kernel_exit_ns=1000,
          return_ns=1000)),
    # H: never blocked, by both.
    (1000007000000, 1000007100000, 1000007100500, "true", "false", dict(spin_ns=500)),
    # I: no switch-out in either, but its timer ran 26 µs late and woke it on the CPU.
    (1000008000000, 1000008100000, 1000008186000, "true", "false", dict(spin_ns=86000)),
    # J: idle CPU 0 stopped (cpu_idle state 1) when the timer ran at its hard expiry
    # (150 µs); a device interrupt had ended the stop at 149, the idle loop ran until it
    # stopped again at 153, the local timer entered at 160: 7 µs delivery, 3 µs of it
    # the guest's (timer_irq).
    (1000009000000, 1000009100000, 1000009171500, "true", "true",
     dict(slack_ns=50000, idle_delivery_ns=7000, timer_irq_ns=5000, idle_wakeup_ns=8000,
          kernel_exit_ns=1000, return_ns=500)),
]


def self_test_csv():
    cols = ["overrun_ns", "entry_ns", "slack_ns", "timer_irq_ns", "idle_wakeup_ns",
            "run_queue_ns", "kernel_exit_ns", "return_ns", "spin_ns", "unexplained_ns",
            "idle_delivery_ns"]
    head = ("mechanism,requested_ns,load,timer_slack_ns,index,deadline_ns,end_ns,lateness_ns,"
            + ",".join(cols) + ",holder,traced,blocked,partial,schema_version,tid,start_ns,round")
    out = [head]
    for i, (start, deadline, end, traced, blocked, parts) in enumerate(SELF_TEST_ROWS):
        assert sum(parts.values()) == end - deadline, i
        out.append(f"nanosleep,100000,0,50000,{i},{deadline},{end},{end - deadline},"
                   + ",".join(str(parts.get(c, 0)) for c in cols)
                   + f",,{traced},{blocked},false,2,500,{start},{i}")
    return "\n".join(out) + "\n"


def self_test():
    # Stamps: µs rounded by the kernel (± 0.5 µs), nine decimals exact.
    assert stamp_ns("1263", "269783") == (1263269783000, 1000)
    assert stamp_ns("1263", "269783123") == (1263269783123, 1)
    # Lines with a tgid column, a comm with spaces and dashes, and no irq-info column.
    tr = Trace(" kworker/0:1-ev-12  (   12) [001] d.h2.  5.000001: sched_waking: comm=a b pid=7 prio=120 target_cpu=001\n"
               "   lto cgu.01-30428 [000]  5.000002500: sys_exit: NR 0 = 8\n")
    e, x = tr.events
    assert (e.pid, e.cpu, e.irq, e.t, e.f["pid"]) == (12, 1, True, 5000001000, "7"), vars(e)
    assert (x.pid, x.cpu, x.irq, x.t, x.res) == (30428, 0, False, 5000002500, 1), vars(x)

    tr = Trace(SELF_TEST_SCHED, SELF_TEST_SYS)
    assert tr.lost == 3 and len(tr.events) == 63, (tr.lost, len(tr.events))
    want = {
        # A: own timer aaaa0001 (not the tick armed in the interrupt, nor dl_task_timer):
        # slack 200.3 → 250.3 µs, timer irq → waking 263, on CPU 272, sys_exit 273.
        0: {"slack": 50000, "idle delivery": 0, "timer interrupt": 12700, "idle wakeup": 9000, "run queue": 0, "on CPU → sys_exit": 1000},
        # B: ran at now 130.4 µs; waking 131 while lto cgu.01 held the CPU, on 140 and
        # sys_exit 140 (tied), preempted 141 → 146: 9 + 5 µs of run queue.
        1: {"slack": 30200, "idle delivery": 0, "timer interrupt": 600, "idle wakeup": 0, "run queue": 14000, "on CPU → sys_exit": 0},
        2: {"slack": 50000, "idle delivery": 0, "timer interrupt": 10900, "idle wakeup": 9000, "run queue": 0, "on CPU → sys_exit": 1000},
        3: "switch-in",
        4: "sys_exit",
        # F: slack from the deadline (100 µs) to the hard expiry (130 µs).
        5: {"slack": 30000, "idle delivery": 0, "timer interrupt": 10000, "idle wakeup": 10000, "run queue": 0, "on CPU → sys_exit": 1000},
        6: {"slack": 50000, "idle delivery": 0, "timer interrupt": 1900, "idle wakeup": 8000, "run queue": 0, "on CPU → sys_exit": 1000},
        7: "did not block",
        # I: on CPU from the wakeup (177 µs) to its sys_exit (185 µs).
        8: {"slack": 50000, "idle delivery": 0, "timer interrupt": 26700, "idle wakeup": 0, "run queue": 0, "on CPU → sys_exit": 8000},
        # J: 7 µs delivered to the stopped CPU, 3 µs of the guest's idle loop in it.
        9: {"slack": 50000, "idle delivery": 7000, "timer interrupt": 5000, "idle wakeup": 8000, "run queue": 0, "on CPU → sys_exit": 1000},
    }
    for i, (start, deadline, end, *_rest) in enumerate(SELF_TEST_ROWS):
        parts, instants, missing = read_wake(tr, 500, start, deadline, end)
        got = parts if parts is not None else missing
        assert got == want[i], (i, got, want[i])
    _, inst, _ = read_wake(tr, 500, *SELF_TEST_ROWS[0][:3])
    assert inst["timer"] == "hrtimer_wakeup" and inst["ran"] == 1000000250300, inst

    rows = list(csv.DictReader(self_test_csv().splitlines()))
    evidence = []
    pairs, counts, missing_by = compare(tr, rows, evidence)
    assert counts == {"wakes": 10, "compared": 7, "untraced": 1, "untraced, text complete": 0,
                      "no block (both)": 1, "woken on CPU": 1, "no block (explain only)": 1,
                      "text incomplete": 1, "classes": {"no block": 1, "one late record": 1,
                                                        "other timer": 1, "woken on CPU": 1},
                      "late": [("sys_exit", 3500)]}, counts
    assert missing_by == {"sys_exit": 1}, missing_by
    # Compared: A, B, C, F, G, I, J, each wake its own round here.
    assert pairs["slack"] == [(50000, 50000, 0), (30200, 30200, 1), (50000, 0, 2),
                              (30000, 30000, 5), (50000, 0, 6), (50000, 0, 8),
                              (50000, 50000, 9)], pairs["slack"]
    assert pairs["on CPU → sys_exit"] == [(1000, 900, 0), (0, 300, 1), (1000, 0, 2),
                                          (1000, 4600, 5), (1000, 1000, 6), (8000, 0, 8),
                                          (1000, 1000, 9)], pairs["on CPU → sys_exit"]
    assert agreeing(pairs["slack"]) == [(1, 1), (1, 1), (0, 1), (1, 1), (0, 1), (0, 1), (1, 1)]
    # Each merged pair of before is compared on its own: J's delivery and the guest's
    # share of it, B's run queue (the task that held the CPU) apart from A's idle wakeup.
    assert pairs["idle delivery"][-1] == (7000, 7000, 9), pairs["idle delivery"]
    assert pairs["timer interrupt"][-1] == (5000, 5000, 9), pairs["timer interrupt"]
    assert pairs["run queue"][:2] == [(0, 0, 0), (14000, 14100, 1)], pairs["run queue"]
    assert pairs["idle wakeup"][:2] == [(9000, 9300, 0), (0, 0, 1)], pairs["idle wakeup"]
    # Evidence: E (text incomplete) and the three that disagree, with their lines.
    assert len(evidence) == 5 and "[one late record] on CPU → sys_exit: text trace 1000 ns, " \
        "explain 4600 ns" in evidence[2], evidence
    assert "explain implied: soft 1000005100000 (+20000), ran 1000005130000 (+0), waking " \
        "1000005140200 (+200), on CPU 1000005149900 (-100), sys_exit 1000005154500 (+3500)" \
        in evidence[2], evidence[2]
    assert "1000.005140: sched_waking" in evidence[2]

    # The delivery column is read where told, 0 where empty or absent.
    assert ns_col({"idle_delivery_ns": ""}, "idle_delivery_ns") == 0
    assert ns_col({}, "idle_delivery_ns") == 0
    assert ns_col({"idle_delivery_ns": "700"}, "idle_delivery_ns") == 700
    # Judged over rounds: all agreeing in ten rounds meets; 90 % in each misses; one bad
    # round of ten leaves it undecided; seven rounds are too few.
    assert agreement([]) is None and agreement([(50, 50)] * 7) is None
    assert agreement([(100, 100)] * 10) == "met" and agreement([(90, 100)] * 10) == "missed"
    assert agreement([(100, 100)] * 9 + [(60, 100)]) == INDISTINGUISHABLE

    body = section(self_test_csv(), [SELF_TEST_SCHED, SELF_TEST_SYS], "scripts/explain-independent.sh",
                   "sched cpu0: 40 events, 0 overrun, 0 dropped")
    for line in [
        "63 events read from the text traces, which report 3 lost.",
        "Compared: slack, idle_delivery, timer_irq, idle_wakeup, run_queue and kernel_exit, "
        "each on its own. The text reader shares the account's rules",
        "| nanosleep | 100.00 µs | 0 | 10 | 7 | 1 (0) | 1 / 1 / 1 | 1 (1 no sys_exit) |",
        # Four of seven within 2 µs, in seven rounds: too few rounds for a verdict.
        "| nanosleep | 100.00 µs | 0 | slack | 7 | – 4 of 7 (57.1 %; no interval: 7 rounds, "
        "fewer than 8) | 50.00 µs / – | 30.00 µs / – |",
        "| nanosleep | 100.00 µs | 0 | idle delivery | 7 | – 7 of 7 (100.0 %; no interval",
        "| nanosleep | 100.00 µs | 0 | idle wakeup | 7 | – 6 of 7 (85.7 %; no interval",
        "| nanosleep | 100.00 µs | 0 | run queue | 7 | – 7 of 7 (100.0 %; no interval",
        "- slack: 0 of 1 cells agree, 0 disagree, 0 undecided (indistinguishable in this "
        "run), 1 not judged (fewer than 8 rounds)",
        "- – overall (a pair agrees when at least 95 % of its wakes lie within 2.00 µs): 0 "
        "of 6 (cell, component) pairs agree, 0 disagree, 0 undecided",
        "- 4 of 7 compared wakes disagree (beyond 2.00 µs) on at least one component:",
        "  - 1: no switch-out to sleep in either trace, but the thread's own timer ran late",
        "  - 1: explain found no switch-out to sleep",
        "  - 1: explain's timer is not the thread's own",
        "  - 1: one event's record in explain's instance is later than the reader's by more "
        "than 1.5 µs, every other instant agreeing (explain's probe runs after the reader's "
        "on the same tracepoint call) (1 sys_exit; later by 3.50 µs to 3.50 µs)",
        "- the reader's tracefs instances: sched cpu0: 40 events, 0 overrun, 0 dropped",
    ]:
        assert any(l.startswith(line) for l in body.splitlines()), (line, body)
    print("self-test ok")


def main(argv):
    if argv == ["--self-test"]:
        self_test()
        return 0
    evidence_path = None
    if "--evidence" in argv:
        i = argv.index("--evidence")
        evidence_path = argv[i + 1]
        argv = argv[:i] + argv[i + 2:]
    if len(argv) not in (4, 5):
        print(__doc__, file=sys.stderr)
        return 2
    texts = []
    for path in argv[:3]:
        with open(path) as f:
            texts.append(f.read())
    evidence = [] if evidence_path else None
    print(section(texts[0], texts[1:], argv[3], argv[4] if len(argv) == 5 else "", evidence))
    if evidence_path:
        with open(evidence_path, "w") as f:
            f.write("\n\n".join(evidence) + ("\n" if evidence else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
