#!/bin/bash
# SPDX-License-Identifier: MIT
# The threaded suites under ThreadSanitizer, in their own build, and every
# compiled test under valgrind memcheck, in the README's build when CI made
# one (its programs, already built and tested; the logs and proof table that
# `make check` wrote are put back afterwards), else in its own build; any
# report fails the step.  The
# whole `make check` under AddressSanitizer + UndefinedBehaviorSanitizer
# runs in 15-distcheck, built from the tarball.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
command -v valgrind >/dev/null || { echo "20-sanitizers: valgrind missing (tools/deps/torture.txt)"; exit 1; }

# Strict mode off, deliberately: these passes look for races, memory errors
# and leaks, not for proofs; the plain `make check` of .ci/run established
# every proof, in strict mode (CI=true).  Some tests stay out of them on
# purpose (nongnu libunwind and the trap-flag single step under valgrind).
# The crash torture's trials are other processes: a few of them exercise its
# driver and the checkers here (the plain make check ran 100, 42-crash 1,000).
export PERFTRAMP_ALL_PROOFS=0 PT_CRASH_TRIALS=10

src=/var/tmp/ci-san-src
ci_src "$src"
src=$CI_SRC_DIR
fail=0

echo "== TSan: make check-tsan (/var/tmp/ci-tsan)"
t=$SECONDS
ci_build "$src" /var/tmp/ci-tsan CFLAGS="-O1 -g -fsanitize=thread" CXXFLAGS="-O1 -g -fsanitize=thread" \
    LDFLAGS="-fsanitize=thread"
export TSAN_OPTIONS=halt_on_error=1:second_deadlock_stack=1
if ! (cd /var/tmp/ci-tsan && make -s -j2 check-tsan >/dev/null); then
    ci_logs /var/tmp/ci-tsan
    fail=1
fi
unset TSAN_OPTIONS
echo "   TSan: $((SECONDS - t)) s, build included"

echo "== valgrind memcheck: make check-valgrind"
t=$SECONDS
# In the README's build it overwrites that tree's test logs (and so its
# proof table) with valgrind's, where two programs skip: they are saved
# first and put back after.
saved=
if ci_plain_tree; then
    vg=$PWD
    saved=$(mktemp /var/tmp/ci-valgrind-logs.XXXXXX)
    find tests -name '*.log' -o -name '*.trs' -o -name proof-summary.txt | tar -cf "$saved" -T - test-suite.log
    echo "   in the README's build ($vg)"
else
    vg=/var/tmp/ci-valgrind
    ci_build "$src" "$vg" CFLAGS="-O1 -g"
fi
if ! (cd "$vg" && make -s -j2 check-valgrind >/dev/null); then
    ci_logs "$vg"
    fail=1
fi
if [ -n "$saved" ]; then
    tar -xf "$saved"
    rm -f "$saved"
fi
echo "   valgrind: $((SECONDS - t)) s"
exit $fail
