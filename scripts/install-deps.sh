#!/usr/bin/env bash
# Installs what the test suite needs on a fresh Debian machine: the runtimes the
# probes measure (C, C++, Go, Python, Java, Node.js, Ruby, JRuby, the mingw
# cross-compiler and Wine for the Windows probe; CI fails a probe test whose runtime
# is missing), cyclictest for the validation script, Chromium for the report's browser
# test, Prometheus for the monitor's scrape test, pkg-config and binutils for the C
# ABI's install tests, and a venv with maturin and pytest for the Python package.
# Idempotent and quiet when everything is already there.
set -euo pipefail

need=()
have() { command -v "$1" >/dev/null 2>&1; }
have cyclictest || need+=(rt-tests)
have ruby || need+=(ruby)
have jruby || need+=(jruby)
have x86_64-w64-mingw32-gcc || need+=(gcc-mingw-w64-x86-64)
have wine || need+=(wine wine64)
have chromium || need+=(chromium)
have prometheus || need+=(prometheus)
have cc || need+=(gcc)
have c++ || need+=(g++)
have pkg-config || need+=(pkg-config)
# readelf and strip for the C library's install (its SONAME, the stripped copy).
have readelf && have strip || need+=(binutils)
# unshare and mountpoint for the test that installs into /usr/local in a mount namespace.
have unshare && have mountpoint || need+=(util-linux)
# The Python package's venv (Debian's python3 needs python3-venv for ensurepip).
python3 -c 'import venv, ensurepip' >/dev/null 2>&1 || need+=(python3-venv)
# pip for pandas below (a fresh Debian python3 has none).
python3 -c "import pandas" >/dev/null 2>&1 || python3 -m pip --version >/dev/null 2>&1 ||
    need+=(python3-pip)
have go || need+=(golang-go)
have python3 || need+=(python3)
have javac || need+=(default-jdk-headless)
have node || need+=(nodejs)
# The BPF side of the recorders' floor (scripts/bench-floor.sh): built against the
# running kernel's BTF.
have clang || need+=(clang)
[ -r /usr/include/bpf/libbpf.h ] || need+=(libbpf-dev)
have bpftool || need+=(bpftool)

if ((${#need[@]})); then
    if [[ $(id -u) -ne 0 ]]; then
        echo "install-deps: missing ${need[*]}; run as root or install them" >&2
        exit 1
    fi
    echo "install-deps: installing ${need[*]}" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
fi

# The CSV test loads files with pandas, as users will.
if ! python3 -c "import pandas" >/dev/null 2>&1; then
    echo "install-deps: installing pandas" >&2
    python3 -m pip install -q pandas >/dev/null 2>&1 || python3 -m pip install -q --break-system-packages pandas
fi

# maturin and pytest for the Python package, in its venv (.venv).
"$(dirname "$0")/python-env.sh" --deps-only >/dev/null

# Wine needs its prefix once; doing it here keeps the first probe run fast.
if have wine && [[ ! -d "${WINEPREFIX:-$HOME/.wine}" ]]; then
    WINEDEBUG=-all wineboot --init >/dev/null 2>&1 || true
fi
