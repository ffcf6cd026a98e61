#!/bin/sh
# SPDX-License-Identifier: MIT
# A newer perf for CPython's own test file: Lib/test/test_perf_profiler.py
# runs its DWARF class (-X perf_jit, perf record --call-graph dwarf, perf
# inject) only with perf >= 6.6, and Debian 12's is 6.1.  This unpacks
# bookworm-backports' linux-perf (6.12), without installing it, into
# $prefix: the machine's perf stays 6.1 for everything else, and
# tests/cpython/test_file.sh puts $prefix/usr/bin first on PATH for the
# runs of the test file, on both interpreters.  Its libraries are
# Debian 12's (tools/deps/cpython.txt names those perf 6.1 does not need).
# apt-get runs with a private configuration (tools/deps/apt_lib.sh's
# private_apt: bookworm-backports on the machine's own mirror); the
# machine's apt sources, lists and caches are left alone.
# $prefix: $PT_PERF_PREFIX, else /opt/perftramp-perf as root (or when it
# is there), else ~/.cache/perftramp-perf.  Silent when $prefix/usr/bin/perf
# runs.  --bindir: prints $prefix/usr/bin once it is there.
set -eu
umask 022
if [ -z "${PT_PERF_PREFIX:-}" ]; then
    if [ "$(id -u)" -eq 0 ] || [ -x /opt/perftramp-perf/usr/bin/perf ]; then PT_PERF_PREFIX=/opt/perftramp-perf
    else PT_PERF_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-perf; fi
fi
prefix=$PT_PERF_PREFIX
bindir() { [ "${1:-}" != --bindir ] || echo "$prefix/usr/bin"; }
"$prefix/usr/bin/perf" --version > /dev/null 2>&1 && { bindir "$@"; exit 0; }
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
log=$t/apt.log
failed() {
    tail -n 20 "$log" >&2 2> /dev/null || :
    echo "install-deps: $1" >&2
    exit 1
}
. "$(dirname "$0")/apt_lib.sh" # private_apt
private_apt "$t/apt" deb bookworm-backports || failed "no Debian mirror (a .../debian URI) in /etc/apt/sources.list{,.d/*.sources}"
echo "install-deps: unpacking bookworm-backports' linux-perf into $prefix (for CPython's test_perf_profiler)"
# shellcheck disable=SC2086 # $PRIVATE_APT is a list of options
apt-get $PRIVATE_APT update > "$log" 2>&1 || failed "apt-get update of bookworm-backports failed"
mkdir "$t/deb"
# shellcheck disable=SC2086
(cd "$t/deb" && apt-get $PRIVATE_APT download linux-perf/bookworm-backports) >> "$log" 2>&1 ||
    failed "apt-get download linux-perf/bookworm-backports failed"
dpkg-deb -x "$t/deb"/linux-perf_*.deb "$t/root"
"$t/root/usr/bin/perf" --version >> "$log" 2>&1 ||
    failed "bookworm-backports' perf does not run here; missing: $(ldd "$t/root/usr/bin/perf" | sed -n 's/^\t*\(\S*\) => not found/\1/p' | tr '\n' ' ')(tools/deps/cpython.txt names the packages)"
rm -rf "$prefix"
mkdir -p "$(dirname "$prefix")"
mv "$t/root" "$prefix"
echo "install-deps: $("$prefix/usr/bin/perf" --version) in $prefix/usr/bin (not installed)" >&2
bindir "$@"
