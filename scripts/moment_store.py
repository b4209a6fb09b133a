#!/usr/bin/env python3
"""A store of a benchmark's moments, kept across runs so that verdicts per class of
moment (quiet, noisy) can rest on more moments than one run measures.

A moment is one JSON object (whatever the benchmark measured in it). The store is a
folder of files `WHEN-COMMIT.json.gz`, each holding

    {"format": "sleeplab-moment", "version": 1, "benchmark": NAME,
     "commit": COMMIT, "measured": WHEN, "moment": {…}}

written whole or not at all (temp file + rename), gzip with no timestamp so that the same
moment always gives the same bytes. Only moments measured on a clean tree are stored: the
commit must hold the code that was measured.

A stored moment counts while a section stamped with its commit and the benchmark's
source paths would still be fresh (`doc_freshness.judge`: no commit since touched those
paths, declared-neutral commits aside). `load` drops the others from the store, so the
moments it returns all measured the code of the current tree.

Usage: moment_store.py --self-test
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile

import doc_freshness

FORMAT = "sleeplab-moment"
VERSION = 1
SUFFIX = ".json.gz"


def file_name(commit: str, when: str) -> str:
    """`20261129T230102Z-3a2ba66.json.gz` for a moment measured at `when` (ISO 8601, UTC)
    at `commit`: names sort by time."""
    stamp = when.replace("-", "").replace(":", "")
    return f"{stamp}-{commit}{SUFFIX}"


def save(store: str, benchmark: str, commit: str, when: str, moment: dict) -> str | None:
    """Writes `moment` into `store` and returns its path; None (nothing written) where
    `commit` is dirty or unknown, whose code no commit holds."""
    if not commit or commit == "unknown" or commit.endswith("-dirty"):
        return None
    os.makedirs(store, exist_ok=True)
    doc = {"format": FORMAT, "version": VERSION, "benchmark": benchmark,
           "commit": commit, "measured": when, "moment": moment}
    path = os.path.join(store, file_name(commit, when))
    fd, tmp = tempfile.mkstemp(dir=store, suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb", mtime=0) as f:
            f.write(json.dumps(doc, sort_keys=True, separators=(",", ":")).encode())
        os.chmod(tmp, 0o644)  # mkstemp's 0600 would be committed as is
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise
    return path


def read(path: str) -> dict:
    """The stored document at `path`; ValueError naming the file where it is not one."""
    try:
        with gzip.open(path, "rb") as f:
            doc = json.loads(f.read())
    except (OSError, EOFError, ValueError) as e:
        raise ValueError(f"{path}: not a stored moment ({e})") from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT:
        raise ValueError(f"{path}: not a stored moment (format {doc.get('format')!r})"
                         if isinstance(doc, dict) else f"{path}: not a stored moment")
    if doc.get("version") != VERSION:
        raise ValueError(f"{path}: stored moment version {doc.get('version')!r}, "
                         f"this reader knows {VERSION}")
    return doc


def load(store: str, benchmark: str, sources: list[str], root: str = doc_freshness.ROOT):
    """(documents, dropped): the stored moments of `benchmark` that still measure the
    current code, oldest first, and one line per file dropped from the store (stale,
    unreadable or of another benchmark's name), which `load` deletes."""
    if not os.path.isdir(store):
        return [], []
    kept, dropped = [], []
    for name in sorted(os.listdir(store)):
        if not name.endswith(SUFFIX):
            continue
        path = os.path.join(store, name)
        try:
            doc = read(path)
        except ValueError as e:
            why = str(e)
        else:
            if doc.get("benchmark") != benchmark:
                why = f"{path}: a moment of {doc.get('benchmark')!r}, not {benchmark!r}"
            else:
                stale = doc_freshness.judge(root, benchmark, {"commit": doc["commit"],
                                                              "sources": sources})
                if stale is None:
                    kept.append(doc)
                    continue
                why = f"{path}: {stale}"
        os.unlink(path)
        dropped.append(f"dropped {why}")
    return kept, dropped


def self_test() -> None:
    """A moment saved at a commit reads back; a dirty one is not saved; a later commit to
    the sources drops it from the store, a commit elsewhere does not; a corrupt file is
    refused by name."""
    with tempfile.TemporaryDirectory() as repo:
        def run(*args):
            return subprocess.run(["git", "-C", repo, *args], check=True, capture_output=True,
                                  text=True).stdout.strip()

        def commit(path, text, message="change"):
            os.makedirs(os.path.dirname(os.path.join(repo, path)) or repo, exist_ok=True)
            with open(os.path.join(repo, path), "w") as f:
                f.write(text)
            run("add", path)
            run("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "-m", message)
            return run("rev-parse", "--short", "HEAD")

        run("init", "-q")
        rev = commit("src/a.rs", "1")
        store = os.path.join(repo, "store")
        when = "2026-11-29T23:01:02Z"
        assert save(store, "doors", rev + "-dirty", when, {"x": 1}) is None
        path = save(store, "doors", rev, when, {"x": [1, 2]})
        assert os.path.basename(path) == f"20261129T230102Z-{rev}.json.gz", path
        assert os.stat(path).st_mode & 0o777 == 0o644
        with open(path, "rb") as f:
            first = f.read()
        assert save(store, "doors", rev, when, {"x": [1, 2]}) == path
        with open(path, "rb") as f:
            assert f.read() == first, "the same moment gives the same bytes"
        docs, dropped = load(store, "doors", ["src"], root=repo)
        assert [d["moment"] for d in docs] == [{"x": [1, 2]}] and not dropped, (docs, dropped)
        commit("docs/x.md", "elsewhere")
        docs, _ = load(store, "doors", ["src"], root=repo)
        assert len(docs) == 1, "a commit outside the sources keeps the moment"
        commit("src/a.rs", "2", "neutral\n\nBench-neutral: a comment")
        assert len(load(store, "doors", ["src"], root=repo)[0]) == 1, "declared neutral"
        commit("src/a.rs", "3")
        docs, dropped = load(store, "doors", ["src"], root=repo)
        assert docs == [] and len(dropped) == 1 and "changed its sources" in dropped[0], dropped
        assert not os.path.exists(path), "a stale moment leaves the store"
        bad = os.path.join(store, "20261129T000000Z-bad.json.gz")
        with open(bad, "wb") as f:
            f.write(b"not gzip")
        try:
            read(bad)
        except ValueError as e:
            assert str(e).startswith(bad), e
        else:
            raise AssertionError("a corrupt file was read")
    print("moment_store: self-test passed")


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        self_test()
        sys.exit(0)
    print("usage: moment_store.py --self-test", file=sys.stderr)
    sys.exit(2)
