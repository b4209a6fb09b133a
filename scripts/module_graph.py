#!/usr/bin/env python3
"""The module graph of every crate of the workspace, checked against docs/ARCHITECTURE.md.

`scripts/module_graph.py` (run by scripts/test.sh) reads each `crates/*/src` and fails
(exit 1) when:

* a set of modules import each other, at any level: the files of the crate, and for every
  directory the graph of its children (each child file or folder one node, an edge
  wherever a file under one names a file under another): a cycle among a folder's
  children is a cycle even when no two files name each other;
* an edge points up the layer order written in docs/ARCHITECTURE.md: a fenced block
  whose info string is `layers <dir>` (e.g. `layers crates/sleeplab-cli/src`) lists the
  children of `<dir>` one layer a line, top-down; an import may point down or within its
  own layer (acyclic, as above), never up; every child of the directory is listed once
  and every name listed is a child (the diagram cannot go stale);
* a source file under `crates/*/src` (test-only modules left out) does not open with a
  `//!` doc line (what `--index` lists: the map of every file is generated, never kept
  by hand);
* a Rust file under `crates/` (sources, tests, examples) holds more than FILE_MAX_LINES
  lines;
* a path the doc's `tree` block names does not exist (a line `<indent>name  what it
  holds`, two spaces of indent a level, a name relative to the line above it one level
  up), or the doc is longer than DOC_MAX_LINES lines or has a line over DOC_MAX_WIDTH
  characters (a map read in ten minutes);
* a string literal under the CLI's `experiments/` or `report/`, or in the account or the
  stats crate, names one of the CLI's own flags (`--seconds`: a long flag of a clap `#[arg(long …)]` field in
  `cli.rs` or `commands/`, `--help`, `--version`): those layers know no flag, a sentence
  there holds a `Hint` that `commands/hints.rs` words. Comments and test code are left
  out, and so is a flag that is not the CLI's (a probe's `--durations-ns`).

An edge A -> B is a path A names (`use crate::…`, `crate::…` in code or in its doc
comments, `super::…`) that
resolves into B; an item a module file re-exports from a child resolves to that child. A
module file naming its own descendants is containment, not an edge. Test code is left
out: a file's `#[cfg(test)]` to its end, and modules declared under `#[cfg(test)]`.

`--self-test` checks all this on small trees written to a temporary directory; `--files
DIR` prints the file-level cycles of one source directory; `--graph DIR` prints the
top-level edges of one crate; `--index PATH` prints every source file under PATH (a
folder or a file, from the repository root) with its first doc line."""
import os
import re
import sys
import tempfile
from collections import defaultdict


def modpath(rel):
    parts = rel[:-3].split('/')
    if parts[-1] in ('mod', 'lib', 'main'):
        parts = parts[:-1]
    return tuple(parts)


def strip_tests(src):
    i = src.find('#[cfg(test)]\nmod tests {')
    j = src.find('#[cfg(test)]')
    # A `#[cfg(test)] mod x;` line declares a test-only child, not the end of the code.
    while j >= 0 and re.match(r'#\[cfg\(test\)\]\s*(pub(\([^)]*\))?\s+)?mod \w+;', src[j:]):
        j = src.find('#[cfg(test)]', j + 1)
    if i >= 0 and (j < 0 or i < j):
        j = i
    return src if j < 0 else src[:j]


def test_children(src):
    return set(re.findall(r'#\[cfg\(test\)\]\s*(?:pub(?:\([^)]*\))?\s+)?mod (\w+);', src))


class Crate:
    """One source directory: files, file edges, and the graphs of every folder."""

    def __init__(self, root):
        self.root = root
        files = {}
        for d, _, fs in os.walk(root):
            for f in fs:
                if f.endswith('.rs'):
                    p = os.path.join(d, f)
                    with open(p) as fh:
                        files[os.path.relpath(p, root)] = fh.read()
        # A binary's root (main.rs beside lib.rs) is another crate: it names the library.
        if 'lib.rs' in files:
            files.pop('main.rs', None)
        mod_of = {modpath(r): r for r in files}
        # Modules declared under #[cfg(test)], and everything below them.
        tests = set()
        for rel, src in files.items():
            for child in test_children(src):
                tests.add(modpath(rel) + (child,))
        self.files = {
            r: s for r, s in files.items()
            if not any(modpath(r)[:len(t)] == t for t in tests)
        }
        self.mod_of = {modpath(r): r for r in self.files}
        self.edges = self._edges()

    def _edges(self):
        mod_of = self.mod_of
        reexp = defaultdict(dict)
        for rel, src in self.files.items():
            mp = modpath(rel)
            for m in re.finditer(
                    r'pub(?:\([^)]*\))? use (?:self::)?(\w+)::\{([^}]*)\};|pub(?:\([^)]*\))? use (?:self::)?(\w+)::(\w+)(?: as \w+)?;',
                    src):
                child = m.group(1) or m.group(3)
                items = m.group(2) or m.group(4)
                if (mp + (child,)) in mod_of:
                    for it in re.split(r',', items):
                        it = it.strip()
                        if it and it != 'self':
                            reexp[mp][it.split(' as ')[-1].strip().split('::')[-1]] = mp + (child,)

        def resolve(path):
            best = None
            for k in range(len(path), -1, -1):
                if tuple(path[:k]) in mod_of:
                    best = tuple(path[:k])
                    rest = path[k:]
                    break
            if best is None:
                return None
            seen = 0
            while rest and rest[0] in reexp.get(best, {}) and seen < 5:
                best = reexp[best][rest[0]]
                seen += 1
            return mod_of[best]

        edges = defaultdict(set)
        for rel, src in self.files.items():
            code = strip_tests(src)
            # Plain comments go; doc comments stay: a link or a path they name is an edge.
            code = re.sub(r'(?<![/:])//(?![/!])[^\n]*', '', code)
            me = modpath(rel)
            targets = []
            for m in re.finditer(
                    r'\buse\s+((?:crate|super|self)(?:::\w+)*)(?:::\{([^;]*)\})?(?:::(\w+))?\s*(?:as \w+)?;',
                    code, re.S):
                base = m.group(1).split('::')
                group = m.group(2)
                items = []
                if group:
                    for it in re.split(r',', group):
                        it = it.strip()
                        if not it:
                            continue
                        it = it.split(' as ')[0].strip()
                        items.append(it.split('::'))
                else:
                    items.append([m.group(3)] if m.group(3) else [])
                for it in items:
                    targets.append(base + [x for x in it if x and x != 'self' and not x.startswith('{')])
            for m in re.finditer(r'(?<![:\w])((?:crate|super)(?:::\w+)+)', code):
                targets.append(m.group(1).split('::'))
            for t in targets:
                if not t:
                    continue
                if t[0] == 'crate':
                    path = list(t[1:])
                else:
                    base = list(me)
                    while t and t[0] == 'super':
                        base = base[:-1]
                        t = t[1:]
                    if t and t[0] == 'self':
                        t = t[1:]
                    path = base + list(t)
                f = self.resolve_file(resolve, path)
                if f is None or f == rel:
                    continue
                fm = modpath(f)
                # containment: a module file naming its own descendants
                if is_module_file(rel) and fm[:len(me)] == me and len(fm) > len(me):
                    continue
                edges[rel].add(f)
        return edges

    @staticmethod
    def resolve_file(resolve, path):
        return resolve(path)

    def folders(self):
        """Every module with children: its path and its children's names."""
        out = defaultdict(set)
        for mp in self.mod_of:
            if mp:
                out[mp[:-1]].add(mp[-1])
        return out

    def folder_edges(self, folder):
        """The edges between the children of `folder` (a module path)."""
        n = len(folder)
        out = defaultdict(set)
        for a, bs in self.edges.items():
            ma = modpath(a)
            if ma[:n] != folder or len(ma) <= n:
                continue
            for b in bs:
                mb = modpath(b)
                if mb[:n] != folder or len(mb) <= n or mb[n] == ma[n]:
                    continue
                out[ma[n]].add(mb[n])
        return out


def is_module_file(rel):
    """A module's own file: `mod.rs`, `lib.rs`, or `x.rs` beside a folder `x/`."""
    return rel.endswith(('mod.rs', 'lib.rs')) or rel[:-3] in _DIRS


_DIRS = set()


def sccs(nodes, edges):
    index, low, st, on, out, c = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = c[0]
        c[0] += 1
        st.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = st.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            strong(v)
    return out


# The CLI crate, its folders whose strings name no flag of it, and the crates below it
# whose strings name none either (every crate but the CLI is flagless: these are the ones
# that write sentences).
CLI_SRC = 'crates/sleeplab-cli/src'
FLAGLESS = ('experiments',)
FLAGLESS_CRATES = ('crates/sleeplab-account/src', 'crates/sleeplab-report/src',
                   'crates/sleeplab-results/src', 'crates/sleeplab-stats/src')
# Files whose strings name another program's flags, not sleeplab's: the probes' own
# command line (`spec/probe-protocol.md`) and the runtimes' version queries.
FLAGLESS_EXEMPT = ('crates/sleeplab-results/src/probe_protocol/',
                   'crates/sleeplab-results/src/runtime_id.rs')
FLAG = re.compile(r'(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]')


def rust_strings(src):
    """(offset, text) of every string literal of Rust source `src`, comments skipped."""
    out = []
    i, n = 0, len(src)
    raw = re.compile(r'b?r(#*)"')
    char = re.compile(r"'(?:\\.[^']*|[^\\'])'")
    while i < n:
        if src.startswith('//', i):
            j = src.find('\n', i)
            i = n if j < 0 else j
        elif src.startswith('/*', i):
            depth, i = 1, i + 2
            while i < n and depth:
                if src.startswith('/*', i):
                    depth, i = depth + 1, i + 2
                elif src.startswith('*/', i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
        elif (m := raw.match(src, i)) and not (i and (src[i - 1].isalnum() or src[i - 1] == '_')):
            j = src.find('"' + m.group(1), m.end())
            j = n if j < 0 else j
            out.append((i, src[m.end():j]))
            i = j + 1 + len(m.group(1))
        elif src[i] == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == '\\' else 1
            out.append((i, src[i + 1:j]))
            i = j + 1
        elif src[i] == "'" and (m := char.match(src, i)):
            i = m.end()
        else:
            i += 1
    return out


def cli_flags(src_dir):
    """The CLI's long flags: each clap `#[arg(…)]` field with `long` in `cli.rs` and
    `commands/` (`--field-name`, or `long = "name"`, and its aliases), `--help`, `--version`."""
    flags = {'--help', '--version'}
    paths = [os.path.join(src_dir, 'cli.rs')]
    commands = os.path.join(src_dir, 'commands')
    if os.path.isdir(commands):
        paths += [os.path.join(commands, f) for f in sorted(os.listdir(commands)) if f.endswith('.rs')]
    field = re.compile(r'#\[arg\((.*?)\)\]\s*(?:(?://[^\n]*|#\[[^\n]*\])\s*)*(?:pub(?:\([^)]*\))?\s+)?(\w+)\s*:', re.S)
    for p in paths:
        if not os.path.exists(p):
            continue
        with open(p) as fh:
            src = fh.read()
        for m in field.finditer(src):
            attr, name = m.group(1), m.group(2)
            named = re.search(r'\blong\s*=\s*"([^"]+)"', attr)
            if named:
                flags.add('--' + named.group(1))
            elif re.search(r'\blong\b', attr):
                flags.add('--' + name.replace('_', '-'))
            flags.update('--' + a for a in re.findall(r'\b(?:visible_)?alias\s*=\s*"([^"]+)"', attr))
    return flags


def named_flags(repo):
    """Every string literal under the CLI's flagless folders that names one of its flags."""
    src_dir = os.path.join(repo, CLI_SRC)
    if not os.path.isdir(src_dir):
        return []
    flags = cli_flags(src_dir)
    failures = []
    for where in (CLI_SRC,) + FLAGLESS_CRATES:
        if not os.path.isdir(os.path.join(repo, where)):
            continue
        crate = load(os.path.join(repo, where))
        for rel in sorted(crate.files):
            if where == CLI_SRC and rel.split('/')[0] not in FLAGLESS:
                continue
            if f'{where}/{rel}'.startswith(FLAGLESS_EXEMPT):
                continue
            code = strip_tests(crate.files[rel])
            for at, text in rust_strings(code):
                for flag in sorted({m.group(0) for m in FLAG.finditer(text)} & flags):
                    line = code.count('\n', 0, at) + 1
                    failures.append(f'{where}/{rel}:{line}: a string names the CLI flag {flag}: '
                                    f'say it with a Hint, which commands/hints.rs words')
    return failures


LAYER_BLOCK = re.compile(r'^```layers ([^\n]+)\n(.*?)^```', re.S | re.M)


DOC_MAX_LINES = 250
DOC_MAX_WIDTH = 100
TREE_BLOCK = re.compile(r'^```tree\n(.*?)^```', re.S | re.M)


def layer_blocks(doc):
    """{dir: [[names of a layer], …] top-down} from the doc's `layers` blocks (a line that
    ends with ` \\` goes on on the next: one layer)."""
    out = {}
    for m in LAYER_BLOCK.finditer(doc):
        layers = []
        for line in re.sub(r' \\\n\s*', ' ', m.group(2)).splitlines():
            line = re.split(r'#|—', line)[0]
            names = [n.rstrip('/') for n in re.findall(r'[A-Za-z_][\w-]*/?(?:\.rs)?', line)]
            names = [n[:-3] if n.endswith('.rs') else n for n in names]
            if names:
                layers.append(names)
        out[m.group(1).strip().rstrip('/')] = layers
    return out


def first_doc_line(path):
    """The first sentence of a Rust file's opening `//!` paragraph (its lines joined), or
    None where the file opens otherwise."""
    words = []
    with open(path) as fh:
        for line in fh:
            line = line.strip()
            if not line and not words:
                continue
            if not line.startswith('//!') or not line[3:].strip():
                break
            words.append(line[3:].strip())
    if not words:
        return None
    text = ' '.join(words)
    end = re.search(r'\.(\s|$)', text)
    return text[:end.start() + 1] if end else text


def tree_paths(doc):
    """[(line number, path)] of every name in the doc's `tree` blocks: a line's first word,
    under the name on the nearest line above it with less indent (two spaces a level)."""
    out = []
    for m in TREE_BLOCK.finditer(doc):
        first = doc[:m.start()].count('\n') + 2
        stack = []  # (indent, path)
        for k, line in enumerate(m.group(1).splitlines()):
            if not line.strip():
                continue
            indent = len(line) - len(line.lstrip(' '))
            name = line.split()[0]
            while stack and stack[-1][0] >= indent:
                stack.pop()
            path = (stack[-1][1] if stack else '') + name
            out.append((first + k, path))
            if name.endswith('/'):
                stack.append((indent, path))
    return out


def doc_shape(doc, doc_path, repo):
    """The doc's length and width limits, and every path its tree names existing."""
    failures = []
    lines = doc.splitlines()
    if len(lines) > DOC_MAX_LINES:
        failures.append(f'{doc_path}: {len(lines)} lines, more than {DOC_MAX_LINES}')
    for i, line in enumerate(lines, 1):
        if len(line) > DOC_MAX_WIDTH:
            failures.append(f'{doc_path}:{i}: {len(line)} characters, more than {DOC_MAX_WIDTH}')
    for i, path in tree_paths(doc):
        if not os.path.exists(os.path.join(repo, path)):
            failures.append(f'{doc_path}:{i}: the tree names {path}, which does not exist')
    return failures


def index(repo, path):
    """Lines `path  first doc line` of every .rs file under `path` (from `repo`), sorted."""
    top = os.path.join(repo, path)
    files = [top] if os.path.isfile(top) else sorted(
        os.path.join(d, f) for d, _, fs in os.walk(top) for f in fs if f.endswith('.rs'))
    rels = [os.path.relpath(f, repo) for f in files]
    width = max((len(r) for r in rels), default=0)
    return [f'{r:<{width}}  {first_doc_line(f) or "(no doc line)"}' for r, f in zip(rels, files)]


# Crates whose modules are private: a `pub mod` in their lib.rs may only be an inline
# block of re-exports (`pub mod units { pub use … }`), so the re-export list there is the
# crate's whole interface. The library `sleeplab` is not one: its public modules are the
# documented API (`sleeplab::precise`, `sleeplab::lab`).
PRIVATE_CRATES = ('sleeplab-account', 'sleeplab-capture', 'sleeplab-ffi', 'sleeplab-report',
                  'sleeplab-results', 'sleeplab-stats')


def ranks(layers, where, failures):
    """{name: its layer's index} of a diagram; a name listed twice is a failure."""
    rank = {}
    for i, layer in enumerate(layers):
        for n in layer:
            if n in rank:
                failures.append(f'{where}: the layer diagram lists {n} twice')
            rank[n] = i
    return rank


def crate_deps(repo, name):
    """The workspace crates `crates/<name>` depends on: its path dependencies (not the
    dev-dependencies: tests may reach up)."""
    import tomllib
    with open(os.path.join(repo, 'crates', name, 'Cargo.toml'), 'rb') as fh:
        manifest = tomllib.load(fh)
    deps = {}
    for table in ('dependencies', 'build-dependencies'):
        deps.update(manifest.get(table, {}))
    return sorted(os.path.basename(v['path'].rstrip('/')) for v in deps.values()
                  if isinstance(v, dict) and 'path' in v)


# No Rust file of a crate (sources, tests, examples, benches) holds more lines than this.
FILE_MAX_LINES = 600


def long_files(repo):
    """A failure for every .rs file under crates/ longer than FILE_MAX_LINES lines."""
    failures = []
    for d, dirs, fs in os.walk(os.path.join(repo, 'crates')):
        dirs[:] = sorted(x for x in dirs if x != 'target')
        for f in sorted(fs):
            if f.endswith('.rs'):
                path = os.path.join(d, f)
                with open(path) as fh:
                    n = sum(1 for _ in fh)
                if n > FILE_MAX_LINES:
                    failures.append(f'{os.path.relpath(path, repo)}: {n} lines, more than '
                                    f'{FILE_MAX_LINES}: split it along what it holds')
    return failures


def crate_checks(repo, doc_path, blocks):
    """The `layers crates` block against the crates' manifests (every crate listed once,
    each dependency a layer below or beside it), and the private crates' lib.rs."""
    failures = []
    crates_dir = os.path.join(repo, 'crates')
    names = sorted(n for n in os.listdir(crates_dir)
                   if os.path.isfile(os.path.join(crates_dir, n, 'Cargo.toml')))
    layers = blocks.get('crates')
    if layers is None:
        return [f'{doc_path}: no `layers crates` block orders the crates'] if names else []
    rank = ranks(layers, 'crates', failures)
    for n in sorted(set(rank) - set(names)):
        failures.append(f'crates: the layer diagram lists {n}, which is not a crate')
    for n in names:
        if n not in rank:
            failures.append(f'crates: crate {n} is missing from the layer diagram')
            continue
        for d in crate_deps(repo, n):
            if d in rank and rank[d] < rank[n]:
                failures.append(f'crates: {n} depends on {d}, a layer above it')
    for n in PRIVATE_CRATES:
        lib = os.path.join(crates_dir, n, 'src', 'lib.rs')
        if not os.path.exists(lib):
            continue
        with open(lib) as fh:
            for i, line in enumerate(fh, 1):
                if re.match(r'\s*pub(\([^)]*\))?\s+mod\s+\w+\s*;', line):
                    failures.append(f'crates/{n}/src/lib.rs:{i}: a public module; this crate\'s '
                                    'modules are private behind its re-export list')
    return failures


def check(repo, doc_path, out=print):
    """Every check on the crates under `repo`; returns the list of failures."""
    failures = []
    with open(doc_path) as fh:
        raw_doc = fh.read()
    failures.extend(doc_shape(raw_doc, doc_path, repo))
    blocks = layer_blocks(raw_doc)
    used_blocks = set()
    crates_dir = os.path.join(repo, 'crates')
    for name in sorted(os.listdir(crates_dir)):
        src = os.path.join(crates_dir, name, 'src')
        if not os.path.isdir(src):
            continue
        crate = load(src)
        rel_src = f'crates/{name}/src'
        nfile_cycles = 0
        for comp in sccs(crate.files, crate.edges):
            nfile_cycles += 1
            failures.append(f'{rel_src}: files import each other: {", ".join(comp)}')
        nfolder = 0
        for folder, children in sorted(crate.folders().items()):
            fe = crate.folder_edges(folder)
            where = '/'.join((rel_src,) + folder)
            for comp in sccs(children, fe):
                nfolder += 1
                detail = '; '.join(f'{a} -> {b}' for a in comp for b in sorted(fe[a]) if b in comp)
                failures.append(f'{where}: modules import each other: {", ".join(comp)} ({detail})')
            layers = blocks.get(where)
            if layers is None:
                continue
            used_blocks.add(where)
            rank = ranks(layers, where, failures)
            for n in sorted(set(rank) - children):
                failures.append(f'{where}: the layer diagram lists {n}, which is not a module there')
            for n in sorted(children - set(rank)):
                failures.append(f'{where}: module {n} is missing from the layer diagram')
            for a in sorted(fe):
                for b in sorted(fe[a]):
                    if a in rank and b in rank and rank[b] < rank[a]:
                        failures.append(f'{where}: {a} imports {b}, a layer above it')
        for rel in sorted(crate.files):  # test-only modules are left out
            if first_doc_line(os.path.join(src, rel)) is None:
                failures.append(f'{rel_src}/{rel}: no first doc line (`//! what it holds`)')
        out(f'{rel_src}: {len(crate.files)} files, {sum(len(e) for e in crate.edges.values())} edges, '
            f'{nfile_cycles} file cycles, {nfolder} folder cycles')
    used_blocks.add('crates')
    failures.extend(crate_checks(repo, doc_path, blocks))
    failures.extend(long_files(repo))
    for where in sorted(set(blocks) - used_blocks):
        failures.append(f'{doc_path}: a layer diagram for {where}, which is not a source folder')
    failures.extend(named_flags(repo))
    return failures


def load(src):
    _DIRS.clear()
    for d, dirs, _ in os.walk(src):
        for x in dirs:
            _DIRS.add(os.path.relpath(os.path.join(d, x), src))
    crate = Crate(src)
    crate.all_files = set()
    for d, _, fs in os.walk(src):
        for f in fs:
            if f.endswith('.rs'):
                crate.all_files.add(os.path.relpath(os.path.join(d, f), src))
    return crate


def self_test():
    def write(files):
        d = tempfile.mkdtemp()
        for path, text in files.items():
            p = os.path.join(d, path)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, 'w') as fh:
                fh.write(text)
        return d

    def tree(files, doc):
        d = write(files)
        with open(os.path.join(d, 'ARCH.md'), 'w') as fh:
            fh.write(doc)
        return check(d, os.path.join(d, 'ARCH.md'), out=lambda *_: None)

    lib = '//! x\npub mod a;\npub mod b;\n'
    doc = ('```tree\ncrates/\n  x/     a crate\n    src/\n      a/  the a\n      b.rs  the b\n```\n'
           '```layers crates/x/src\na\nb\n```\n')
    good = {
        'crates/x/src/lib.rs': lib,
        'crates/x/src/a/mod.rs': '//! a\nmod one;\nmod two;\npub use one::One;\n',
        'crates/x/src/a/one.rs': '//! one\nuse crate::b::B;\npub struct One;\n',
        'crates/x/src/a/two.rs': '\n//! two\nuse super::One;\n',
        'crates/x/src/b.rs': '//! b\npub struct B;\n#[cfg(test)]\nmod tests {\n use crate::a::One;\n}\n',
    }
    assert tree(good, doc) == [], tree(good, doc)
    # A folder-level cycle no two files make: a/one.rs -> b.rs, b.rs -> a/two.rs.
    bad = dict(good)
    bad['crates/x/src/b.rs'] = 'use crate::a::two::Two;\npub struct B;\n'
    bad['crates/x/src/a/two.rs'] = 'pub struct Two;\n'
    f = tree(bad, doc)
    assert any('modules import each other: a, b' in x for x in f), f
    assert any('b imports a, a layer above it' in x for x in f), f
    assert not any('files import each other' in x for x in f), f
    # Sibling files that name each other: a cycle among a's children.
    sib = dict(good)
    sib['crates/x/src/a/one.rs'] = 'use super::two::Two;\npub struct One;\n'
    sib['crates/x/src/a/two.rs'] = 'use super::One;\npub struct Two;\n'
    f = tree(sib, doc)
    assert any('crates/x/src/a: modules import each other: one, two' in x for x in f), f
    # A file without a first doc line and a stale diagram.
    extra = dict(good)
    extra['crates/x/src/c.rs'] = '// c\n'
    extra['crates/x/src/lib.rs'] = lib + 'pub mod c;\n'
    f = tree(extra, doc)
    assert any('crates/x/src/c.rs: no first doc line' in x for x in f), f
    assert any('module c is missing from the layer diagram' in x for x in f), f
    f = tree(good, doc.replace('b\n```', 'b\nd\n```'))
    assert any('lists d, which is not a module' in x for x in f), f
    # A layer continued on the next line is one layer.
    assert layer_blocks('```layers s\na b \\\n  c\nd\n```\n') == {'s': [['a', 'b', 'c'], ['d']]}
    # The tree's paths, its length and its width.
    assert [p for _, p in tree_paths(doc)] == [
        'crates/', 'crates/x/', 'crates/x/src/', 'crates/x/src/a/', 'crates/x/src/b.rs']
    f = tree(good, doc.replace('b.rs  the b', 'c.rs  the c'))
    assert f == ['{}:6: the tree names crates/x/src/c.rs, which does not exist'.format(
        f[0].split(':')[0])], f
    f = tree(good, doc + 'x' * (DOC_MAX_WIDTH + 1) + '\n' + '\n' * DOC_MAX_LINES)
    assert any(f'more than {DOC_MAX_WIDTH}' in x for x in f), f
    assert any(f'more than {DOC_MAX_LINES}' in x for x in f), f
    d = write(good)
    assert index(d, 'crates/x/src/a') == [
        'crates/x/src/a/mod.rs  a', 'crates/x/src/a/one.rs  one', 'crates/x/src/a/two.rs  two'
    ], index(d, 'crates/x/src/a')
    with open(os.path.join(d, 'p.rs'), 'w') as fh:
        fh.write('//! The first\n//! sentence. The second\n//!\n//! Another paragraph.\n')
    assert first_doc_line(os.path.join(d, 'p.rs')) == 'The first sentence.'
    # A test-only module is not part of the graph.
    t = dict(good)
    t['crates/x/src/b.rs'] = '//! b\npub struct B;\n#[cfg(test)]\nmod testdata;\n'
    t['crates/x/src/b/testdata.rs'] = 'use crate::a::One;\n'
    t['crates/x/src/b/testdata.rs'] = '//! data\n' + t['crates/x/src/b/testdata.rs']
    f = tree(t, doc)
    assert f == [], f
    # The crates' order against their manifests, and a private crate's public module.
    ws = dict(good)
    ws['crates/x/Cargo.toml'] = '[package]\nname = "x"\n[dependencies]\ny = { path = "../y" }\n'
    ws['crates/y/Cargo.toml'] = ('[package]\nname = "y"\n[dependencies]\nserde = "1"\n'
                                 '[dev-dependencies]\nx = { path = "../x" }\n')
    ws['crates/y/src/lib.rs'] = '//! y\nmod a;\npub use a::A;\npub mod v {\n    pub use crate::a::B;\n}\n'
    ws['crates/y/src/a.rs'] = '//! a\npub struct A;\npub struct B;\n'
    ws_doc = doc + '```layers crates\nx/   — the top\ny/   — the leaf\n```\n'
    assert tree(ws, ws_doc) == [], tree(ws, ws_doc)
    f = tree(ws, doc)
    assert len(f) == 1 and f[0].endswith('ARCH.md: no `layers crates` block orders the crates'), f
    f = tree(ws, ws_doc.replace('x/   — the top\ny/   — the leaf', 'y/\nx/\nz/'))
    assert f == ['crates: the layer diagram lists z, which is not a crate',
                 'crates: x depends on y, a layer above it'], f
    global PRIVATE_CRATES
    kept, PRIVATE_CRATES = PRIVATE_CRATES, ('y',)
    assert tree(ws, ws_doc) == [], tree(ws, ws_doc)
    ws['crates/y/src/lib.rs'] = '//! y\npub mod a;\n'
    f = tree(ws, ws_doc)
    PRIVATE_CRATES = kept
    assert f == ["crates/y/src/lib.rs:2: a public module; this crate's modules are private "
                 "behind its re-export list"], f
    # A file over the line limit, wherever it is in a crate.
    big = dict(good)
    big['crates/x/tests/t.rs'] = '//! t\n' + '\n' * FILE_MAX_LINES
    f = tree(big, doc)
    assert f == [f'crates/x/tests/t.rs: {FILE_MAX_LINES + 1} lines, more than {FILE_MAX_LINES}: '
                 'split it along what it holds'], f
    # The CLI's flags named in a string below its command layer.
    cli = {
        'crates/sleeplab-cli/src/lib.rs': '//! l\npub mod cli;\npub mod commands;\npub mod experiments;\npub mod report;\n',
        'crates/sleeplab-cli/src/cli.rs': '//! c\n#[arg(short, long, global = true)]\npub quiet: bool,\n',
        'crates/sleeplab-cli/src/commands/mod.rs': (
            '//! m\npub struct A {\n    /// Seconds.\n    #[arg(long, value_name = "D",\n          default_value = "2s")]\n'
            '    pub seconds: u64,\n    #[arg(short = \'o\', long = "output")]\n    pub dir: String,\n'
            '    #[arg(value_name = "FILE")]\n    pub file: String,\n}\n'
            'pub fn hint() -> &\'static str { "a longer --seconds" }\n'),
        'crates/sleeplab-cli/src/experiments/mod.rs': (
            '//! A longer --seconds.\n/// Narrowed by a longer --seconds.\n'
            'pub fn f(w: fn() -> String) -> String {\n    // not "--seconds"\n'
            '    format!("more waits ({}) narrow it; the probe\'s --durations-ns, --output-dir, {}", w(), \'"\')\n}\n'
            '#[cfg(test)]\nmod tests {\n    const S: &str = "--seconds";\n}\n'),
        'crates/sleeplab-cli/src/report/mod.rs': '//! r\npub const A: &str = "x";\n',
    }
    cli_doc = ''
    assert tree(cli, cli_doc) == [], tree(cli, cli_doc)
    bad = dict(cli)
    bad['crates/sleeplab-cli/src/experiments/mod.rs'] = (
        '//! e\npub fn f() -> String {\n    format!("more waits (a longer --seconds)\\n\\\n       '
        'narrow it")\n}\n')
    bad['crates/sleeplab-report/src/lib.rs'] = '//! r\npub const A: &str = r#"-o DIR, --output DIR"#;\n'
    f = tree(bad, cli_doc)
    assert f == [
        'crates/sleeplab-cli/src/experiments/mod.rs:3: a string names the CLI flag --seconds: '
        'say it with a Hint, which commands/hints.rs words',
        'crates/sleeplab-report/src/lib.rs:2: a string names the CLI flag --output: '
        'say it with a Hint, which commands/hints.rs words',
    ], f
    acc = dict(cli)
    acc['crates/sleeplab-account/src/lib.rs'] = '//! a\npub const W: &str = "run with --seconds";\n'
    f = tree(acc, cli_doc)
    assert f == ['crates/sleeplab-account/src/lib.rs:2: a string names the CLI flag --seconds: '
                 'say it with a Hint, which commands/hints.rs words'], f
    flags = cli_flags(os.path.join(write(cli), CLI_SRC))
    assert flags == {'--help', '--version', '--quiet', '--seconds', '--output'}, flags
    print('module_graph self-test: ok')


def main(argv):
    if argv[:1] == ['--self-test']:
        self_test()
        return 0
    if argv[:1] == ['--files']:
        crate = load(argv[1])
        comps = sccs(crate.files, crate.edges)
        print(f'{len(crate.files)} files, {sum(len(e) for e in crate.edges.values())} edges, {len(comps)} cycles')
        for comp in comps:
            print('cycle:', ', '.join(comp))
            for a in comp:
                for b in sorted(crate.edges[a] & set(comp)):
                    print(f'   {a} -> {b}')
        return 1 if comps else 0
    if argv[:1] == ['--graph']:
        crate = load(argv[1])
        folder = tuple(argv[2].split('/')) if len(argv) > 2 and argv[2] else ()
        fe = crate.folder_edges(folder)
        for a in sorted(fe):
            print(f'{a} -> {", ".join(sorted(fe[a]))}')
        for comp in sccs(crate.folders()[folder], fe):
            print('cycle:', ', '.join(comp))
        return 0
    repo = os.path.abspath(os.path.join(os.path.dirname(__file__), '..'))
    if argv[:1] == ['--index']:
        if len(argv) != 2 or not os.path.exists(os.path.join(repo, argv[1])):
            print(f'module_graph: --index {" ".join(argv[1:])}: a path from the repository root',
                  file=sys.stderr)
            return 2
        print('\n'.join(index(repo, argv[1])))
        return 0
    failures = check(repo, os.path.join(repo, 'docs', 'ARCHITECTURE.md'))
    for f in failures:
        print(f)
    print(f'{len(failures)} problems')
    return 1 if failures else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
