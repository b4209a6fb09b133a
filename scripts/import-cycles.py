#!/usr/bin/env python3
"""Import cycles between the source files of a Rust crate: `scripts/import-cycles.py
crates/sleeplab-cli/src` prints every set of files that import each other (none is the
goal; exit 1 when there are some).

An edge A -> B is a path A names (`use crate::…`, `crate::…` in code, `super::…`) that
resolves into B; an item a `mod.rs` re-exports from a child resolves to that child. A
module's own submodules (its `mod` lines and re-exports of its children) are containment,
not edges. Test modules (`#[cfg(test)]` to the end of a file) are left out."""
import os, re, sys
from collections import defaultdict

root = sys.argv[1]
files = {}
for d, _, fs in os.walk(root):
    for f in fs:
        if f.endswith('.rs'):
            p = os.path.join(d, f)
            files[os.path.relpath(p, root)] = open(p).read()

def modpath(rel):
    parts = rel[:-3].split('/')
    if parts[-1] in ('mod', 'lib', 'main'):
        parts = parts[:-1]
    return parts

mod_of = {tuple(modpath(r)): r for r in files}

def strip_tests(src):
    i = src.find('#[cfg(test)]')
    return src if i < 0 else src[:i]

# re-exports in module files: item -> child module path
reexp = defaultdict(dict)
for rel, src in files.items():
    mp = tuple(modpath(rel))
    for m in re.finditer(r'pub use (?:self::)?(\w+)::\{([^}]*)\};|pub use (?:self::)?(\w+)::(\w+);', src):
        child = m.group(1) or m.group(3)
        items = m.group(2) or m.group(4)
        if (mp + (child,)) in mod_of:
            for it in re.split(r'[,\s]+', items):
                it = it.strip()
                if it and it != 'self':
                    reexp[mp][it.split(' as ')[0]] = mp + (child,)

def resolve(path):
    """path: tuple of segments from crate root; returns a file."""
    best = None
    for k in range(len(path), 0, -1):
        if tuple(path[:k]) in mod_of:
            best = tuple(path[:k]); rest = path[k:]
            break
    if best is None:
        return None
    # follow re-exports
    seen = 0
    while rest and rest[0] in reexp.get(best, {}) and seen < 5:
        best = reexp[best][rest[0]]; seen += 1
        # the item stays the same name in the child
    return mod_of[best]

edges = defaultdict(set)
for rel, src in files.items():
    code = strip_tests(src)
    code = re.sub(r'//[^\n]*', '', code)
    me = modpath(rel)
    targets = []
    # use statements with groups
    for m in re.finditer(r'\buse\s+((?:crate|super|self)(?:::\w+)*)(?:::\{([^;]*)\})?(?:::(\w+))?\s*(?:as \w+)?;', code, re.S):
        base = m.group(1).split('::')
        group = m.group(2)
        items = []
        if group:
            for it in re.split(r',', group):
                it = it.strip()
                if not it: continue
                it = it.split(' as ')[0].strip()
                items.append(it.split('::'))
        else:
            items.append([m.group(3)] if m.group(3) else [])
        for it in items:
            targets.append(base + [x for x in it if x and x != 'self' and not x.startswith('{')])
    for m in re.finditer(r'(?<![:\w])((?:crate|super)(?:::\w+)+)', code):
        targets.append(m.group(1).split('::'))
    for t in targets:
        if not t: continue
        if t[0] == 'crate':
            path = t[1:]
        else:
            base = list(me)
            while t and t[0] == 'super':
                base = base[:-1]; t = t[1:]
            if t and t[0] == 'self': t = t[1:]
            path = base + t
        f = resolve(path)
        if f is None or f == rel:
            continue
        # containment: a module file naming its own descendants
        fm = modpath(f)
        if rel.endswith(('mod.rs', 'lib.rs')) and fm[:len(me)] == me and len(fm) > len(me):
            continue
        edges[rel].add(f)

# Tarjan SCC
index = {}; low = {}; st = []; on = set(); sccs = []; c = [0]
sys.setrecursionlimit(10000)
def strong(v):
    index[v] = low[v] = c[0]; c[0] += 1; st.append(v); on.add(v)
    for w in edges.get(v, ()):
        if w not in index:
            strong(w); low[v] = min(low[v], low[w])
        elif w in on:
            low[v] = min(low[v], index[w])
    if low[v] == index[v]:
        comp = []
        while True:
            w = st.pop(); on.discard(w); comp.append(w)
            if w == v: break
        if len(comp) > 1: sccs.append(sorted(comp))
for v in files:
    if v not in index: strong(v)
print(f"{len(files)} files, {sum(len(e) for e in edges.values())} edges, {len(sccs)} cycles")
for comp in sccs:
    print("cycle:", ", ".join(comp))
    for a in comp:
        for b in sorted(edges[a] & set(comp)):
            print(f"   {a} -> {b}")
sys.exit(1 if sccs else 0)
