#!/usr/bin/env python3
"""Import cycles between the source files of a Rust crate: `scripts/import-cycles.py
crates/sleeplab-cli/src` prints every set of files that import each other (exit 1 when
there are some). The old name of `scripts/module_graph.py --files DIR`; the whole check
(folders at every level, the layer order of docs/ARCHITECTURE.md) is `module_graph.py`."""
import os, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, here)
import module_graph  # noqa: E402

sys.exit(module_graph.main(['--files'] + sys.argv[1:]))
