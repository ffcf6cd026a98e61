#!/bin/sh
# SPDX-License-Identifier: MIT
# CPython 3.13.5 for examples/cpython: the upstream tree, as the .orig
# tarball of Debian 13's python3.13 source package holds it (Debian's own
# patches are not applied).  Debian 12 has no CPython with a perf
# trampoline; 3.13.5 is the newest whose source package downloads whole.
#
# apt-get runs with a private configuration: its own sources list, naming
# the trixie deb-src suite on the machine's own Debian mirror (the first
# /debian URI of its apt sources), and its own lists and archive
# directories, in a temporary directory.  The machine's apt sources,
# lists and caches are not touched.  apt checks the downloaded files
# against the signed index; this script then checks the tarball's SHA-256,
# so a later Debian revision of 3.13.5 (same .orig) is fine, and anything
# else stops with a message.
#
# $prefix: $PT_CPYTHON_PREFIX, else /opt/perftramp-cpython as root (beside
# /opt/perftramp-lua), else ~/.cache/perftramp-cpython.  It gets
# Python-3.13.5/ (pristine, readable by every user) and `source`, the line
# the build cache keys on.  Silent when that line is already there.
# Run by tools/install-deps and, when missing, by examples/cpython/build.sh.
set -eu
umask 022
version=3.13.5
orig=python3.13_$version.orig.tar.xz
orig_sha256=93e583f243454e6e9e4588ca2c2662206ad961659863277afcdb96801647d640
if [ -z "${PT_CPYTHON_PREFIX:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_CPYTHON_PREFIX=/opt/perftramp-cpython
    else PT_CPYTHON_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-cpython; fi
fi
prefix=$PT_CPYTHON_PREFIX
want="python3.13 $version $orig sha256 $orig_sha256"
[ -f "$prefix/Python-$version/Include/patchlevel.h" ] && [ "$(cat "$prefix/source" 2>/dev/null)" = "$want" ] && exit 0

t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
log=$t/apt.log
failed() {
    tail -n 20 "$log" >&2 2>/dev/null || :
    echo "install-deps: $1" >&2
    exit 1
}
. "$(dirname "$0")/apt_lib.sh" # private_apt
mkdir -p "$t/src"
private_apt "$t/apt" deb-src trixie || failed "no Debian mirror (a .../debian URI) in /etc/apt/sources.list{,.d/*.sources}"
echo "install-deps: fetching CPython $version (Debian 13's python3.13 source, upstream tree) into $prefix"
# shellcheck disable=SC2086 # $PRIVATE_APT is a list of options
apt-get $PRIVATE_APT update > "$log" 2>&1 ||
    failed "apt-get update of trixie's sources failed (debian-archive-keyring needs the Debian 13 keys)"
# shellcheck disable=SC2086
(cd "$t/src" && apt-get $PRIVATE_APT source --download-only python3.13) >> "$log" 2>&1 ||
    failed "apt-get source --download-only python3.13 (trixie) failed"
[ -f "$t/src/$orig" ] || failed "trixie's python3.13 is not $version any more: no $orig ($(ls "$t/src" | tr '\n' ' '))"
echo "$orig_sha256  $t/src/$orig" | sha256sum -c --quiet > /dev/null 2>&1 ||
    failed "$orig does not have the SHA-256 this script knows ($orig_sha256)"
tar -C "$t/src" -xJf "$t/src/$orig"
grep -q "PY_VERSION *\"$version\"" "$t/src/Python-$version/Include/patchlevel.h" ||
    failed "$orig holds no Python-$version tree"
mkdir -p "$prefix"
rm -rf "$prefix/Python-$version"
mv "$t/src/Python-$version" "$prefix/Python-$version"
echo "$want" > "$prefix/source"
echo "install-deps: CPython $version (upstream tree of Debian 13's python3.13 source) in $prefix/Python-$version"
