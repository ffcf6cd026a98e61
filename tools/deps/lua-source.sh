#!/bin/sh
# SPDX-License-Identifier: MIT
# Debian's Lua 5.4 for examples/lua: `apt-get source lua5.4` (deb-src
# switched on the way tools/deps/libffi-source.sh does it), Debian's own
# patches applied by dpkg-source, kept pristine in $prefix/src, and the
# unpatched interpreter built from it into $prefix/bin/lua, the baseline of
# `make bench` (lua_off_vs_unpatched).  Both builds, this one and the
# patched one examples/lua/build.sh makes, use the same flags:
# upstream's `make linux` defines (-DLUA_COMPAT_5_3 -DLUA_USE_LINUX) with
# -O2 -g -fno-omit-frame-pointer (perf --call-graph fp walks Lua's frames).
# $prefix: $PT_LUA_PREFIX, else /opt/perftramp-lua as root, else
# ~/.cache/perftramp-lua.  Cached: silent when $prefix/built-with matches.
# Run by tools/install-deps and, when the cache is missing, by the Lua tests
# and the bench (exit 1 with the log's tail when the source cannot be had).
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -y -qq"
. "$(dirname "$0")/apt_lib.sh" # apt_update, deb_src_on
if [ -z "${PT_LUA_PREFIX:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_LUA_PREFIX=/opt/perftramp-lua
    else PT_LUA_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-lua; fi
fi
prefix=$PT_LUA_PREFIX
if [ -z "${PT_DEPS_LOGDIR:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_DEPS_LOGDIR=/var/log/perftramp-deps
    else PT_DEPS_LOGDIR=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-deps; fi
fi
logdir=$PT_DEPS_LOGDIR
CC=${CC:-cc}
LUA_CFLAGS='-std=gnu99 -O2 -g -fno-omit-frame-pointer -DLUA_COMPAT_5_3 -DLUA_USE_LINUX'
want="lua5.4 source, Debian's patches; CFLAGS $LUA_CFLAGS"
if [ -x "$prefix/bin/lua" ] && [ -f "$prefix/src/lua.h" ] && [ "$(cat "$prefix/built-with" 2>/dev/null)" = "$want" ]; then
    exit 0
fi
mkdir -p "$logdir"
log=$logdir/lua-source.log
tree=$logdir/lua-source
rm -rf "$tree"
mkdir -p "$tree"
: > "$log"
failed() {
    tail -n 20 "$log" >&2
    echo "install-deps: $1" >&2
    echo "install-deps: the whole log: $log; the build tree is kept in $tree" >&2
    exit 1
}
echo "install-deps: fetching Debian's lua5.4 source into $prefix (log: $log)"
# Source packages: the machine's own Debian mirror, with deb-src switched on.
rc=0
deb_src_on "$log" || rc=$?
[ "$rc" -ne 2 ] || apt_update "$log" || failed "apt-get update (with deb-src) failed"
if ! (cd "$tree" && apt-get source lua5.4) >> "$log" 2>&1; then
    # the lists may predate the deb-src entry
    apt_update "$log" || failed "apt-get update failed"
    (cd "$tree" && apt-get source lua5.4) >> "$log" 2>&1 ||
        failed "apt-get source lua5.4 failed (needs a deb-src entry and dpkg-dev)"
fi
dir=$(find "$tree" -maxdepth 1 -type d -name 'lua5.4-*' | head -n 1)
[ -n "$dir" ] && [ -f "$dir/src/lvm.c" ] || failed "apt-get source lua5.4 left no lua5.4-*/src/lvm.c"
# what debian/rules writes before building: the multiarch module path
ma=$(dpkg-architecture -qDEB_HOST_MULTIARCH 2>/dev/null || $CC -print-multiarch)
printf '#ifndef _LUA_DEB_MULTIARCH_\n#define _LUA_DEB_MULTIARCH_\n#define DEB_HOST_MULTIARCH "%s"\n#endif\n' "$ma" \
    > "$dir/src/lua5.4-deb-multiarch.h"
mkdir -p "$tree/build"
echo "+ $CC $LUA_CFLAGS src/*.c (luac.c left out) -o lua -Wl,-E -lm -ldl" >> "$log"
# shellcheck disable=SC2086 # $LUA_CFLAGS is a list of flags
(cd "$tree/build" && for f in "$dir"/src/*.c; do
    case $f in */luac.c) continue ;; esac
    $CC $LUA_CFLAGS -c "$f" || exit 1
done && $CC -o lua ./*.o -Wl,-E -lm -ldl) >> "$log" 2>&1 || failed "building the unpatched lua failed"
out=$("$tree/build/lua" -e 'print(_VERSION, 6 * 7)') || failed "the unpatched lua does not run"
[ "$out" = "$(printf 'Lua 5.4\t42')" ] || failed "the unpatched lua printed '$out'"
$SUDO rm -rf "$prefix"
$SUDO mkdir -p "$prefix/bin"
$SUDO cp -R "$dir/src" "$prefix/src"
$SUDO rm -f "$prefix"/src/*.o
$SUDO cp "$tree/build/lua" "$prefix/bin/lua"
$SUDO cp "$log" "$prefix/build.log"
basename "$dir" | $SUDO sh -c "cat > '$prefix/version'"
echo "$want" | $SUDO sh -c "cat > '$prefix/built-with'"
rm -rf "$tree"
echo "install-deps: $(cat "$prefix/version") (Debian's source) in $prefix: src/ and the unpatched bin/lua (log: $log)"
