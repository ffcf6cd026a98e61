#!/bin/bash
# SPDX-License-Identifier: MIT
# The Lua port's overhead, for `make bench` (bench/PERFORMANCE.md, "Lua 5.4"):
# examples/lua/bench.lua (fib, a call-bound worst case) run by the unpatched
# Debian lua and the patched one, interleaved, best of N runs each:
#   lua_off_vs_unpatched   patched with PERFTRAMP unset / unpatched
#   lua_perfmap_vs_off     patched with PERFTRAMP=perfmap / patched, unset
# usage: bench/lua_overhead.sh [RUNS] (default 7); exit 77 when the Lua
# source cannot be had.
set -u
S=$(cd "${PT_SRCDIR:-$(dirname "$0")/..}" && pwd)
runs=${1:-7}
out=$(PT_SRCDIR=$S sh "$S/examples/lua/build.sh" 2>&1)
rc=$?
[ $rc -eq 2 ] && { echo "Debian's lua5.4 source cannot be fetched"; exit 77; }
[ $rc -eq 0 ] || { echo "# examples/lua/build.sh failed: $out"; exit 1; }
LUA=$(echo "$out" | sed -n 's/^patched //p')
BASE=$(echo "$out" | sed -n 's/^unpatched //p')
B=$S/examples/lua/bench.lua
t() { # seconds of one run
    local s e
    s=$(date +%s.%N)
    env "$@" "$B" 30 4 >/dev/null || return 1
    e=$(date +%s.%N)
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.4f\n", e - s }'
}
best() { sort -n | head -n 1; }
u='' o='' p=''
for _ in $(seq "$runs"); do
    u="$u $(t -u PERFTRAMP "$BASE")"
    o="$o $(t -u PERFTRAMP "$LUA")"
    p="$p $(t PERFTRAMP=perfmap "$LUA")"
done
bu=$(echo "$u" | tr ' ' '\n' | grep . | best)
bo=$(echo "$o" | tr ' ' '\n' | grep . | best)
bp=$(echo "$p" | tr ' ' '\n' | grep . | best)
rm -f /tmp/perf-*.map.lua-bench 2>/dev/null
echo "# lua: bench.lua fib(30) x4, best of $runs: unpatched $bu s, patched off $bo s, patched perfmap $bp s"
awk -v u="$bu" -v o="$bo" -v p="$bp" 'BEGIN { printf "lua_off_vs_unpatched: %.3f\nlua_perfmap_vs_off: %.3f\n", o / u, p / o }'
