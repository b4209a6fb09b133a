"""The one way a benchmark writes its section of docs/BENCHMARKS.md (or README.md):
between `<!-- NAME:begin … -->` and `<!-- NAME:end -->`, replaced in place (or appended),
the file written whole or not at all. Used by every benchmark report (scripts/*_report.py,
bench_output_section.py, bindings/python/bench/report.py, bench-monitor*.sh); from a
shell script, the section's body on standard input:

    python3 scripts/bench_doc.py DOC NAME <body.md   # e.g. explain-crosscheck.sh, bench-trace.sh

**Every section is stamped** with what it was measured from: the commit (`git describe
--always --dirty`, where the documents that hold sections do not count as dirt: a run
writes several sections in turn), the date, and the machine (CPU model, kernel,
virtualization, as the fingerprint names them: `crates/sleeplab/src/system/fingerprint.rs`).
The stamp stands in the begin marker, with the source paths the section depends on:

    <!-- tune:begin commit=2eeb5d4 date=2026-11-27T10:00:00Z sources=scripts/bench-tune.sh,crates/sleeplab-cli/src/tuning -->

and once more, for readers, at the section's end. The paths are declared once, by the
script that runs the benchmark: `export BENCH_SOURCES="path …"` (space-separated files or
directories of the repository) before it writes; a section without them is not written.
scripts/doc_freshness.py (run by scripts/test.sh) fails when a section's commit is older
than the last commit that touched one of its paths.
"""
import os
import re
import subprocess
import sys
from datetime import datetime, timezone

from quantiles import BY_POINT_VALUE, INDISTINGUISHABLE, MIN_UNITS, share_ci

HEADER = "# Benchmarks\n\nEvery number here comes from a command in this file; rerun it to refresh.\n\n"

# The repository this script belongs to (git runs there, and source paths are its).
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The documents whose own edits do not make a stamp dirty: they hold the sections (and
# prose), never what a figure is measured with.
DOCUMENTS = ["README.md", "docs/*.md"]


def markers(name):
    """The begin and end markers of section NAME, unstamped (what the reports write:
    `write_section` stamps the begin marker)."""
    return f"<!-- {name}:begin -->", f"<!-- {name}:end -->"


def begin_pattern(name=None):
    """A regex matching the begin marker of section NAME (any section where None), with
    or without a stamp: group 1 the name, group 2 the stamp's text (None without)."""
    n = re.escape(name) if name else r"[^\s:]+"
    return re.compile(r"<!-- (" + n + r"):begin(?: ([^>]*?))? -->")


def parse_stamp(text):
    """The fields of a begin marker's stamp (`commit=… date=… sources=a,b`): a dict with
    `commit`, `date` and `sources` (a list); {} for None or an empty stamp."""
    if not text:
        return {}
    fields = dict(kv.split("=", 1) for kv in text.split() if "=" in kv)
    if "sources" in fields:
        fields["sources"] = [p for p in fields["sources"].split(",") if p]
    return fields


def sections(doc):
    """Every section of a document's text, in order: (name, stamp fields, body)."""
    out = []
    for m in begin_pattern().finditer(doc):
        name = m.group(1)
        end = doc.find(markers(name)[1], m.end())
        if end < 0:
            raise ValueError(f"section {name} has no end marker")
        out.append((name, parse_stamp(m.group(2)), doc[m.end():end]))
    return out


def replace_section(doc, name, text):
    """`doc` with its NAME section replaced by `text` (which carries the markers), or
    `text` appended if the section is absent."""
    _, end = markers(name)
    m = begin_pattern(name).search(doc)
    if m and end in doc[m.end():]:
        tail = doc[m.end():].split(end, 1)[1]
        return doc[:m.start()] + text + tail
    return doc.rstrip("\n") + "\n\n" + text + "\n"


def git(*args, root=ROOT):
    """`git args…` in `root`: its stdout stripped, or None where git fails."""
    r = subprocess.run(["git", "-C", root, *args], capture_output=True, text=True)
    return r.stdout.strip() if r.returncode == 0 else None


def commit(root=ROOT):
    """`git describe --always --dirty` of `root`, the edits of DOCUMENTS left out of the
    dirt (a run writes its sections one after the other); None outside a repository."""
    described = git("describe", "--always", root=root)
    if described is None:
        return None
    changed = git("status", "--porcelain", "--untracked-files=no", "--", ".",
                  *[f":(exclude,glob){d}" for d in DOCUMENTS], root=root)
    return described + ("-dirty" if changed else "")


def _read(path):
    try:
        with open(path) as f:
            return f.read().strip()
    except OSError:
        return ""


def virtualization(root="/"):
    """The hypervisor as the fingerprint names it (`Fingerprint::virtualization`: DMI
    vendor and product, /sys/hypervisor/type, then the kernel log's "Hypervisor
    detected" line where Rust reads CPUID's hypervisor leaf, which Python cannot; "unknown
    hypervisor" where only the CPU's flag says the machine is virtual), or None."""
    both = (_read(os.path.join(root, "sys/class/dmi/id/sys_vendor")) + " "
            + _read(os.path.join(root, "sys/class/dmi/id/product_name"))).lower()
    for key, name in [("firecracker", "firecracker"), ("amazon ec2", "aws-nitro"),
                      ("google", "gce"), ("kvm", "kvm"), ("qemu", "qemu"),
                      ("vmware", "vmware"), ("virtualbox", "virtualbox"), ("xen", "xen"),
                      ("microsoft", "hyperv")]:
        if key in both:
            return name
    h = _read(os.path.join(root, "sys/hypervisor/type"))
    if h:
        return h
    flag = any(line.startswith("flags") and "hypervisor" in line.split()
               for line in _read(os.path.join(root, "proc/cpuinfo")).splitlines())
    if not flag:
        return None
    line = _kernel_log_hypervisor(os.path.join(root, "dev/kmsg")).lower()
    for key, name in [("kvm", "kvm"), ("hyper-v", "hyperv"), ("vmware", "vmware"),
                      ("xen", "xen"), ("acrn", "acrn"), ("jailhouse", "jailhouse"),
                      ("bhyve", "bhyve")]:
        if key in line:
            return name
    return line or "unknown hypervisor"


def _kernel_log_hypervisor(path):
    """The text after "Hypervisor detected:" in the kernel log at `path` (/dev/kmsg,
    read without blocking, one record per read), or "" where it is absent or unreadable."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    except OSError:
        return ""
    try:
        for _ in range(20000):
            try:
                record = os.read(fd, 8192)
            except BrokenPipeError:
                continue  # a record was overwritten while reading
            except OSError:
                break
            if not record:
                break
            text = record.decode("utf-8", "replace")
            if "Hypervisor detected:" in text:
                return text.split("Hypervisor detected:", 1)[1].splitlines()[0].strip()
    finally:
        os.close(fd)
    return ""


def machine(root="/", release=None):
    """`CPU model, kernel RELEASE, virtualization V` (`none` on bare metal), from the
    files below `root` as the fingerprint reads them; `release` defaults to this kernel's."""
    model = "unknown"
    for line in _read(os.path.join(root, "proc/cpuinfo")).splitlines():
        k, sep, v = line.partition(":")
        if sep and k.strip() in ("model name", "Model", "cpu model"):
            model = v.strip()
            break
    release = release or os.uname().release
    return f"{model}, kernel {release}, virtualization {virtualization(root) or 'none'}"


def declared_sources(sources=None, root=ROOT):
    """The source paths of a section: `sources`, or the BENCH_SOURCES the benchmark
    script exported (space-separated). Exits (2) where none are declared or one names
    nothing in the repository."""
    if sources is None:
        sources = os.environ.get("BENCH_SOURCES", "").split()
    if not sources:
        die("the section declares no sources: the benchmark script exports BENCH_SOURCES "
            "(the paths its figures depend on) before it writes")
    for p in sources:
        if "," in p or not os.path.exists(os.path.join(root, p)):
            die(f"source path '{p}' is not in the repository")
    return list(sources)


def die(message):
    """One line on stderr naming what is wrong, and exit code 2 (bad input)."""
    print(f"bench_doc: {message}", file=sys.stderr)
    sys.exit(2)


def stamp(name, text, sources, at=None, root=ROOT):
    """`text` (section NAME with its plain markers) stamped: the begin marker with the
    commit, date and sources, and a line saying the commit, date and machine before the
    end marker (inline, for a section of one line, in parentheses). `at`: (commit, date,
    machine), read from `root` and this machine where None."""
    begin, end = markers(name)
    if not (text.startswith(begin) and text.endswith(end)):
        raise ValueError(f"section {name}: the text must start and end with its markers")
    body = text[len(begin):-len(end)]
    rev, date, where = at or (commit(root) or "unknown",
                              datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), machine())
    marker = f"<!-- {name}:begin commit={rev} date={date} sources={','.join(sources)} -->"
    said = f"stamp: commit {rev}, {date}, {where}"
    if "\n" not in body:
        return f"{marker}{body} ({said}){end}"
    return f"{marker}{body.rstrip()}\n\n<sub>{said[0].upper()}{said[1:]}.</sub>\n{end}"


def write_section(path, name, text, sources=None):
    """Replaces section NAME of the file at `path` by `text` (with its plain markers),
    stamped (`stamp`) with `sources` or the declared BENCH_SOURCES (temp file + rename)."""
    text = stamp(name, text, declared_sources(sources))
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
                   judged: str = "contender", open_by_others=None) -> str:
    """`- label: met in 2 of 3 runs, missed in 1, undecided (…) in 0`. A target missed in
    every one of at least OUT_OF_REACH_RUNS runs is called out of reach here only where
    `met_by_others` (per run, the other contenders that met the same target in it) shows
    that no contender met it either; where another did, the line names it; where the
    others were not judged against it (None), it says it is not called out of reach.
    `judged` names which contenders `met_by_others` judged (`contender that kept its
    schedule` where those that fell behind were left out). `open_by_others` (per run, the
    other contenders whose intervals left the same target undecided) keeps it from being
    called out of reach too: an undecided contender may have reached it. `undecided` is
    the outcome (and the words) of overlapping intervals."""
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
        opened = sorted({x for xs in open_by_others or [] for x in xs})
        if others is None:
            text += (f": missed in all {n} runs, not called out of reach (no other contender "
                     "was judged against it)")
        elif others:
            text += f": missed in all {n} runs, though {', '.join(others)} met it: not out of reach"
        elif opened:
            text += (f": missed in all {n} runs, not called out of reach ({', '.join(opened)} "
                     "left it undecided)")
        else:
            either = " or left it undecided" if open_by_others is not None else ""
            text += f": out of reach here (missed in all {n} runs, and no {judged} met it{either})"
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


def self_test():
    """The stamp, the section parser and the machine's words, on fixtures."""
    import tempfile
    at = ("abc1234", "2026-01-02T03:04:05Z", "CPU X, kernel 6.1, virtualization kvm")
    block = stamp("s", wrapped("s", "line one\n\nline two"), ["scripts", "crates/x"], at)
    assert block.startswith("<!-- s:begin commit=abc1234 date=2026-01-02T03:04:05Z "
                            "sources=scripts,crates/x -->\nline one"), block
    assert block.endswith("line two\n\n<sub>Stamp: commit abc1234, 2026-01-02T03:04:05Z, CPU X, "
                          "kernel 6.1, virtualization kvm.</sub>\n<!-- s:end -->"), block
    inline = stamp("i", "<!-- i:begin -->5 ms, measured today<!-- i:end -->", ["scripts"], at)
    assert inline == ("<!-- i:begin commit=abc1234 date=2026-01-02T03:04:05Z sources=scripts -->"
                      "5 ms, measured today (stamp: commit abc1234, 2026-01-02T03:04:05Z, CPU X, "
                      "kernel 6.1, virtualization kvm)<!-- i:end -->"), inline
    # A stamped section is found and replaced whole, its neighbours untouched.
    doc = f"# T\n\n{block}\n\nprose\n\n<!-- u:begin -->\nold\n<!-- u:end -->\n"
    assert [(n, st.get("commit"), st.get("sources")) for n, st, _ in sections(doc)] == [
        ("s", "abc1234", ["scripts", "crates/x"]), ("u", None, None)], sections(doc)
    again = replace_section(doc, "s", stamp("s", wrapped("s", "new"), ["scripts"], at))
    assert "line one" not in again and "\nnew\n" in again and again.count("s:begin") == 1, again
    assert again.endswith("prose\n\n<!-- u:begin -->\nold\n<!-- u:end -->\n"), again
    assert replace_section("# T\n", "v", wrapped("v", "x")) == "# T\n\n<!-- v:begin -->\nx\n<!-- v:end -->\n"
    # The machine as the fingerprint names it, from a fixture tree.
    with tempfile.TemporaryDirectory() as root:
        def w(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)
        assert machine(root, "6.1") == "unknown, kernel 6.1, virtualization none"
        w("proc/cpuinfo", "processor\t: 0\nmodel name\t: AMD EPYC 7B13\nflags\t\t: fpu hypervisor\n")
        assert machine(root, "6.1") == "AMD EPYC 7B13, kernel 6.1, virtualization unknown hypervisor"
        # A guest without DMI (Firecracker) is named by its kernel log's line.
        w("dev/kmsg", "6,0,0,-;Linux version 6.1\n6,1,0,-;Hypervisor detected: KVM\n")
        assert virtualization(root) == "kvm", virtualization(root)
        w("sys/class/dmi/id/sys_vendor", "QEMU\n")
        w("sys/class/dmi/id/product_name", "Standard PC (Q35 + ICH9, 2009)\n")
        assert virtualization(root) == "qemu"
    # Without declared sources, or with one that is not in the repository, nothing is written.
    import contextlib
    import io
    for bad in ([], ["no/such/path"], ["scripts,crates"]):
        said = io.StringIO()
        try:
            with contextlib.redirect_stderr(said):
                declared_sources(bad)
        except SystemExit as e:
            assert said.getvalue().startswith("bench_doc: ") and said.getvalue().count("\n") == 1, said

            assert e.code == 2, e
        else:
            raise AssertionError(f"{bad} accepted")
    assert declared_sources(["scripts/bench_doc.py"]) == ["scripts/bench_doc.py"]
    print("self-test ok")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
    elif len(sys.argv) != 3:
        die("usage: bench_doc.py DOC NAME <body (with BENCH_SOURCES declared), or --self-test")
    else:
        write_section(sys.argv[1], sys.argv[2], wrapped(sys.argv[2], sys.stdin.read()))
