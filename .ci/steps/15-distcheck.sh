#!/bin/bash
# SPDX-License-Identifier: MIT
# The release tarball, and the whole suite under AddressSanitizer +
# UndefinedBehaviorSanitizer built from it: what `make distcheck` proves,
# done once with the sanitizer pass instead of in a second full build.
#  1. In the tree CI built and tested (README's commands ran `make check`
#     in it, so tests/ holds .log and .trs files): `make dist` must ship
#     exactly the committed files plus autotools' output: a file missing
#     from EXTRA_DIST, or a build output that a directory entry dragged in,
#     fails here.
#  2. That tarball, unpacked and made read-only, configured out of tree
#     with warnings as errors and the sanitizers, built, and the whole
#     `make check` (torture suites included) run with TMPDIR at a fresh
#     directory that must stay empty (.ci/leftovers.sh).  The source must be
#     left as it was: read-only stops a normal user, and for root (CI) a
#     stamp and `find` catch any file written there.
#  3. From that build, as distcheck does: `make install` and `make
#     uninstall` into a DESTDIR leave no file behind, `make dist` from the
#     out-of-tree build ships the same files, and `make distclean` leaves
#     nothing in the build directory.
# Until 2026-12-07, part 2 was `make distcheck` with a short check, and the
# ASan+UBSan pass a second out-of-tree build and check in 20-sanitizers;
# one build now does both (about 4 minutes less).
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$(pwd)
start=$(date +%s)
. tests/lib/ci_lib.sh
# Strict mode off, deliberately: this pass looks for memory errors and
# undefined behaviour, not for proofs; the README's `make check` of this run
# established every proof, strictly (CI=true).  The emulated machines run
# cross-built programs the sanitizers do not instrument, and take minutes:
# the plain `make check` ran them.  So does the musl build
# (tests/musl/musl.sh), and CPython's test file (tests/cpython: an
# uninstrumented interpreter cannot load an ASan library).  The foreign runs
# under qemu-user (tests/arch/run_foreign.sh, the port drill,
# tests/arch/unwind_foreign.sh, tests/arch/ehabi_foreign.sh) are cross-built too; the host-side emitter of
# every table runs instrumented in check_emitter, check_elf and
# check_reference.  The crash torture's trials are other processes: a few
# of them exercise its driver and the checkers here (the plain make check
# ran 100, 42-crash 1,000).
export PERFTRAMP_ALL_PROOFS=0 PT_GUEST_TESTS=0 PT_MUSL_TESTS=0 PT_CPYTHON_TESTS=0 PT_ARCH_TESTS=0
export PT_CRASH_TRIALS=10
work=/var/tmp/ci-dist
[ ! -d "$work" ] || chmod -R u+w "$work"
rm -rf "$work"
mkdir -p "$work"
fail=0
# the files a tarball ships, without its top directory, sorted
files_of() { tar -tzf "$1" | sed 's|^[^/]*/||' | grep -v '/$' | sed '/^$/d' | sort; }

# ---- 1. the tarball's contents
if [ -f Makefile ] && git rev-parse --git-dir > /dev/null 2>&1; then
    tarball=$(sed -n 's/^PACKAGE_TARNAME = //p' Makefile)-$(sed -n 's/^VERSION = //p' Makefile).tar.gz
    make -s dist-gzip > /dev/null
    mv "$tarball" "$work/"
    files_of "$work/$tarball" > "$work/shipped"
    git ls-files | grep -vxE '\.gitignore|m4/\.gitkeep' | sort > "$work/committed"
    generated='^(configure|Makefile\.in|aclocal\.m4|config\.h\.in|build-aux/[^/]+|m4/(libtool|lt[a-z~_]+)\.m4)$'
    missing=$(comm -23 "$work/committed" "$work/shipped")
    extra=$(comm -13 "$work/committed" "$work/shipped" | grep -vE "$generated" || true)
    if [ -n "$missing" ] || [ -n "$extra" ]; then
        [ -z "$missing" ] || printf '15-distcheck: committed but not in the tarball (add to EXTRA_DIST):\n%s\n' "$missing"
        [ -z "$extra" ] || printf '15-distcheck: in the tarball but not committed (a build output?):\n%s\n' "$extra"
        exit 1
    fi
    echo "15-distcheck: make dist after make check ships the $(wc -l < "$work/committed") committed files and autotools output, nothing else"
else
    echo "15-distcheck: no configured git checkout here: the tarball, from a clean copy, is not compared"
    ci_src "$work/git"
    (cd "$CI_SRC_DIR" && ./configure -q && make -s dist-gzip > /dev/null)
    tarball=$(cd "$CI_SRC_DIR" && ls -- *.tar.gz)
    mv "$CI_SRC_DIR/$tarball" "$work/"
    files_of "$work/$tarball" > "$work/shipped"
fi

# ---- 2. the tarball, read-only, built out of tree with ASan+UBSan, the whole suite
tar -C "$work" -xzf "$work/$tarball"
src=$work/${tarball%.tar.gz}
chmod -R a-w "$src"
build=$work/build
stamp=$work/stamp
touch "$stamp"
sleep 1
echo "== ASan+UBSan: make check of the tarball, out of tree, torture suites included ($build)"
t=$SECONDS
san='-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all'
ci_build "$src" "$build" CFLAGS="-O1 -g $san" CXXFLAGS="-O1 -g $san" LDFLAGS="$san"
if ! (cd "$build" && ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1 \
        UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 "$top/.ci/leftovers.sh" make -s -j2 check > "$work/check.out" 2>&1); then
    grep -E '^(leftovers|  )' "$work/check.out" | head -n 40 || true
    ci_logs "$build"
    fail=1
fi
grep -E '^(leftovers|# (TOTAL|PASS|SKIP|FAIL|ERROR):)' "$work/check.out" || true
echo "   ASan+UBSan: $((SECONDS - t)) s, build included; the slowest tests:"
tools/test-times "$build" 10 || true
written=$(find "$src" -newer "$stamp" | head -n 20)
if [ -n "$written" ]; then
    printf '15-distcheck: the out-of-tree build and check wrote into the source tree:\n%s\n' "$written"
    fail=1
fi

# ---- 3. install, uninstall, dist and distclean from that build
dest=$work/dest
(cd "$build" && make -s install DESTDIR="$dest" > /dev/null && make -s uninstall DESTDIR="$dest" > /dev/null) ||
    { echo "15-distcheck: make install or uninstall failed"; fail=1; }
left=$(find "$dest" -type f 2> /dev/null | head -n 20)
if [ -n "$left" ]; then
    printf '15-distcheck: make uninstall left files behind:\n%s\n' "$left"
    fail=1
fi
(cd "$build" && make -s dist-gzip > /dev/null) 2> /dev/null || true
files_of "$build/$tarball" > "$work/shipped-vpath" 2> /dev/null || true
if ! cmp -s "$work/shipped" "$work/shipped-vpath"; then
    echo "15-distcheck: make dist from the out-of-tree build ships other files:"
    diff "$work/shipped" "$work/shipped-vpath" | head -n 20
    fail=1
fi
rm -f "$build/$tarball"
(cd "$build" && make -s distclean > /dev/null) || { echo "15-distcheck: make distclean failed"; fail=1; }
left=$(cd "$build" && find . -type f | head -n 20)
if [ -n "$left" ]; then
    printf '15-distcheck: make distclean left files in the build directory:\n%s\n' "$left"
    fail=1
fi

[ $fail -eq 0 ] || exit 1
chmod -R u+w "$src"
rm -rf "$work"
echo "15-distcheck: the tarball builds out of tree read-only, passes make check under ASan+UBSan, installs, uninstalls, dists and cleans ($(( $(date +%s) - start ))s)"
