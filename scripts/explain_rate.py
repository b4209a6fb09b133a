"""The `explain-rate` section of docs/BENCHMARKS.md: whether `sleeplab explain -- CMD`
follows a program that waits 10 000 times a second with no event lost, or says what it
lost. scripts/explain-rate.sh runs scripts/floor-waits.c (WAITS absolute
`clock_nanosleep` waits on a PERIOD grid, pinned to CPU 0) under `explain` REPEAT times
and hands this script each run's JSON.

Per run: the waits the program made (WAITS: it makes exactly that many
`clock_nanosleep` calls, and no other), the ones `explain` found, how they ended (by
their timer, without blocking: a deadline already past when the call began, or
unrecorded: blocked with neither its expiry nor a wakeup on record), the events the
kernel's buffers lost, and the rate the found waits kept (their count over the span from
the first's entry to the last's return). The target holds in a run where every wait was
found with no event lost and none unrecorded, or where the run reports the events it
lost; it is missed where a wait is missing, or unrecorded, while no loss is reported.

    python3 scripts/explain_rate.py DOC COMMAND WAITS RUN1.json [RUN2.json …]
    python3 scripts/explain_rate.py --self-test
"""
import json
import sys

import bench_doc

# The one call the program makes to wait.
CALL = "clock_nanosleep"


def tally(doc):
    """The found waits of CALL in an `explain` JSON document: their count, their count
    by ending (`timer`, `never_blocked`, `unrecorded`, …), and their rate in waits per
    second (None with fewer than two)."""
    waits = [w for w in doc["waits"] if w["call"] == CALL]
    endings = {}
    for w in waits:
        endings[w["ending"]["by"]] = endings.get(w["ending"]["by"], 0) + 1
    rate = None
    if len(waits) >= 2:
        span = max(w["exit_ns"] for w in waits) - min(w["enter_ns"] for w in waits)
        rate = len(waits) / span * 1e9 if span > 0 else None
    return len(waits), endings, rate


def verdict(made, found, unrecorded, lost):
    """("met" or "missed", why): met where every wait was found, none unrecorded and no
    event lost, or where the run reports lost events (its waits then may be missing or
    unrecorded: counted, never explained); missed where waits are missing, extra or
    unrecorded while the run reports no loss."""
    if found == made and unrecorded == 0 and lost == 0:
        return "met", f"all {made} waits found, 0 events lost"
    if lost > 0:
        return "met", (f"{lost} events lost and reported; {made - found} waits not found, "
                       f"{unrecorded} unrecorded")
    return "missed", (f"{found} of {made} waits found and {unrecorded} unrecorded, "
                      "with no loss reported")


def report(command, made, docs):
    """The section's Markdown: a table of the runs, one verdict line each, and the count
    over the runs."""
    lines = [f"Command: `{command}`", "",
             "| run | waits made | found | ended by their timer | returned without blocking "
             "| unrecorded | events lost | rate kept (waits/s) |",
             "|---:|---:|---:|---:|---:|---:|---:|---:|"]
    verdicts = []
    for i, doc in enumerate(docs, 1):
        found, endings, rate = tally(doc)
        lost = doc["lost_events"]
        unrecorded = endings.get("unrecorded", 0)
        rate_text = f"{rate:,.0f}".replace(",", " ") if rate is not None else "–"
        lines.append(f"| {i} | {made} | {found} | {endings.get('timer', 0)} | "
                     f"{endings.get('never_blocked', 0)} | {unrecorded} | {lost} | "
                     f"{rate_text} |")
        verdicts.append(verdict(made, found, unrecorded, lost))
    lines.append("")
    for i, (outcome, why) in enumerate(verdicts, 1):
        lines.append(f"- {bench_doc.mark(outcome)} run {i}: followed with 0 events lost or "
                     f"the loss reported: {why}")
    met = sum(1 for o, _ in verdicts if o == "met")
    lines.append(f"- Across the runs: met in {met} of {len(verdicts)}, missed in "
                 f"{len(verdicts) - met}")
    return "\n".join(lines)


def self_test():
    """The verdicts and the tally against hand-made documents."""
    assert verdict(10, 10, 0, 0)[0] == "met"
    assert verdict(10, 9, 0, 3)[0] == "met"
    assert verdict(10, 10, 1, 2)[0] == "met"
    assert verdict(10, 9, 0, 0)[0] == "missed"
    assert verdict(10, 10, 1, 0)[0] == "missed"
    assert verdict(10, 11, 0, 0)[0] == "missed"
    doc = {"lost_events": 0, "waits": [
        {"call": CALL, "enter_ns": 0, "exit_ns": 100, "ending": {"by": "timer"}},
        {"call": CALL, "enter_ns": 100, "exit_ns": 200, "ending": {"by": "never_blocked"}},
        {"call": CALL, "enter_ns": 200, "exit_ns": 400, "ending": {"by": "timer"}},
        {"call": "poll", "enter_ns": 0, "exit_ns": 10**9, "ending": {"by": "timer"}}]}
    found, endings, rate = tally(doc)
    assert (found, endings) == (3, {"timer": 2, "never_blocked": 1})
    assert abs(rate - 3 / 400 * 1e9) < 1e-6
    text = report("cmd", 3, [doc])
    assert "| 1 | 3 | 3 | 2 | 1 | 0 | 0 | 7 500 000 |" in text, text
    assert "✅ run 1" in text and "met in 1 of 1, missed in 0" in text
    print("explain_rate self-test: ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) < 5:
        bench_doc.die("usage: explain_rate.py DOC COMMAND WAITS RUN1.json [RUN2.json …]")
    doc_path, command, made = argv[1], argv[2], int(argv[3])
    docs = []
    for path in argv[4:]:
        with open(path) as f:
            docs.append(json.load(f))
    text = report(command, made, docs)
    print(text)
    bench_doc.write_section(doc_path, "explain-rate", bench_doc.wrapped("explain-rate", text))


if __name__ == "__main__":
    main(sys.argv)
