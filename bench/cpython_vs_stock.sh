#!/bin/sh
# SPDX-License-Identifier: MIT
# CPython 3.13.5 on perftramp against stock, same source and flags
# (examples/cpython/build.sh: built now when the cache has neither), for
# `make bench`: bench/cpython_vs_stock.py's keys, patched / stock.
#   cpython_vs_stock.sh [ROUNDS]   (default 15; `make bench`'s quick mode passes 3)
# exit 77 when the CPython source cannot be had.
set -u
S=$(cd "${PT_SRCDIR:-$(dirname "$0")/..}" && pwd)
B=$(cd "${PT_BUILDDIR:-$S}" && pwd)
rounds=${1:-15}
out=$(PT_SRCDIR=$S PT_BUILDDIR=$B sh "$S/examples/cpython/build.sh" 2>&1)
rc=$?
[ $rc -eq 2 ] && { echo "the CPython 3.13.5 source cannot be had"; exit 77; }
[ $rc -eq 0 ] || { echo "# examples/cpython/build.sh failed: $out"; exit 1; }
stock=$(echo "$out" | sed -n 's/^stock //p')/python
patched=$(echo "$out" | sed -n 's/^patched //p')/python
# the patched interpreter runs against this build tree's libperftramp
LD_LIBRARY_PATH=$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} exec python3 "$S/bench/cpython_vs_stock.py" \
    "$stock" "$patched" "$rounds"
