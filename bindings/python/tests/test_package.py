"""The package as installed: typed (py.typed, stubs that match the native module),
documented, and importable from a fresh interpreter."""

from __future__ import annotations

import ast
import importlib.metadata
import importlib.resources
import inspect
import os
import re
from pathlib import Path

import sleeplab
from sleeplab import _sleeplab


def stub_names() -> set[str]:
    text = importlib.resources.files("sleeplab").joinpath("_sleeplab.pyi").read_text()
    names = set()
    for node in ast.parse(text).body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            names.add(node.target.id)
    return names


def native_names() -> set[str]:
    return {n for n in dir(_sleeplab) if not n.startswith("__") or n == "__version__"}


# The stubs in the source tree (the installed copy is what the other tests read).
STUB = Path(__file__).resolve().parent.parent / "python" / "sleeplab" / "_sleeplab.pyi"
OPEN = "        # <options> generated from sleeplab::precise::OPTIONS (tests/test_package.py)\n"
CLOSE = "        # </options>\n"


def with_table_options(text: str) -> str:
    """`text` with the keyword lines between the markers written from the table."""
    block = _sleeplab._stub_options() + "\n"
    head, *parts = text.split(OPEN)
    return head + "".join(OPEN + block + CLOSE + p.split(CLOSE, 1)[1] for p in parts)


def test_stub_options_come_from_the_option_table():
    text = STUB.read_text()
    expected = with_table_options(text)
    if os.environ.get("SLEEPLAB_BLESS"):
        STUB.write_text(expected)
        return
    assert text.count(OPEN) == 2, "PreciseSleeper and Ticker"
    assert text == expected, (
        "the stubs' keyword options are stale: run `SLEEPLAB_BLESS=1 pytest tests/test_package.py`"
        " in bindings/python (with the package installed: scripts/python-env.sh) and commit"
    )


def test_stubs_cover_exactly_the_native_module():
    aliases = {"SpinOption", "SlackOption", "BudgetOption", "Missed"}
    assert stub_names() - aliases == native_names()


def test_version_is_the_crates():
    # pyproject.toml's version is dynamic: maturin takes the crate's, the workspace's.
    cargo = (Path(__file__).resolve().parents[3] / "Cargo.toml").read_text()
    workspace = re.search(r'\[workspace\.package\][^\[]*?\nversion = "([^"]+)"', cargo)
    assert workspace, "no version in the workspace's Cargo.toml"
    package = Path(__file__).resolve().parents[1]
    assert 'dynamic = ["version"]' in (package / "pyproject.toml").read_text()
    assert "version.workspace = true" in (package / "Cargo.toml").read_text()
    assert sleeplab.__version__ == workspace.group(1)
    assert sleeplab.__version__ == _sleeplab.__version__
    assert importlib.metadata.version("sleeplab") == sleeplab.__version__


def test_package_is_typed():
    assert importlib.resources.files("sleeplab").joinpath("py.typed").is_file()


def test_public_api_is_documented():
    for name in sleeplab.__all__:
        obj = getattr(sleeplab, name)
        if callable(obj):
            assert inspect.getdoc(obj), f"{name} has no docstring"
    assert "Ticker" in sleeplab.__doc__


def test_stub_methods_exist_on_the_classes():
    text = importlib.resources.files("sleeplab").joinpath("_sleeplab.pyi").read_text()
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(_sleeplab, node.name)
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and not item.name.startswith("__"):
                    assert hasattr(cls, item.name), f"{node.name}.{item.name}"
                if isinstance(item, ast.AnnAssign):
                    assert hasattr(cls, item.target.id), f"{node.name}.{item.target.id}"


def test_stub_defaults_are_the_librarys():
    # The keyword defaults the stubs show for PreciseSleeper and Ticker are the ones a
    # sleeper built without options really uses.
    text = importlib.resources.files("sleeplab").joinpath("_sleeplab.pyi").read_text()
    checked = 0
    for node in ast.parse(text).body:
        if isinstance(node, ast.ClassDef) and node.name in ("PreciseSleeper", "Ticker"):
            init = next(i for i in node.body if isinstance(i, ast.FunctionDef)
                        and i.name == "__init__")
            shown = {a.arg: ast.literal_eval(d)
                     for a, d in zip(init.args.kwonlyargs, init.args.kw_defaults)}
            assert shown == sleeplab.DEFAULTS, node.name
            checked += 1
    assert checked == 2
    assert set(sleeplab.DEFAULTS) == set(sleeplab.OPTIONS)
