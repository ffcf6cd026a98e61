#!/bin/sh
# SPDX-License-Identifier: MIT
# Lua's own test suite, as far as this machine can reach it.  Upstream's
# lua-5.4.x-tests.tar.gz is on lua.org, and Debian's lua5.4 source package
# does not carry it.  npm's registry has fengari 0.1.5 (MIT), whose
# test/test-suite/*.test.js hold Lua 5.3's test suite cut into one test per
# section; tools/deps/lua_suite_extract.js (node) writes each section's Lua
# chunk as a .lua file into $prefix/suite/chunks.  tests/clients/lua.sh runs
# every chunk under the unpatched and the patched interpreter.
# $prefix as tools/deps/lua-source.sh.  Cached: silent when the chunks of
# this tarball are there.  Prints "chunks DIR" (the messages go to stderr);
# exit 1 with the reason when it cannot be had.
set -eu
if [ -z "${PT_LUA_PREFIX:-}" ]; then
    # a normal user reads the machine's copy (tools/install-deps, as root) when there is one
    if [ "$(id -u)" -eq 0 ] || [ -f /opt/perftramp-lua/suite/chunks/.from ]; then PT_LUA_PREFIX=/opt/perftramp-lua
    else PT_LUA_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-lua; fi
fi
here=$(cd "$(dirname "$0")" && pwd)
dir=$PT_LUA_PREFIX/suite
# by name, through whatever registry, mirror or proxy npm is configured with
# (npm config get registry); the tarball's checksum pins the bytes
pkg=fengari@0.1.5
sha256=16a32282fc658798501241278a9265727479682e9c130e25b767e748984f0806
# (the bytes decide: a copy fetched by an older recipe is as good)
if [ "$(cut -d' ' -f2 "$dir/chunks/.from" 2>/dev/null)" = "$sha256" ]; then
    echo "chunks $dir/chunks"
    exit 0
fi
command -v node > /dev/null || { echo "lua-suite: node missing (Debian: nodejs)" >&2; exit 1; }
command -v npm > /dev/null || { echo "lua-suite: npm missing (Debian: npm)" >&2; exit 1; }
echo "install-deps: fetching Lua 5.3's test suite ($pkg, npm pack from $(npm config get registry 2>/dev/null)) into $dir" >&2
rm -rf "$dir"
mkdir -p "$dir"
# a cache of its own (removed after): the user's npm cache stays untouched
tgz=$(cd "$dir" && npm pack --ignore-scripts --cache "$dir/npm-cache" "$pkg" 2> "$dir/npm.log" | tail -n 1) &&
    [ -f "$dir/$tgz" ] || { tail -n 5 "$dir/npm.log" >&2; echo "lua-suite: npm pack $pkg failed ($dir/npm.log)" >&2; exit 1; }
rm -rf "$dir/npm-cache"
echo "$sha256  $dir/$tgz" | sha256sum -c --quiet - || { echo "lua-suite: $pkg: wrong sha256" >&2; exit 1; }
tar -C "$dir" -xzf "$dir/$tgz" package/test/test-suite package/LICENSE
node "$here/lua_suite_extract.js" "$dir/package/test/test-suite" "$dir/chunks" > "$dir/extract.log" ||
    { cat "$dir/extract.log" >&2; exit 1; }
echo "$pkg $sha256" > "$dir/chunks/.from"
echo "install-deps: $(cat "$dir/extract.log") in $dir/chunks" >&2
echo "chunks $dir/chunks"
