"""The one way a benchmark writes its section of docs/BENCHMARKS.md: between
`<!-- NAME:begin -->` and `<!-- NAME:end -->`, replaced in place (or appended), the file
written whole or not at all. Used by bench_pace_report.py, bench_frontier_report.py and
bindings/python/bench/report.py (Python and C)."""
import os

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
