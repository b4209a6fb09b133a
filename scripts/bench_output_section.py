#!/usr/bin/env python3
"""Writes a benchmark's verbatim output as a section of a doc (bench_doc.write_section):
the commands that ran, then what they printed, in fenced blocks, and when.

Usage: bench_output_section.py DOC NAME "TITLE" OUTPUT.txt "COMMAND" [OUTPUT.txt "COMMAND"]...
"""
import datetime
import sys

from bench_doc import markers, write_section


def section(name, title, runs):
    """The section NAME: TITLE, then for each (command, output) the command and its output."""
    when = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    lines = [markers(name)[0], f"{title} (run {when}):", ""]
    for command, output in runs:
        lines += ["```sh", command, "```", "", "```text", output.rstrip("\n"), "```", ""]
    lines.append(markers(name)[1])
    return "\n".join(lines)


def main():
    doc, name, title, *rest = sys.argv[1:]
    if len(rest) < 2 or len(rest) % 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    runs = [(rest[i + 1], open(rest[i]).read()) for i in range(0, len(rest), 2)]
    s = section(name, title, runs)
    write_section(doc, name, s)
    print(s)


if __name__ == "__main__":
    main()
