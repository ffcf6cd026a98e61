#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds Lua 5.4 with perftramp: Debian's lua5.4 source (cached by
# tools/deps/lua-source.sh, fetched now if missing), examples/lua's patch
# applied with `patch -p1`, perftramp_lua.c compiled in, linked against
# this build's libperftramp.so.  Same flags as the cached unpatched
# interpreter, so `make bench` compares like with like.
#   examples/lua/build.sh [OUTDIR]   (default $PT_BUILDDIR/examples/lua/_build: tests/license.sh skips _build)
# Prints two lines: "patched PATH" and "unpatched PATH".  Does nothing when
# OUTDIR/lua is newer than its inputs.  Exit 1 with a message when it fails;
# exit 2 when the Lua source cannot be had (the tests then SKIP).
set -eu
S=$(cd "${PT_SRCDIR:-$(dirname "$0")/../..}" && pwd)
B=$(cd "${PT_BUILDDIR:-$S}" && pwd)
out=${1:-$B/examples/lua/_build}
CC=${PT_CC:-cc}
if [ -z "${PT_LUA_PREFIX:-}" ]; then
    # a normal user uses the machine's build (tools/install-deps, as root) when there is one
    if [ "$(id -u)" -eq 0 ] || { [ -x /opt/perftramp-lua/bin/lua ] && [ -f /opt/perftramp-lua/src/lua.h ]; }; then
        PT_LUA_PREFIX=/opt/perftramp-lua
    else PT_LUA_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-lua; fi
fi
export PT_LUA_PREFIX
prefix=$PT_LUA_PREFIX
if ! sh "$S/tools/deps/lua-source.sh" >"${TMPDIR:-/tmp}/perftramp-lua-source.$$.log" 2>&1; then
    tail -n 5 "${TMPDIR:-/tmp}/perftramp-lua-source.$$.log" >&2
    rm -f "${TMPDIR:-/tmp}/perftramp-lua-source.$$.log"
    echo "examples/lua/build.sh: Debian's lua5.4 source cannot be had (tools/deps/lua-source.sh failed)" >&2
    exit 2
fi
rm -f "${TMPDIR:-/tmp}/perftramp-lua-source.$$.log"
lib=$B/.libs/libperftramp.so
[ -f "$lib" ] || { echo "examples/lua/build.sh: $lib not built (run make first)" >&2; exit 1; }
patchf=$S/examples/lua/lua-perftramp.patch
glue=$S/examples/lua/perftramp_lua.c
fresh=yes
for f in "$patchf" "$glue" "$lib" "$prefix/built-with" "$S/include/perftramp.h" "$0"; do
    [ -x "$out/lua" ] && [ "$out/lua" -nt "$f" ] || fresh=no
done
if [ $fresh = no ]; then
    flags=$(sed -n 's/^.*; CFLAGS //p' "$prefix/built-with")
    rm -rf "$out/src" "$out/obj" "$out/lua"
    mkdir -p "$out/obj"
    cp -R "$prefix/src" "$out/src"
    (cd "$out" && patch -p1 --quiet --no-backup-if-mismatch) <"$patchf" >"$out/build.log" 2>&1 ||
        { cat "$out/build.log" >&2; echo "examples/lua/build.sh: the patch does not apply to $(cat "$prefix/version")" >&2; exit 1; }
    cp "$glue" "$out/src/perftramp_lua.c"
    # shellcheck disable=SC2086 # $flags is a list of flags
    (cd "$out/obj" && for f in "$out"/src/*.c; do
        case $f in */luac.c) continue ;; esac
        $CC $flags -Wall -Wextra -I"$S/include" -I"$B" -c "$f" || exit 1
    done && $CC -o "$out/lua" ./*.o -Wl,-E -L"$B/.libs" -Wl,-rpath,"$B/.libs" -lperftramp -lm -ldl -pthread) \
        >>"$out/build.log" 2>&1 || { tail -n 20 "$out/build.log" >&2; echo "examples/lua/build.sh: building the patched lua failed ($out/build.log)" >&2; exit 1; }
fi
echo "patched $out/lua"
echo "unpatched $prefix/bin/lua"
