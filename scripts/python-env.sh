#!/usr/bin/env bash
# The Python environment of the sleeplab package: a venv (default .venv, or
# $SLEEPLAB_VENV) holding maturin and pytest, and with the package from bindings/python
# built (release, abi3 wheel, kept in the cargo target directory's wheels/) and
# installed into it. Idempotent and quiet when present.
#
#   scripts/python-env.sh --deps-only   # the venv and the build/test tools only
#   scripts/python-env.sh               # ... and (re)build and install the package
#
# Prints the venv's python on stdout.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=${SLEEPLAB_VENV:-$PWD/.venv}
py=$venv/bin/python
if [[ ! -x $py ]]; then
    echo "python-env: creating $venv" >&2
    python3 -m venv "$venv"
fi
if ! "$py" -c "import maturin, pytest" >/dev/null 2>&1 || [[ ! -x $venv/bin/maturin ]]; then
    echo "python-env: installing maturin and pytest" >&2
    "$py" -m pip install -q --disable-pip-version-check "maturin>=1.9.4,<2" "pytest>=7" >&2
fi
if [[ ${1:-} != --deps-only ]]; then
    # The wheel `pip install ./bindings/python` builds for a user (maturin's build backend,
    # release, abi3), kept in the cargo target directory's wheels/ (tests/test_fresh_venv.py
    # installs it into a fresh venv), then installed here. pip runs the backend, which
    # calls the maturin executable from PATH; no build isolation: the build tools are
    # already in the venv (no download per build).
    target=$(cargo metadata --format-version 1 --no-deps |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    wheels=$target/wheels
    rm -f "$wheels"/sleeplab-*.whl
    PATH="$venv/bin:$PATH" "$py" -m pip wheel -q --disable-pip-version-check \
        --no-build-isolation --no-deps --wheel-dir "$wheels" ./bindings/python >&2
    "$py" -m pip install -q --disable-pip-version-check --force-reinstall --no-deps \
        "$wheels"/sleeplab-*.whl >&2
fi
echo "$py"
