#!/usr/bin/env python3
"""Checks `sleeplab explain -- CMD` on programs no one here wrote the waits of: an
interpreter's sleep (python3's time.sleep), two runtimes' timers (node's setTimeout, in
libuv's loop; Go's time.Sleep, in its scheduler) and a coreutils tool (sleep(1), a
process per sleep, under sh). Each program but sleep(1) logs every one of its own sleeps
from its own CLOCK_MONOTONIC reads (before_ns, after_ns: the clock explain's events are
on), so each sleep is looked up among the waits explain found in the program's threads:
one its timer ended, inside the sleep's clock reads, is the wait that ended it (the last
to return, where a runtime splits a sleep into several). The checks:

- every sleep of each program covered by a wait its timer ended, explained through the
  call the runtime makes (clock_nanosleep; epoll_pwait for libuv and Go's netpoller);
- python's time.sleep computes its deadline after its clock read and returns before its
  next one, so explain's lateness (from the kernel's deadline to the call's return) is
  never above the program's own (from its clock read plus the request to its next read):
  counted over every sleep, with the median of the difference (the interpreter's way in
  and out);
- the traps named where each runtime falls into them: the millisecond timeout of the
  calls libuv and Go wait in, the default timer slack of the threads that sleep;
- sleep(1): every process's clock_nanosleep found, ended by its timer, asking for the
  duration given (the kernel's deadline within SLEEP_SLOP_NS past the call's entry plus
  the request).

Usage: explain_real.py DOC "COMMAND" REQUEST_NS SLEEPS DIR
         (DIR holds NAME.json, explain's, and NAME.csv, the program's, for python, node,
         go; sleep.json for sleep(1))
       explain_real.py --self-test
"""
import csv
import json
import os
import sys

import bench_doc
from explain_program import scaled
from quantiles import quantile

SLEEP_SLOP_NS = 100_000   # the kernel's deadline may lie this far past entry + request

#: The programs with their own log: name, what it is, the traps the runtime falls into.
PROGRAMS = [
    ("python", "python3 `time.sleep`", {("slack", "clock_nanosleep")}),
    ("node", "node `setTimeout` (libuv)", {("millis", "epoll_pwait")}),
    ("go", "Go `time.Sleep`", {("millis", "epoll_pwait")}),
]


def load_own(path):
    with open(path) as f:
        return [(int(r["before_ns"]), int(r["after_ns"])) for r in csv.DictReader(f)]


def late(w):
    if w["ending"]["by"] != "timer" or w["deadline_ns"] is None:
        return None
    return w["exit_ns"] - w["deadline_ns"]


def cover(own, waits):
    """Each own sleep with the wait that ended it: the last to return of the waits its
    timer ended inside the sleep's clock reads (None: none)."""
    timed = sorted((w for w in waits if late(w) is not None), key=lambda w: w["exit_ns"])
    out = []
    for before, after in own:
        inside = [w for w in timed if before <= w["enter_ns"] and w["exit_ns"] <= after]
        out.append(((before, after), inside[-1] if inside else None))
    return out


def us(ns):
    return "–" if ns is None else scaled(ns)


def program_row(name, what, traps_wanted, doc, own, request_ns):
    pairs = cover(own, doc["waits"])
    found = [w for _, w in pairs if w is not None]
    calls = sorted({w["call"] for w in found})
    own_late = [a - (b + request_ns) for (b, a), _ in pairs]
    explained = [late(w) for w in found]
    named = {(t["trap"], t.get("call")) for t in doc.get("traps", [])}
    return {
        "name": name, "what": what, "sleeps": len(own), "covered": len(found),
        "calls": calls, "own_p50": quantile(own_late, 0.5) if own_late else None,
        "explain_p50": quantile(explained, 0.5) if explained else None,
        "pairs": pairs, "request_ns": request_ns,
        "traps": traps_wanted <= named, "traps_wanted": traps_wanted,
    }


def python_invariant(row):
    """How many covered sleeps have explain's lateness at most the program's own, of
    how many, and the median difference (own − explain)."""
    diffs = [(a - (b + row["request_ns"])) - late(w) for (b, a), w in row["pairs"]
             if w is not None]
    ok = sum(1 for d in diffs if d >= 0)
    return ok, len(diffs), quantile(diffs, 0.5) if diffs else None


def sleep_check(doc, n, request_ns):
    """sleep(1)'s processes: their waits, those ended by the timer, those asking for
    the request (deadline − entry within [request, request + SLEEP_SLOP_NS])."""
    waits = [w for w in doc["waits"] if w["comm"] == "sleep"]
    timer = [w for w in waits if late(w) is not None]
    asked = [w for w in timer
             if request_ns <= w["deadline_ns"] - w["enter_ns"] <= request_ns + SLEEP_SLOP_NS]
    return len(waits), len(timer), len(asked)


def report(command, request_ns, n, docs, owns):
    lines = ["| program | its own sleeps | covered by a wait its timer ended | explained "
             "through | its own lateness p50 | explain's lateness p50 |",
             "|---|---:|---:|---|---:|---:|"]
    verdicts = []
    for name, what, traps in PROGRAMS:
        if name not in docs:
            verdicts.append(f"- – {what}: not run ({owns.get(name, 'not available here')})")
            continue
        row = program_row(name, what, traps, docs[name], owns[name], request_ns)
        lines.append(f"| {what} | {row['sleeps']} | {row['covered']} | "
                     f"{', '.join(row['calls']) or '–'} | {us(row['own_p50'])} | "
                     f"{us(row['explain_p50'])} |")
        full = row["covered"] == row["sleeps"] and row["sleeps"] > 0
        verdicts.append(f"- {bench_doc.mark('met' if full else 'missed')} {what}: every sleep "
                        f"covered by a wait its timer ended: {row['covered']} of {row['sleeps']}")
        trap_text = ", ".join(f"{k} on {c}" for k, c in sorted(traps))
        verdicts.append(f"- {bench_doc.mark('met' if row['traps'] else 'missed')} {what}: "
                        f"the traps it falls into named ({trap_text})")
        if name == "python":
            ok, of, d50 = python_invariant(row)
            verdicts.append(f"- {bench_doc.mark('met' if of and ok == of else 'missed')} {what}: "
                            f"explain's lateness never above the program's own: {ok} of {of} "
                            f"(the difference's median, the interpreter's way in and out: "
                            f"{us(d50)})")
    if "sleep" in docs:
        waits, timer, asked = sleep_check(docs["sleep"], n, request_ns)
        ok = waits == n and timer == n and asked == n
        verdicts.append(f"- {bench_doc.mark('met' if ok else 'missed')} coreutils `sleep`, "
                        f"one process per sleep under sh: {waits} of its {n} clock_nanosleep "
                        f"waits found, {timer} ended by their timer, {asked} asking for "
                        f"{us(request_ns)} (the kernel's deadline within {us(SLEEP_SLOP_NS)} "
                        f"past the call's entry plus the request)")
    return (f"Run with `{command}`: {n} sleeps of {us(request_ns)} each, every program "
            f"pinned to CPU 0.\n\n" + "\n".join(lines) + "\n\n" + "\n".join(verdicts) + "\n")


def self_test():
    def w(call, enter, exit_, deadline, by="timer", comm="p"):
        return {"call": call, "enter_ns": enter, "exit_ns": exit_, "deadline_ns": deadline,
                "ending": {"by": by}, "comm": comm}
    own = [(1_000, 2_101_000), (3_000_000, 5_200_000)]
    waits = [w("epoll_pwait", 2_000, 1_100_000, 1_002_000),
             w("epoll_pwait", 1_100_500, 2_100_000, 2_002_000),
             w("epoll_pwait", 2_200_000, 2_200_100, None, by="never_blocked")]
    pairs = cover(own, waits)
    assert pairs[0][1] is waits[1], "the last to return ends the sleep"
    assert pairs[1][1] is None, "nothing inside the second"
    doc = {"waits": waits, "traps": [{"trap": "millis", "call": "epoll_pwait"}]}
    row = program_row("node", "node", {("millis", "epoll_pwait")}, doc, own, 2_000_000)
    assert (row["sleeps"], row["covered"], row["traps"]) == (2, 1, True), row
    # Python: own lateness 100 µs, explain's 98 µs: 2 µs of way in and out.
    row = program_row("python", "py", set(),
                      {"waits": [w("clock_nanosleep", 2_000, 2_100_000, 2_002_000)]},
                      [(1_000, 2_101_000)], 2_000_000)
    assert python_invariant(row) == (1, 1, 2_000), python_invariant(row)
    sleeps = {"waits": [w("clock_nanosleep", 0, 2_100_000, 2_000_500, comm="sleep"),
                        w("clock_nanosleep", 0, 2_300_000, 2_200_000, comm="sleep"),
                        w("nanosleep", 0, 10, None, by="never_blocked", comm="sh")]}
    assert sleep_check(sleeps, 2, 2_000_000) == (2, 2, 1)
    text = report("cmd", 2_000_000, 2, {"node": doc, "sleep": sleeps},
                  {"node": own, "python": "python3 missing"})
    assert "- ❌ node `setTimeout` (libuv): every sleep covered by a wait its timer ended: " \
        "1 of 2" in text, text
    assert "- – python3 `time.sleep`: not run (python3 missing)" in text, text
    assert "- ❌ coreutils `sleep`" in text and "1 asking for" in text, text
    print("explain_real: self-test ok")


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 6:
        bench_doc.die("usage: explain_real.py DOC COMMAND REQUEST_NS SLEEPS DIR")
    doc_path, command, request_ns, n, d = argv[1], argv[2], int(argv[3]), int(argv[4]), argv[5]
    docs, owns = {}, {}
    for name, _, _ in PROGRAMS + [("sleep", "", set())]:
        j = os.path.join(d, f"{name}.json")
        if not os.path.exists(j):
            skipped = os.path.join(d, f"{name}.skipped")
            if os.path.exists(skipped):
                with open(skipped) as f:
                    owns[name] = f.read().strip()
            continue
        with open(j) as f:
            docs[name] = json.load(f)
        c = os.path.join(d, f"{name}.csv")
        if os.path.exists(c):
            owns[name] = load_own(c)
    text = report(command, request_ns, n, docs, owns)
    print(text)
    bench_doc.write_section(doc_path, "explain-real", bench_doc.wrapped("explain-real", text))


if __name__ == "__main__":
    main(sys.argv)
