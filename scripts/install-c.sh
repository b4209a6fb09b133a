#!/usr/bin/env bash
# Installs sleeplab's C library: libsleeplab.so.VERSION (stripped; the links
# libsleeplab.so.MAJOR, its SONAME, and libsleeplab.so) and libsleeplab.a into PREFIX/lib,
# the header into PREFIX/include, and the pkg-config files sleeplab.pc (shared) and
# sleeplab-static.pc (static) into PREFIX/lib/pkgconfig. Needs cargo, readelf and strip
# (binutils).
#
#   scripts/install-c.sh "$HOME/.local"  # then export PKG_CONFIG_PATH="$HOME/.local/lib/pkgconfig"
#   scripts/install-c.sh                 # PREFIX=/usr/local, as root (runs ldconfig)
#
# A relative PREFIX is taken from the directory you run this in. Programs built with
# `cc app.c $(pkg-config --cflags --libs sleeplab)` run with no LD_LIBRARY_PATH: when
# PREFIX/lib is not a directory the dynamic loader searches (ldconfig's list: /usr/lib,
# /usr/local/lib on Debian, ...), sleeplab.pc's Libs carry -Wl,-rpath,PREFIX/lib; when it
# is, the loader's cache needs ldconfig, which this runs as root (and otherwise says to).
#
# Builds the libraries with cargo first (release, in cargo's target directory:
# CARGO_TARGET_DIR honoured), unless SLEEPLAB_LIB_DIR names a directory that already
# holds them (the tests use that).
set -euo pipefail

if (($# > 1)) || [[ ${1:-} == -* ]]; then
    echo "usage: scripts/install-c.sh [PREFIX]" >&2
    exit 2
fi
# Relative paths are the caller's: resolve them before leaving its directory.
prefix=$(realpath -m -s -- "${1:-/usr/local}")
lib_dir=${SLEEPLAB_LIB_DIR:+$(realpath -m -s -- "$SLEEPLAB_LIB_DIR")}
cd "$(dirname "$(realpath "$0")")/.."

if [[ -z $lib_dir ]]; then
    cargo build --release -q -p sleeplab-ffi
    target=$(cargo metadata --format-version 1 --no-deps |
        sed -n 's/.*"target_directory":"\([^"]*\)".*/\1/p')
    if [[ -z $target ]]; then
        echo "install-c: cargo metadata named no target directory" >&2
        exit 1
    fi
    lib_dir=$target/release
fi
for f in libsleeplab.so libsleeplab.a; do
    if [[ ! -f $lib_dir/$f ]]; then
        echo "install-c: $lib_dir/$f not found" >&2
        exit 1
    fi
done
version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n1)

# The shared library under its version, with the SONAME link the loader opens and the
# development link the linker reads (-lsleeplab), stripped (the workspace's release
# profile keeps debug info for profiling: 6 MB more, no use to a program linking it).
soname=$(readelf -d "$lib_dir/libsleeplab.so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
if [[ $soname != libsleeplab.so.* ]]; then
    echo "install-c: $lib_dir/libsleeplab.so has no SONAME libsleeplab.so.<major> (got '$soname')" >&2
    exit 1
fi
install -d "$prefix/lib/pkgconfig" "$prefix/include"
install -m 0755 "$lib_dir/libsleeplab.so" "$prefix/lib/libsleeplab.so.$version"
strip --strip-unneeded "$prefix/lib/libsleeplab.so.$version"
ln -sfn "libsleeplab.so.$version" "$prefix/lib/$soname"
ln -sfn "$soname" "$prefix/lib/libsleeplab.so"
install -m 0644 "$lib_dir/libsleeplab.a" "$prefix/lib/"
strip --strip-debug "$prefix/lib/libsleeplab.a"
install -m 0644 include/sleeplab.h "$prefix/include/"

# Whether the dynamic loader searches $1 without being told: one of the directories
# ldconfig scans (its built-in ones and /etc/ld.so.conf's), compared as real paths.
in_loader_path() {
    local want dir ldconfig
    want=$(realpath -m -- "$1")
    ldconfig=$(PATH=$PATH:/usr/sbin:/sbin command -v ldconfig) || return 1
    while IFS= read -r dir; do
        [[ $(realpath -m -- "$dir") == "$want" ]] && return 0
    done < <("$ldconfig" -v -N -X 2>/dev/null | sed -n 's/^\([^[:space:]][^:]*\):.*/\1/p')
    return 1
}

if in_loader_path "$prefix/lib"; then
    rpath=
    if [[ $(id -u) -eq 0 ]]; then
        PATH=$PATH:/usr/sbin:/sbin ldconfig
        loader="ran ldconfig: programs find $soname in $prefix/lib"
    else
        loader="now run 'sudo ldconfig' so that programs find $soname in $prefix/lib"
    fi
else
    rpath='-Wl,-rpath,${libdir} '
    loader="$prefix/lib is not in the dynamic loader's path: sleeplab.pc links programs with an rpath to it"
fi
for pc in sleeplab sleeplab-static; do
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" -e "s|@RPATH@|$rpath|" \
        "crates/sleeplab-ffi/$pc.pc.in" >"$prefix/lib/pkgconfig/$pc.pc"
done

echo "install-c: installed sleeplab $version into $prefix" >&2
echo "install-c: $loader" >&2
pc_path=$(pkg-config --variable pc_path pkg-config 2>/dev/null || true)
if [[ :$pc_path: != *:$prefix/lib/pkgconfig:* ]]; then
    echo "install-c: export PKG_CONFIG_PATH=\"$prefix/lib/pkgconfig\" for pkg-config to find it" >&2
fi
