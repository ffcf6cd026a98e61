#!/bin/bash
# SPDX-License-Identifier: MIT
# The whole `make check` (torture suites included) again under
# AddressSanitizer + UndefinedBehaviorSanitizer, the threaded suites under
# ThreadSanitizer, and every compiled test under valgrind memcheck.  The two
# sanitizer passes have their own build directories, valgrind runs in the
# README's build; any report fails the step.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
command -v valgrind >/dev/null || { echo "20-sanitizers: valgrind missing (tools/deps/torture.txt)"; exit 1; }

# Strict mode off, deliberately: these passes look for memory errors,
# undefined behaviour, races and leaks, not for proofs.  Some tests stay out
# of them on purpose (LLVM libunwind in a sanitizer build, nongnu libunwind
# and the trap-flag single step under valgrind, the foreign runs below);
# the plain `make check` of .ci/run established every
# proof, in strict mode (CI=true).
export PERFTRAMP_ALL_PROOFS=0
# The emulated machines run cross-built programs the sanitizers do not
# instrument, and take minutes: the plain `make check` ran them.  So does
# the musl build (tests/musl/musl.sh), and CPython's test file (tests/cpython:
# an uninstrumented interpreter cannot load an ASan library).  The foreign
# runs under qemu-user (tests/arch/run_foreign.sh, the port drill) are
# cross-built too; the host-side emitter of every table runs instrumented in
# check_emitter, check_elf and check_reference.
export PT_GUEST_TESTS=0 PT_MUSL_TESTS=0 PT_CPYTHON_TESTS=0 PT_ARCH_TESTS=0
# The crash torture's trials are other processes: a few of them exercise
# its driver and the checkers in these builds (the plain make check ran 100,
# 42-crash 1,000).
export PT_CRASH_TRIALS=10

src=/var/tmp/ci-san-src
ci_src "$src"
src=$CI_SRC_DIR
fail=0

echo "== ASan+UBSan: make check, torture suites included (/var/tmp/ci-asan)"
t=$SECONDS
# This is the whole suite run out of tree (15-distcheck runs a short one):
# it must leave the source tree as it found it, which distcheck's read-only
# source cannot check for root.
stamp=$(mktemp /var/tmp/ci-san-stamp.XXXXXX)
sleep 1
san='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all'
ci_build "$src" /var/tmp/ci-asan CFLAGS="-O1 -g $san" CXXFLAGS="-O1 -g $san" LDFLAGS="$san"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
if ! (cd /var/tmp/ci-asan && make -s -j2 check >/dev/null); then
    ci_logs /var/tmp/ci-asan
    fail=1
fi
unset ASAN_OPTIONS UBSAN_OPTIONS
echo "   ASan+UBSan: $((SECONDS - t)) s, build included; the slowest tests:"
tools/test-times /var/tmp/ci-asan 10 || true
written=$(find "$src" -newer "$stamp" | head -n 20)
rm -f "$stamp"
if [ -n "$written" ]; then
    printf '20-sanitizers: the out-of-tree build and check wrote into the source tree:\n%s\n' "$written"
    fail=1
fi

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
# valgrind needs no build of its own: the README's build (-O2 -g, built by
# .ci/run's quickstart) where this is that tree, else one here
vg=/var/tmp/ci-valgrind
if [ -f Makefile ]; then vg=$PWD; else ci_build "$src" "$vg" CFLAGS="-O1 -g"; fi
if ! (cd "$vg" && make -s -j2 check-valgrind >/dev/null); then
    ci_logs "$vg"
    fail=1
fi
echo "   valgrind: $((SECONDS - t)) s"
exit $fail
