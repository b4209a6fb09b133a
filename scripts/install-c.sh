#!/usr/bin/env bash
# Installs sleeplab's C library: libsleeplab.so.VERSION (stripped; the links
# libsleeplab.so.MAJOR, its SONAME, and libsleeplab.so) and libsleeplab.a into PREFIX/lib,
# the header into PREFIX/include, and the pkg-config files sleeplab.pc (shared) and
# sleeplab-static.pc (static) into PREFIX/lib/pkgconfig. Needs readelf and strip
# (binutils).
#
#   scripts/install-c.sh                 # PREFIX=/usr/local (as root; then run ldconfig)
#   scripts/install-c.sh "$HOME/.local"  # then PKG_CONFIG_PATH=$HOME/.local/lib/pkgconfig
#
# Builds the libraries with cargo first, unless SLEEPLAB_LIB_DIR names a directory that
# already holds them (the tests use that).
set -euo pipefail
cd "$(dirname "$0")/.."

if (($# > 1)); then
    echo "usage: scripts/install-c.sh [PREFIX]" >&2
    exit 2
fi
prefix=${1:-/usr/local}
case $prefix in
/*) ;;
*) prefix=$PWD/$prefix ;;
esac

lib_dir=${SLEEPLAB_LIB_DIR:-}
if [[ -z $lib_dir ]]; then
    cargo build --release -q -p sleeplab-ffi
    lib_dir=target/release
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
for pc in sleeplab sleeplab-static; do
    sed -e "s|@PREFIX@|$prefix|" -e "s|@VERSION@|$version|" \
        "crates/sleeplab-ffi/$pc.pc.in" >"$prefix/lib/pkgconfig/$pc.pc"
done
echo "install-c: installed sleeplab $version into $prefix" >&2
