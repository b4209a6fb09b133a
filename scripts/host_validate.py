"""The reader behind scripts/host-validate.sh: explain's time with no guest event
(`spin_gap`, and `idle_delivery` where a tail wake holds one; one `host` in older
results) checked against what a plain-text trace shows, with no code shared with
sleeplab's tracer, and against the steal the guest kernel accounts.

Three checks, each over the units its samples vary by:

1. **What interrupts a spin** (scripts/host-spin.c, a spin that never sleeps and one
   that follows a halt): each gap of at least 5 µs between the spinner's clock reads is
   split at the guest's own work the text trace records on that CPU — an interrupt or a
   softirq from its entry to its exit (nested ones merged), a switch away from the
   spinner until it is back — and the rest of the gap is the host's. A gap with no guest
   event within it (± GUARD_NS) is all the host's. A gap with no guest work inside it but
   an event within GUARD_NS of an end (the µs stamps cannot tell whether it fell inside)
   is untold: neither the host's nor the guest's. The host's share of the spin time is
   judged over rounds (`quantiles.ratio_ci`), over the rounds whose spinner kept every gap
   and whose trace dropped no event (a lost interrupt entry would turn guest work into
   the host's).
2. **Steal**: per round, the CPU's steal over the C spin (/proc/stat, in USER_HZ ticks)
   against the host time found in that spin (the spin covers the whole run, so every
   moment the host took is in a gap). Steal agrees where the interval over rounds of
   their ratio lies within STEAL_TOLERANCE of 1; not judged where no steal was accounted
   (a hypervisor that accounts none).
3. **explain's per-wake host**: in the same run, each `spin` and `precise` wake whose
   lateness was all spent spinning (components spin, host, run_queue, return) is read
   again from the text trace: lateness − the guest's interrupts and softirqs in
   [deadline, end] − the time switched away is the host's. Compared are the wakes late
   by at least the spin log's threshold (MIN_GAP_NS: one late by less may hold a gap
   too short to be logged, which explain books as spin); a wake agrees within
   explain_crosscheck.AGREE_NS, a cell where the interval over explain's rounds of its
   share of agreeing wakes lies at or above AGREE_SHARE. Not judged where the text trace
   of that run dropped events.

And what share of the sleepers' tails explain gives the host: per round, over the
wakes at or above that round's p99, summed host over summed lateness; a round in which a
tail wake's host share was not told (explain could not place the interrupt's CPU) is left
out, not counted as 0.

    python3 scripts/host_validate.py COMMAND USER_HZ EXPLAIN.json EXPLAIN_TRACE.txt DROPPED ROUND_DIR...
    python3 scripts/host_validate.py --self-test
"""
import bisect
import json
import statistics
import sys

from bench_doc import mark, share_outcome, share_text, verdict_line
from explain_crosscheck import AGREE_NS, AGREE_SHARE
from quantiles import (INDISTINGUISHABLE, MIN_UNITS, by_unit, counted_by_unit, fmt_ci, quantile,
                       ratio_ci, share_ci)
from text_trace import LINE, SWITCH, stamp_ns

# A guest event this close to a gap's ends (the text trace's µs stamps) counts as in it.
GUARD_NS = 1_000
# The spin log keeps gaps of at least this long (sleeplab's SPIN_GAP_NS, host-spin.c's
# threshold): a wake late by less may hold a shorter gap that explain books as spin, so
# only wakes late by at least this much are compared.
MIN_GAP_NS = 5_000
# Steal agrees with the host time within this share.
STEAL_TOLERANCE = 0.20
# The components of a wake whose lateness was all spent spinning (`host`: results
# written before explain told an idle CPU's delivery from a spin's gaps).
SPINNING = {"spin", "spin_gap", "host", "run_queue", "return"}
# explain's stretches with no guest event: an idle CPU's timer delivery, a spin's gaps.
NO_GUEST = ("idle_delivery", "spin_gap")


def no_guest_ns(parts: dict):
    """A wake's stretches with no guest event, as explain told them: idle_delivery +
    spin_gap (one `host` in results written before they were told apart); None where
    not told."""
    told = [parts[k] for k in NO_GUEST if parts.get(k) is not None]
    return sum(told) if told else parts.get("host")


def fmt_ns(ns) -> str:
    """ns in the unit that suits it."""
    if ns is None:
        return "–"
    ns = float(ns)
    for unit, scale in (("s", 1e9), ("ms", 1e6), ("µs", 1e3)):
        if abs(ns) >= scale:
            return f"{ns / scale:.1f} {unit}"
    return f"{ns:.0f} ns"


def guest_work(text, tid):
    """The guest's own work in a one-CPU text trace, as seen by thread `tid`: the
    stretches (from, to, what) in which it ran an interrupt or softirq (entry to exit,
    nested ones merged, `what` the outermost event's name less `_entry`) or ran another
    task (a switch away from `tid` until the switch back, `what` = "switch"); and every
    event's stamp, in time order."""
    work, stamps = [], []
    depth, opened, what, away = 0, 0, "", None
    for line in text.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        t, _ = stamp_ns(m.group("secs"), m.group("frac"))
        name = m.group("event")
        stamps.append(t)
        if name.endswith("_entry"):
            if depth == 0:
                opened, what = t, name[:-len("_entry")]
            depth += 1
        elif name.endswith("_exit") and depth > 0:
            depth -= 1
            if depth == 0:
                work.append((opened, t, what))
        elif name == "sched_switch":
            f = SWITCH.match(m.group("args"))
            if f and int(f["prev"]) == tid:
                away = t
            elif f and int(f["next"]) == tid and away is not None:
                work.append((away, t, "switch"))
                away = None
    work.sort()
    stamps.sort()
    return work, stamps


def busy_in(work, lo, hi) -> tuple[int, set]:
    """The guest's work inside [lo, hi]: ns covered (overlaps merged) and what it was."""
    covered, whats, at = 0, set(), lo
    for a, b, what in work:
        if b <= lo or a >= hi:
            continue
        whats.add(what)
        a, b = max(a, at), min(b, hi)
        if b > a:
            covered += b - a
            at = b
    return covered, whats


def events_near(stamps, lo, hi) -> bool:
    """Whether any event stamp lies in [lo − GUARD_NS, hi + GUARD_NS]."""
    i = bisect.bisect_left(stamps, lo - GUARD_NS)
    return i < len(stamps) and stamps[i] <= hi + GUARD_NS


def read_gaps(text) -> dict:
    """scripts/host-spin.c's output (and the shell's steal and dropped lines)."""
    out = {"gaps": [], "steal_ticks": 0, "dropped_events": 0, "dropped": 0}
    for line in text.splitlines():
        w = line.split()
        if not w:
            continue
        if w[0] == "gap":
            out["gaps"].append((int(w[1]), int(w[2])))
        elif w[0] == "span":
            out["span"] = (int(w[1]), int(w[2]))
        elif w[0] in ("tid", "spun", "steal_ticks", "dropped", "dropped_events"):
            if len(w) < 2:  # a count the shell could not read is not a zero
                raise ValueError(f"gaps file: no value for {w[0]}")
            out[w[0]] = int(w[1])
    return out


def cause(whats) -> str:
    """The class of a gap by the guest work in it."""
    if not whats:
        return "no guest event"
    if "switch" in whats:
        return "a switch away"
    if "local_timer" in whats:
        return "the guest's timer interrupt"
    if whats <= {"softirq"}:
        return "a softirq"
    return "another interrupt"


# An event within GUARD_NS of a gap's end but no guest work inside it: untold.
AT_EDGE = "an event at its edge (untold)"
CAUSES = ["no guest event", "the guest's timer interrupt", "a softirq", "another interrupt",
          "a switch away", AT_EDGE]


def classify(run: dict, work, stamps) -> dict:
    """One C spin's gaps split: host ns, guest ns, untold ns (a gap with no guest work
    inside but an event at its edge), per cause the gaps' lengths, and what was lost: gaps
    the spinner could not keep, events the trace dropped."""
    host = guest = untold = 0
    by = {c: [] for c in CAUSES}
    for f, t in run["gaps"]:
        covered, whats = busy_in(work, f, t)
        if not whats and events_near(stamps, f, t):
            by[AT_EDGE].append(t - f)
            untold += t - f
            continue
        by[cause(whats)].append(t - f)
        host += (t - f) - covered
        guest += covered
    return {"host": host, "guest": guest, "untold": untold, "by": by, "spun": run.get("spun", 0),
            "steal": run["steal_ticks"], "gaps_dropped": run["dropped"],
            "events_dropped": run["dropped_events"]}


def whole(rounds: list) -> list:
    """The rounds that lost nothing: every gap kept, no trace event dropped."""
    return [r for r in rounds if r["gaps_dropped"] == 0 and r["events_dropped"] == 0]


def c_spin_table(kinds: dict) -> list[str]:
    """The table of what interrupted the C spins, one row per kind of spin."""
    out = ["| spin | rounds (whole) | spun | gaps ≥ 5 µs | time lost | the host's share of the spin "
           "[95 % over the whole rounds] | " + " | ".join(CAUSES) + " |",
           "|---|---:|---:|---:|---:|---:|" + "---:|" * len(CAUSES)]
    for kind, rounds in kinds:
        spun = sum(r["spun"] for r in rounds)
        gaps = sum(len(v) for r in rounds for v in r["by"].values())
        lost = sum(r["host"] + r["guest"] + r["untold"] for r in rounds)
        kept = whole(rounds)
        share = ratio_ci([r["host"] for r in kept], [r["spun"] for r in kept])
        point = sum(r["host"] for r in rounds) / spun if spun else 0
        cells = []
        for c in CAUSES:
            lens = [x for r in rounds for x in r["by"][c]]
            med = statistics.median(lens) if lens else None
            cells.append(f"{len(lens)} (median {fmt_ns(med)})" if lens else "0")
        out.append(f"| {kind} | {len(rounds)} ({len(kept)}) | {fmt_ns(spun)} | {gaps} ({gaps / (spun / 1e9):.0f}/s) | "
                   f"{100 * lost / spun:.2f} % | {100 * point:.2f} % "
                   f"{fmt_ci(share, lambda v: f'{100 * v:.2f} %')} | " + " | ".join(cells) + " |")
    return out


def steal_verdict(rounds: list, hz: int) -> str:
    """Steal over the C spins against the host time found in them, over the rounds that
    lost nothing."""
    rounds = whole(rounds)
    tick = 1e9 / hz
    steal = [r["steal"] * tick for r in rounds]
    host = [r["host"] for r in rounds]
    total_s, total_h = sum(steal), sum(host)
    head = (f"steal accounted over the spins: {fmt_ns(total_s)} ({sum(r['steal'] for r in rounds)} ticks "
            f"of {fmt_ns(tick)}) against {fmt_ns(total_h)} of host time found in their gaps")
    if total_s == 0:
        return (f"- – steal within {STEAL_TOLERANCE:.0%} of the host time: not judged, the guest "
                f"accounted no steal over {len(rounds)} spins ({head}): this hypervisor "
                "does not report it, or only for a vCPU preempted while runnable")
    c = ratio_ci(steal, host)
    if c is None:
        why = (f"fewer than {MIN_UNITS} rounds that lost nothing" if len(rounds) < MIN_UNITS
               else "no host time found in the spins")
        return f"- – steal within {STEAL_TOLERANCE:.0%} of the host time: not judged ({why}; {head})"
    lo, hi = c
    if lo >= 1 - STEAL_TOLERANCE and hi <= 1 + STEAL_TOLERANCE:
        outcome = "met"
    elif hi < 1 - STEAL_TOLERANCE or lo > 1 + STEAL_TOLERANCE:
        outcome = "missed"
    else:
        outcome = INDISTINGUISHABLE
    ratio = total_s / total_h if total_h else float("inf")
    text = (f"steal ÷ host time {ratio:.2f} [{lo:.2f}–{hi:.2f}] over {len(rounds)} rounds; "
            f"target within {STEAL_TOLERANCE:.0%} of 1 ({head})")
    if outcome == INDISTINGUISHABLE:
        return f"- ⚪ steal within {STEAL_TOLERANCE:.0%} of the host time: undecided, the interval straddles the bound: {text}"
    return f"- {mark(outcome)} steal within {STEAL_TOLERANCE:.0%} of the host time: {text}"


def wake_pairs(cell: dict, work) -> tuple[list, int, int]:
    """explain's host against the text trace's, per wake of `cell` whose lateness was all
    spent spinning and is at least MIN_GAP_NS (a wake late by less may hold a gap too
    short for the spin log, which explain then books as spin): (round, explain ns, text
    ns) triples, wakes left out (not spent spinning), and wakes too little late to
    compare."""
    pairs, left, small = [], 0, 0
    for w in cell.get("wakes", []):
        parts = w.get("components") or {}
        host = no_guest_ns(parts)
        late = w["lateness_ns"]
        if host is None or not w.get("traced", True) or {k for k, v in parts.items() if v} - SPINNING:
            left += 1
            continue
        if late < MIN_GAP_NS:
            small += 1
            continue
        deadline, end = w["deadline_ns"], w["end_ns"]
        covered, _ = busy_in(work, deadline, end)
        text_host = max(0, late - covered)
        pairs.append((w.get("round", 0), host, text_host))
    return pairs, left, small


def tail_share(cell: dict):
    """Per round, over the wakes at or above the round's p99: (summed host, summed
    lateness), and the rounds left out because a tail wake's host was not told (no
    `host` component: explain could not place the interrupt's CPU). Rounds with fewer
    than 100 wakes give none."""
    units, untold = [], 0
    for wakes in by_unit((w.get("round", 0), w) for w in cell.get("wakes", [])):
        lat = [w["lateness_ns"] for w in wakes]
        p99 = quantile(lat, 0.99)
        if p99 is None:
            continue
        tail = [w for w in wakes if w["lateness_ns"] >= p99]
        hosts = [no_guest_ns(w.get("components") or {}) for w in tail]
        if any(h is None for h in hosts):
            untold += 1
            continue
        units.append((sum(hosts), sum(w["lateness_ns"] for w in tail)))
    return units, untold


def wake_lines(cells: list, works: dict, dropped: int) -> list[str]:
    """The per-wake check of explain's host in its `spin` and `precise` cells, each wake
    read against the guest work its own thread saw (`works`: tid → guest_work); not
    judged where the text trace dropped events (`dropped`)."""
    out = []
    for cell in cells:
        mech = cell["mechanism"]
        if mech not in ("spin", "precise"):
            continue
        pairs, left, small = [], 0, 0
        for tid, wakes in by_tid(cell).items():
            p, l, b = wake_pairs({"wakes": wakes}, works.get(tid, []))
            pairs, left, small = pairs + p, left + l, small + b
        units = counted_by_unit(((r, a - b) for r, a, b in pairs), lambda d: abs(d) <= AGREE_NS)
        outcome = share_outcome(units, AGREE_SHARE) if dropped == 0 else None
        hosts = sum(a for _, a, _ in pairs)
        texts = sum(b for _, _, b in pairs)
        detail = (f"{share_text(units)} of the {len(pairs)} wakes late by at least "
                  f"{fmt_ns(MIN_GAP_NS)} (the spin log's threshold) and spent spinning agree "
                  f"within {fmt_ns(AGREE_NS)} (explain's spin gaps {fmt_ns(hosts)} in all, the text "
                  f"trace's {fmt_ns(texts)}); left out: {left} wakes not spent spinning, {small} "
                  "late by less")
        label = f"{mech}: explain's spin gaps per wake against the text trace's (at least {AGREE_SHARE:.0%} agree)"
        if outcome is None:
            why = (f"the text trace dropped {dropped} events" if dropped
                   else f"fewer than {MIN_UNITS} rounds or no such wakes")
            detail = f"{why}: {detail}"
        out.append(verdict_line(label, outcome, detail, INDISTINGUISHABLE))
    return out


def by_tid(cell: dict) -> dict:
    """A cell's wakes grouped by their thread id."""
    out = {}
    for w in cell.get("wakes", []):
        out.setdefault(w.get("tid"), []).append(w)
    return out


def tail_lines(cells: list) -> list[str]:
    """The share of each cell's tail with no guest event, over rounds."""
    out = []
    for cell in cells:
        units, untold = tail_share(cell)
        left = f"; {untold} rounds left out: a tail wake's no-guest time not told" if untold else ""
        if not units:
            out.append(f"- {cell['mechanism']}: no round with the 100 wakes a p99 needs and "
                       f"every tail wake's no-guest time told{left}")
            continue
        h, n = sum(u[0] for u in units), sum(u[1] for u in units)
        c = share_ci(units)
        out.append(f"- {cell['mechanism']}: {100 * h / n:.1f} % "
                   f"{fmt_ci(c, lambda v: f'{100 * v:.1f} %')} of the tail's lateness "
                   f"({fmt_ns(n)} over {len(units)} rounds{left})")
    return out


def main(argv) -> None:
    command, hz, explain_path, trace_path, dropped = argv[:5]
    hz = int(hz)
    # (label, subdirectory of each round, its rounds)
    kinds = [("spinning throughout", "spin", []), ("after a halt (last 1 ms of every 4 ms)", "after-halt", [])]
    for d in argv[5:]:
        for _, sub, rounds in kinds:
            with open(f"{d}/{sub}/gaps.txt") as f:
                run = read_gaps(f.read())
            with open(f"{d}/{sub}/trace.txt") as f:
                work, stamps = guest_work(f.read(), run.get("tid", -1))
            rounds.append(classify(run, work, stamps))
    kinds = [(label, rounds) for label, _, rounds in kinds]
    with open(explain_path) as f:
        doc = json.load(f)
    cells = doc["data"]["cells"]
    with open(trace_path) as f:
        text = f.read()
    works = {tid: guest_work(text, tid)[0] for c in cells for tid in by_tid(c) if tid is not None}
    gaps_dropped = sum(r["gaps_dropped"] for _, rs in kinds for r in rs)
    events_dropped = sum(r["events_dropped"] for _, rs in kinds for r in rs)
    dropped = int(dropped)
    lines = [f"Command: `{command}`", "",
             "What stopped a spinning thread on the measured CPU, gap by gap, from the C "
             "spinner's clock reads and the text trace alone (gaps counted, with their median "
             "length, by the guest's work inside them):", ""]
    lines += c_spin_table(kinds)
    lines += ["", f"Gaps the spinner could not keep: {gaps_dropped}; events the C spins' traces "
              f"dropped: {events_dropped} (a round that lost either is left out of the intervals).", ""]
    lines.append(steal_verdict(kinds[0][1], hz))
    lines += wake_lines(cells, works, dropped)
    lines += ["", "The share of each cell's tail with no guest event in explain's run (per round, "
              "the wakes at or above its p99: summed idle_delivery + spin_gap over summed "
              "lateness, read as the host's on this VM; the interval over rounds):", ""]
    lines += tail_lines(cells)
    steal = doc["data"].get("tracing", {}).get("steal_ns")
    lines += ["", f"explain's run: steal {fmt_ns(steal)} over it; the text trace dropped "
              f"{dropped} events."]
    print("\n".join(lines))


def self_test() -> None:
    """Hand-computed cases."""
    trace = "\n".join([
        "  host-spin-42  [000] d.h1.  100.000010: local_timer_entry: vector=236",
        "  host-spin-42  [000] d.h1.  100.000013: local_timer_exit: vector=236",
        "  host-spin-42  [000] ..s1.  100.000014: softirq_entry: vec=1 [action=TIMER]",
        "  host-spin-42  [000] ..s1.  100.000016: softirq_exit: vec=1 [action=TIMER]",
        "  host-spin-42  [000] d..2.  100.000050: sched_switch: prev_comm=host-spin prev_pid=42 "
        "prev_prio=120 prev_state=R ==> next_comm=kworker next_pid=7 next_prio=120",
        "  kworker-7     [000] d..2.  100.000060: sched_switch: prev_comm=kworker prev_pid=7 "
        "prev_prio=120 prev_state=I ==> next_comm=host-spin next_pid=42 next_prio=120",
    ])
    work, stamps = guest_work(trace, 42)
    t0 = 100_000_000_000
    assert work == [(t0 + 10_000, t0 + 13_000, "local_timer"), (t0 + 14_000, t0 + 16_000, "softirq"),
                    (t0 + 50_000, t0 + 60_000, "switch")], work
    # A gap holding the timer interrupt and its softirq: 5 µs of guest work, 15 µs host.
    assert busy_in(work, t0 + 5_000, t0 + 25_000) == (5_000, {"local_timer", "softirq"})
    run = {"gaps": [(t0 + 5_000, t0 + 25_000), (t0 + 30_000, t0 + 40_000), (t0 + 48_000, t0 + 62_000)],
           "steal_ticks": 0, "dropped_events": 0, "dropped": 0, "spun": 1_000_000}
    got = classify(run, work, stamps)
    # Gap 2 (30–40 µs) has no event within ±1 µs: 10 µs host. Gap 3 holds a 10 µs switch.
    assert got["host"] == 15_000 + 10_000 + 4_000 and got["guest"] == 5_000 + 10_000, got
    assert [len(got["by"][c]) for c in CAUSES] == [1, 1, 0, 0, 1, 0], got["by"]
    # A gap ending 0.4 µs before the timer's entry (no work inside, an event at its edge)
    # is untold: neither the host's nor the guest's.
    edge = classify({**run, "gaps": [(t0 + 600, t0 + 9_600)]}, work, stamps)
    assert (edge["host"], edge["guest"], edge["untold"]) == (0, 0, 9_000), edge
    assert len(edge["by"][AT_EDGE]) == 1
    # A round whose spinner lost a gap or whose trace dropped an event is not whole.
    assert whole([got, {**got, "gaps_dropped": 1}, {**got, "events_dropped": 2}]) == [got]
    # An event 0.5 µs past a gap's end is near it: not the host's alone.
    assert events_near(stamps, t0 + 0, t0 + 9_500) and not events_near(stamps, t0 + 20_000, t0 + 45_000)
    # explain's host against the text trace's: a spin wake late by 20 µs across the
    # timer interrupt and softirq (5 µs guest work) has 15 µs host.
    cell = {"mechanism": "spin", "wakes": [
        {"round": 0, "deadline_ns": t0 + 5_000, "end_ns": t0 + 25_000, "lateness_ns": 20_000,
         "components": {"spin": 5_000, "host": 15_000}},
        {"round": 0, "deadline_ns": t0 + 70_000, "end_ns": t0 + 70_100, "lateness_ns": 100,
         "components": {"spin": 100, "host": 0}},
        {"round": 0, "deadline_ns": t0, "end_ns": t0 + 9_000, "lateness_ns": 9_000,
         "components": {"timer_irq": 9_000, "host": 0, "spin": 0}},
    ]}
    pairs, left, small = wake_pairs(cell, work)
    assert pairs == [(0, 15_000, 15_000)] and left == 1 and small == 1, (pairs, left, small)
    # The same wakes in today's names: the spin's gaps are spin_gap.
    renamed = {"wakes": [{**w, "components": {("spin_gap" if k == "host" else k): v
                                              for k, v in w["components"].items()}}
                         for w in cell["wakes"]]}
    assert wake_pairs(renamed, work) == (pairs, left, small)
    # An idle CPU's delivery is no spinning: such a wake is left out.
    assert no_guest_ns({"idle_delivery": 3, "spin_gap": 4}) == 7 and no_guest_ns({"spin": 1}) is None
    # The tail: wakes of 1000..1099 ns and one of 100 µs (50 µs host) in one round: the
    # p99 (position 0.99 × 100 = 99) is 1099 ns, so the tail is that wake and the 100 µs.
    wakes = [{"round": 0, "lateness_ns": 1_000 + i, "components": {"host": 0}} for i in range(100)]
    wakes.append({"round": 0, "lateness_ns": 100_000, "components": {"host": 50_000}})
    assert tail_share({"wakes": wakes}) == ([(50_000, 101_099)], 0), tail_share({"wakes": wakes})
    # A tail wake whose host was not told leaves its round out; it is not a 0.
    untold = wakes[:-1] + [{"round": 0, "lateness_ns": 100_000, "components": {"spin": 100_000}}]
    assert tail_share({"wakes": untold}) == ([], 1)
    assert "1 rounds left out: a tail wake's no-guest time not told" in tail_lines([{"mechanism": "m", "wakes": untold}])[0]
    try:
        read_gaps("dropped_events\n")
        raise AssertionError("an empty count was read as a number")
    except ValueError:
        pass
    # Steal: none accounted is not judged; equal steal and host over 8 rounds is met.
    r = lambda steal, host: {"steal": steal, "host": host, "gaps_dropped": 0, "events_dropped": 0}
    assert steal_verdict([r(0, 5_000_000)] * 8, 100).startswith("- –")
    assert steal_verdict([r(1, 10_000_000)] * 8, 100).startswith("- ✅")
    assert steal_verdict([r(1, 1_000_000)] * 8, 100).startswith("- ❌")
    # Rounds that lost events are left out: 7 whole ones are too few to judge.
    lossy = [r(1, 10_000_000)] * 7 + [{**r(1, 10_000_000), "events_dropped": 3}]
    assert "fewer than 8 rounds that lost nothing" in steal_verdict(lossy, 100)
    assert fmt_ns(1500) == "1.5 µs" and fmt_ns(None) == "–"
    # A tail share's interval stays within [0 %, 100 %]: 7 of 8 rounds' tails all the
    # host's, one none of it, give 87.5 % with a ratio interval reaching above 1.
    wakes = [{"round": r, "lateness_ns": 1_000 + i, "components": {"host": 0}}
             for r in range(8) for i in range(100)]
    wakes += [{"round": r, "lateness_ns": 90_000, "components": {"host": 90_000 if r else 0}}
              for r in range(8)]
    units, _ = tail_share({"wakes": wakes})
    raw = ratio_ci([u[0] for u in units], [u[1] for u in units])
    assert raw[1] > 1.0, raw
    line = tail_lines([{"mechanism": "m", "wakes": wakes}])[0]
    assert line.startswith("- m: ") and "–100.0 %]" in line, line
    print("host_validate: self-test passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    elif len(sys.argv) >= 7:
        main(sys.argv[1:])
    else:
        sys.exit(__doc__.strip().splitlines()[-2].strip())
