#!/bin/bash
# SPDX-License-Identifier: MIT
# Warnings as errors the way Ubuntu's gcc builds: -O2 -D_FORTIFY_SOURCE=2
# (on by default there).  Fortified glibc marks functions such as ftruncate,
# write and read warn_unused_result, and gcc does not accept a (void) cast
# as using the result.  Build only: the library, the tools, every test
# program, the benchmarks and the Python module (when it can be built).
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
. tests/lib/ci_lib.sh
ci_src /tmp/ci-fortify-src
flags='-O2 -D_FORTIFY_SOURCE=2'
ci_build "$CI_SRC_DIR" /tmp/ci-fortify CFLAGS="$flags" CXXFLAGS="$flags"
cd /tmp/ci-fortify
make -s -j2 check TESTS= > /dev/null
make -s -j2 bench-progs > /dev/null
make -s python-if-possible > /dev/null
cd - > /dev/null
rm -rf /tmp/ci-fortify
[ -n "${PT_CI_SRC:-}" ] || rm -rf /tmp/ci-fortify-src
echo "10-fortify: everything builds with --enable-werror CFLAGS='$flags' ($(( $(date +%s) - start ))s)"
