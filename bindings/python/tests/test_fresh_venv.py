"""The package as a user installs it: the README's commands (bindings/python/README.md,
between the python-install markers) run in a temporary project outside the repository,
in a fresh venv (no system site-packages, no PYTHONPATH), with the wheel that
`pip install ./bindings/python` builds (scripts/python-env.sh built it with that backend
into the cargo target directory's wheels/; building it again here would take minutes),
installed offline. The import, a sleep and __version__ then run with the environment
cleared but for PATH."""

from __future__ import annotations

import hashlib
import os
import shlex
import subprocess
from pathlib import Path

import sleeplab
from conftest import REPO, target_dir

README = REPO / "bindings" / "python" / "README.md"
BEGIN, END = "<!-- begin python-install -->", "<!-- end python-install -->"


def readme_commands() -> list[str]:
    """The command lines of the README's install block (comments kept)."""
    text = README.read_text()
    block = text.split(BEGIN, 1)[1].split(END, 1)[0].strip()
    assert block.startswith("```sh\n") and block.endswith("\n```"), block
    return block[len("```sh\n"):-len("\n```")].splitlines()


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_the_readme_installs_the_wheel_into_a_fresh_venv(tmp_path):
    make_venv, install, check = readme_commands()
    assert make_venv.startswith("python3 -m venv .venv && . .venv/bin/activate"), make_venv
    # The install line's argument is the package directory, which builds this wheel.
    argv = shlex.split(install, comments=True)
    assert argv[:2] == ["pip", "install"] and argv[2].endswith("bindings/python"), install
    wheels = sorted((target_dir() / "wheels").glob(f"sleeplab-{sleeplab.__version__}-*.whl"))
    assert len(wheels) == 1, f"scripts/python-env.sh builds one wheel; found {wheels}"
    wheel = wheels[0]
    assert check.startswith("python -c "), check

    project = tmp_path / "project"
    project.mkdir()
    script = "\n".join([
        "set -euo pipefail",
        make_venv,
        f"pip install -q --no-index --no-deps --disable-pip-version-check {shlex.quote(str(wheel))}",
        # The check with nothing of this environment but PATH (the venv's bin first).
        f"env -i PATH=\"$PATH\" {check}",
        "python -c 'import sleeplab._sleeplab as m, sys; print(m.__file__); print(sys.prefix)'",
    ])
    out = subprocess.run(["bash", "-c", script], cwd=project, capture_output=True, text=True,
                         timeout=120, env={"PATH": os.environ["PATH"]})
    assert out.returncode == 0, out.stderr
    version, extension, prefix = out.stdout.split()
    assert version == sleeplab.__version__
    venv = project / ".venv"
    assert Path(prefix).resolve() == venv.resolve()
    assert Path(extension).resolve().is_relative_to(venv.resolve())
    # The wheel holds the extension the other tests ran against.
    assert sha256(Path(extension)) == sha256(Path(sleeplab._sleeplab.__file__))
