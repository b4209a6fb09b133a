#!/usr/bin/env python3
"""Whether every published figure comes from the code it describes: each generated
section (`<!-- NAME:begin … -->`, scripts/bench_doc.py) of README.md and docs/*.md is
stamped with the commit it was measured at and the source paths it depends on, and is
fresh when no commit after its own touched those paths.

A section fails the check when:

* it has no stamp (and is not listed in the known-stale file, below);
* its stamp is dirty (measured with uncommitted changes: no commit holds that code);
* its commit is not in the repository;
* a commit after its own (`git log COMMIT..HEAD`) touched any of its paths: the code
  changed after the figures were measured. The failure names the section, its commit and
  the newer one.

**Declared-neutral commits.** A commit whose message carries the trailer
`Bench-neutral: WHY` changes no measured behaviour: it moves code between files or
crates, renames, changes visibility, or edits tests and comments only (CONTRIBUTING.md
says when it may be used). It does not stale a section, and the check follows its moves:
a file under a section's paths that such a commit renames (`git log -M`) keeps counting
as the section's source at its new path, so a later ordinary commit there stales the
section as before. Every section kept fresh across such a commit is listed with the
commit and its reason, so the declaration stays in sight.

**Undeclared Python.** A benchmark script's BENCH_SOURCES must list every Python file it
runs (`python3 PATH.py`) and every module beside it that one imports, transitively, so
that a change to any of them stales the sections it writes. Exempt are this check itself
(`doc_freshness`: it measures nothing) and `bench_doc` where it is run or only its
section writer (`markers`, `write_section`) is imported: those place the text and make no
figure. A
missing one fails, naming the script, the file and who imports it.

**Known-stale sections** (docs/stale-sections.txt: one line per section, `ID REASON`,
`#` comments): sections written before stamps existed, whose commit nobody recorded.
The check reports them as stale, with their reason, without failing. The list only
shrinks: a section leaves it when a benchmark run stamps it (the check then fails until
the line is removed), and a stamped section can never be listed (the check fails), so no
section whose stamp shows it stale can be hidden there. A listed ID that names no section
fails too.

Usage: doc_freshness.py [--root DIR]   # exit 1 on a failure, 0 otherwise
       doc_freshness.py --self-test
"""
import ast
import functools
import glob
import os
import re
import subprocess
import sys
import tempfile

from bench_doc import ROOT, git, sections

STALE_LIST = "docs/stale-sections.txt"


def documents(root):
    """The documents that can hold generated sections, relative to `root`."""
    return ["README.md"] + sorted(os.path.relpath(p, root)
                                  for p in glob.glob(os.path.join(root, "docs", "*.md")))


def known_stale(root):
    """{section id: reason} from the known-stale list (empty where there is none)."""
    out = {}
    try:
        with open(os.path.join(root, STALE_LIST)) as f:
            for line in f:
                line = line.strip()
                if line and not line.startswith("#"):
                    name, _, reason = line.partition(" ")
                    out[name] = reason.strip() or "no reason given"
    except FileNotFoundError:
        pass
    return out


NEUTRAL = "Bench-neutral"


# Imports that need no declaring (see the module's doc): the check itself, and the names
# of bench_doc that only write a section.
UNDECLARED_MODULES = {"doc_freshness"}
WRITER_NAMES = {"bench_doc": {"markers", "write_section"}}
# `export BENCH_SOURCES="…"` in a benchmark script, a variable's assignment there, and
# the Python files it runs.
DECLARED = re.compile(r'export BENCH_SOURCES="([^"]*)"')
ASSIGNED = re.compile(r'^(\w+)="([^"$]*)"', re.M)
RUNS = re.compile(r'(?:python3|"\$py")\s+((?:[\w.-]+/)*[\w.-]+\.py)\b')


def local_imports(root, path):
    """The files beside `path` (relative to `root`) that it imports, but the exempt."""
    try:
        with open(os.path.join(root, path)) as f:
            tree = ast.parse(f.read())
    except (OSError, SyntaxError):
        return []
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(a.name, None) for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            found.append((node.module, {a.name for a in node.names}))
    out = []
    for module, names in found:
        dep = os.path.join(os.path.dirname(path), module + ".py")
        writer_only = names is not None and names <= WRITER_NAMES.get(module, set())
        if module in UNDECLARED_MODULES or writer_only:
            continue
        if os.path.exists(os.path.join(root, dep)):
            out.append(dep)
    return out


def undeclared(root):
    """For every benchmark script of `root`'s scripts/ that declares BENCH_SOURCES, the
    Python files its figures come from that the declaration lacks, as failure lines."""
    failures = []
    for script in sorted(glob.glob(os.path.join(root, "scripts", "*.sh"))):
        with open(script) as f:
            text = f.read()
        m = DECLARED.search(text)
        if not m:
            continue
        # The script's own plain variables filled in; one set otherwise is not read.
        assigned = dict(reversed(ASSIGNED.findall(text)))
        declared = re.sub(r"\$\{?(\w+)\}?", lambda v: assigned.get(v.group(1), v.group(0)),
                          m.group(1))
        if "$" in declared:
            continue
        sources, name = declared.split(), os.path.relpath(script, root)
        # bench_doc.py and this check, run as scripts, write and judge the sections.
        ran = [p for p in dict.fromkeys(RUNS.findall(text))
               if os.path.basename(p)[:-3] not in UNDECLARED_MODULES | set(WRITER_NAMES)]
        todo = [(p, None) for p in ran]
        seen = set()
        while todo:
            path, importer = todo.pop(0)
            if path in seen or not os.path.exists(os.path.join(root, path)):
                continue
            seen.add(path)
            if not under(path, sources):
                by = f", which {importer} imports" if importer else ", which it runs"
                failures.append(f"{name}: BENCH_SOURCES lacks {path}{by}")
            todo += [(dep, path) for dep in local_imports(root, path)]
    return failures


def under(path, sources):
    """Whether `path` is one of `sources` or lies in one of them (a folder)."""
    return any(path == s or path.startswith(s.rstrip("/") + "/") for s in sources)


@functools.lru_cache(maxsize=None)
def later_commits(root, full, head):
    """[(hash, neutral reason or "", [(old path, new path)])] of the commits after `full`
    up to `head`, oldest first; a rename's paths differ, any other change's are the same
    path. Cached: the sections measured at one commit share one walk of the history."""
    out = git("log", "--reverse", "-M", "--name-status",
              f"--format=%x02%H%x03%(trailers:key={NEUTRAL},valueonly,separator=%x3B )%x03",
              f"{full}..{head}", root=root) or ""
    commits = []
    for block in out.split("\x02")[1:]:
        rev, reason, changes = block.split("\x03", 2)
        paths = []
        for line in changes.splitlines():
            f = line.split("\t")
            if len(f) == 3:  # R087 old new, C100 old new
                paths.append((f[1], f[2]))
            elif len(f) == 2:
                paths.append((f[1], f[1]))
        commits.append((rev, reason.strip(), paths))
    return commits


def judge(root, name, stamp, neutral=None):
    """None where section `name` stamped `stamp` is fresh, else why it is not. The
    declared-neutral commits that touched its sources are appended to `neutral` as
    (hash, reason)."""
    rev = stamp.get("commit")
    sources = stamp.get("sources") or []
    if not rev:
        return "it has no stamp (rerun the benchmark that writes it)"
    if not sources:
        return f"its stamp (commit {rev}) declares no source paths"
    if rev.endswith("-dirty"):
        return (f"it was measured at {rev}: a tree with uncommitted changes, which no commit "
                "holds (commit, then rerun the benchmark)")
    # `git describe` gives the hash alone, or TAG-N-gHASH.
    short = rev.rsplit("-g", 1)[-1]
    full = git("rev-parse", "--verify", "--quiet", f"{short}^{{commit}}", root=root)
    if not full:
        return f"its commit {rev} is not in this repository"
    if not git("log", "-1", "--format=%H", f"{full}", "--", *sources, root=root):
        return f"no commit touched its source paths ({', '.join(sources)})"
    paths = list(sources)
    head = git("rev-parse", "HEAD", root=root)
    for commit, reason, changes in later_commits(root, full, head):
        hit = [(old, new) for old, new in changes if under(old, paths) or under(new, paths)]
        if not hit:
            continue
        if not reason:
            return (f"it was measured at {short}, and {commit[:12]} changed its sources since "
                    f"({', '.join(sources)}): rerun the benchmark")
        if neutral is not None:
            neutral.append((commit, reason))
        paths += [new for old, new in hit if new != old and under(old, paths)]
    return None


def check(root):
    """(failures, stale notes, fresh count, neutral notes) over every document of `root`:
    a neutral note names a declared-neutral commit and the fresh sections it touched."""
    listed = known_stale(root)
    failures, stale, fresh, seen, neutral = [], [], 0, set(), {}
    for doc in documents(root):
        with open(os.path.join(root, doc)) as f:
            text = f.read()
        try:
            found = sections(text)
        except ValueError as e:
            failures.append(f"{doc}: {e}")
            continue
        for name, stamp, _ in found:
            seen.add(name)
            if name in listed:
                if stamp:
                    failures.append(f"{doc}: section {name} is stamped (commit {stamp.get('commit')}) "
                                    f"but still listed in {STALE_LIST}: remove its line")
                else:
                    stale.append(f"{doc}: section {name}: stale, {listed[name]}")
                continue
            kept = []
            why = judge(root, name, stamp, kept)
            for commit, reason in kept:
                neutral.setdefault((commit, reason), []).append(name)
            if why:
                failures.append(f"{doc}: section {name}: {why}")
            else:
                fresh += 1
    for name in sorted(set(listed) - seen):
        failures.append(f"{STALE_LIST}: {name} names no section: remove its line")
    failures += undeclared(root)
    notes = [f"fresh across {commit[:12]}, declared neutral ({reason}): {', '.join(names)}"
             for (commit, reason), names in neutral.items()]
    return failures, stale, fresh, notes


def main(root):
    failures, stale, fresh, notes = check(root)
    for line in stale + notes:
        print(line)
    for line in failures:
        print(f"FAIL {line}")
    print(f"doc freshness: {fresh} fresh, {len(stale)} known stale ({STALE_LIST}), "
          f"{len(failures)} failing")
    return 1 if failures else 0


def self_test():
    """A temporary repository: a section stamped at an old commit whose declared path
    changed later fails; a fresh one passes; a declared-neutral commit keeps it fresh and
    its moves are followed; a dirty stamp fails; an unstamped one fails unless listed, and
    a listed stamped one fails."""
    with tempfile.TemporaryDirectory() as root:
        def run(*args):
            subprocess.run(["git", "-C", root, *args], check=True, capture_output=True,
                           env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t",
                                "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"})

        def write(path, text):
            os.makedirs(os.path.dirname(os.path.join(root, path)) or root, exist_ok=True)
            with open(os.path.join(root, path), "w") as f:
                f.write(text)

        def section(name, rev, sources="src"):
            stamp = f" commit={rev} date=2026-01-01T00:00:00Z sources={sources}" if rev else ""
            return f"<!-- {name}:begin{stamp} -->\nfigures\n<!-- {name}:end -->\n"

        run("init", "-q")
        write("src/a.rs", "1\n")
        write("other/b.rs", "1\n")
        write("README.md", "# r\n")
        run("add", ".")
        run("commit", "-q", "-m", "one")
        old = git("rev-parse", "--short", "HEAD", root=root)
        write("docs/BENCHMARKS.md", section("s", old))
        assert check(root)[:3] == ([], [], 1), check(root)
        # A later change elsewhere leaves it fresh; a change to its declared path does not.
        write("other/b.rs", "2\n")
        run("commit", "-q", "-am", "two")
        assert check(root)[0] == [], check(root)
        write("src/a.rs", "2\n")
        run("commit", "-q", "-am", "three")
        newer = git("rev-parse", "HEAD", root=root)
        failures, _, fresh, _ = check(root)
        assert len(failures) == 1 and fresh == 0, failures
        assert "section s" in failures[0] and old in failures[0] and newer[:12] in failures[0], failures
        # Stamped at the newer commit: fresh again.
        head = git("rev-parse", "--short", "HEAD", root=root)
        write("docs/BENCHMARKS.md", section("s", head))
        assert check(root)[:3] == ([], [], 1), check(root)
        # A dirty stamp, an unknown commit, a stamp without sources: each fails.
        for rev, sources, words in [(f"{head}-dirty", "src", "uncommitted"),
                                    ("0123abc", "src", "not in this repository"),
                                    (head, "", "declares no source paths")]:
            write("docs/BENCHMARKS.md", section("s", rev, sources))
            failures = check(root)[0]
            assert len(failures) == 1 and words in failures[0], (rev, failures)
        # A declared-neutral commit keeps it fresh and is named; its move is followed, so
        # an ordinary change at the new path stales it, and a neutral one there does not.
        write("src/a.rs", "2\n" + "shared line\n" * 20)
        run("commit", "-q", "-am", "four")
        head = git("rev-parse", "--short", "HEAD", root=root)
        write("docs/BENCHMARKS.md", section("s", head))
        run("mv", "src/a.rs", "other/moved.rs")
        write("other/moved.rs", "3\n" + "shared line\n" * 20)
        run("commit", "-q", "-am", "Move a\n\nWhy.\n\nBench-neutral: a move, nothing measured changes")
        moved = git("rev-parse", "HEAD", root=root)
        failures, _, fresh, notes = check(root)
        assert failures == [] and fresh == 1, failures
        assert notes == [f"fresh across {moved[:12]}, declared neutral (a move, nothing measured "
                         "changes): s"], notes
        write("other/moved.rs", "4\n" + "shared line\n" * 20)
        run("commit", "-q", "-am", "tests only\n\nBench-neutral: tests")
        assert check(root)[0] == [] and len(check(root)[3]) == 2, check(root)
        write("other/moved.rs", "5\n" + "shared line\n" * 20)
        run("commit", "-q", "-am", "five")
        later = git("rev-parse", "HEAD", root=root)
        failures = check(root)[0]
        assert len(failures) == 1 and later[:12] in failures[0], failures
        # A neutral commit elsewhere is not named, and the trailer must be a trailer.
        head = git("rev-parse", "--short", "HEAD", root=root)
        write("docs/BENCHMARKS.md", section("s", head, "other/moved.rs"))
        write("other/b.rs", "3\n")
        run("commit", "-q", "-am", "b\n\nBench-neutral: elsewhere")
        assert check(root)[:2] == ([], []) and check(root)[3] == [], check(root)
        write("other/moved.rs", "6\n" + "shared line\n" * 20)
        run("commit", "-q", "-am", "Bench-neutral: in the subject is no trailer")
        assert len(check(root)[0]) == 1, check(root)
        # A describe of a tagged commit (TAG-N-gHASH) is read by its hash.
        write("docs/BENCHMARKS.md", section("s", f"v1-2-g{head}"))
        assert check(root)[0] == [], check(root)
        # No stamp: fails, unless listed as known stale (reported, not failing).
        write("README.md", "# r\n" + section("t", None))
        failures = check(root)[0]
        assert len(failures) == 1 and "section t" in failures[0] and "no stamp" in failures[0], failures
        write(STALE_LIST, "# known stale\nt written before stamps\n")
        failures, stale, _, _ = check(root)
        assert failures == [] and stale == ["README.md: section t: stale, written before stamps"], (failures, stale)
        # A listed section that is stamped, and a listed name with no section, fail.
        write("README.md", "# r\n" + section("t", head))
        write(STALE_LIST, "t old\ngone old\n")
        failures = check(root)[0]
        assert any("section t is stamped" in f for f in failures), failures
        assert any("gone names no section" in f for f in failures), failures
        # A benchmark script must declare the Python it runs and what that imports (its
        # section writer and this check aside).
        write("scripts/bench_doc.py", "def markers(): pass\n")
        write("scripts/helper.py", "import os\n")
        write("scripts/report.py", "import helper\nimport doc_freshness\n"
                                   "from bench_doc import markers\n")
        write("scripts/bench-x.sh", 'export BENCH_SOURCES="scripts/bench-x.sh '
                                    'scripts/report.py"\npython3 scripts/report.py\n'
                                    "python3 scripts/bench_doc.py\n")
        assert undeclared(root) == [
            "scripts/bench-x.sh: BENCH_SOURCES lacks scripts/helper.py, which "
            "scripts/report.py imports"], undeclared(root)
        write("scripts/bench-x.sh", 'export BENCH_SOURCES="scripts/bench-x.sh scripts/report.py '
                                    'scripts/helper.py"\npython3 scripts/report.py\n'
                                    "python3 scripts/bench_doc.py\n")
        assert undeclared(root) == [], undeclared(root)
        # bench_doc's other names make figures (its verdicts): then it must be declared.
        write("scripts/report.py", "import helper\nfrom bench_doc import markers, mark\n")
        assert undeclared(root) == [
            "scripts/bench-x.sh: BENCH_SOURCES lacks scripts/bench_doc.py, which "
            "scripts/report.py imports"], undeclared(root)
        write("scripts/bench-x.sh", 'export BENCH_SOURCES="scripts"\npython3 scripts/report.py\n')
        assert undeclared(root) == [], "a folder declares what lies in it"
        # The script's plain variables are filled in; a list it cannot read is left alone.
        write("scripts/bench-x.sh", 'M="scripts/helper.py"\nexport BENCH_SOURCES="scripts/report.py '
                                    '$M"\npython3 scripts/report.py\n')
        assert len(undeclared(root)) == 1 and "bench_doc.py" in undeclared(root)[0], undeclared(root)
        write("scripts/bench-x.sh", 'export BENCH_SOURCES="$ELSEWHERE"\npython3 scripts/report.py\n')
        assert undeclared(root) == [], undeclared(root)
        # An unbalanced section fails with its name.
        write("README.md", "<!-- u:begin -->\nx\n")
        write(STALE_LIST, "")
        assert any("section u has no end marker" in f for f in check(root)[0]), check(root)
    print("self-test ok")


if __name__ == "__main__":
    args = sys.argv[1:]
    if args == ["--self-test"]:
        self_test()
    elif args[:1] == ["--root"] and len(args) == 2:
        sys.exit(main(args[1]))
    elif not args:
        sys.exit(main(ROOT))
    else:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
