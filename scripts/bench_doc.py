"""The one way a benchmark writes its section of docs/BENCHMARKS.md: between
`<!-- NAME:begin -->` and `<!-- NAME:end -->`, replaced in place (or appended), the file
written whole or not at all. Used by bench_pace_report.py, bench_frontier_report.py and
bindings/python/bench/report.py (Python and C); from a shell script, the section's body
on standard input:

    python3 scripts/bench_doc.py DOC NAME <body.md   # e.g. explain-crosscheck.sh, bench-trace.sh
"""
import os
import sys

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


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: bench_doc.py DOC NAME <body")
    write_section(sys.argv[1], sys.argv[2], wrapped(sys.argv[2], sys.stdin.read()))
