#!/bin/bash
# SPDX-License-Identifier: MIT
# The release tarball.
#  1. In the tree CI built and tested (README's commands ran `make check`
#     in it, so tests/ holds .log and .trs files): `make dist` must ship
#     exactly the committed files plus autotools' output: a file missing
#     from EXTRA_DIST, or a build output that a directory entry dragged in,
#     fails here.
#  2. `make distcheck` in a clean copy of the committed tree: the tarball
#     configures with warnings as errors, builds, passes a short `make check`
#     out of tree, installs and uninstalls, and cleans up after itself, all
#     with TMPDIR at a fresh directory that must stay empty
#     (.ci/leftovers.sh).
#     The short check (DISTCHECK_TESTS below) runs the fast Check programs
#     and the scripts that read the source tree's data or the installed
#     files.  The whole suite does not run again here: part 1 proves that
#     the tarball holds exactly the committed files, and 20-sanitizers runs
#     the whole suite out of tree from those same files (and checks that it
#     wrote nothing into the source).  distcheck's read-only source tree
#     guards nothing for root, which CI is.  The whole suite here took
#     862-1018 s; the short check's step 190-272 s (2026-12-07, load 3).
set -euo pipefail
DISTCHECK_TESTS='tests/license.sh tests/emit/check_emitter tests/emit/check_elf tests/emit/check_ehabi
 tests/arch/check_near tests/outputs/check_perfmap tests/outputs/check_names tests/unwind/check_unwind
 tests/unwind/check_unwind_cxx tests/api/check_fork_lazy tests/torture/check_misuse tests/abi/abi_symbols.sh
 tests/abi/check_abi tests/perf/perf_parsers.sh tests/perf/perf_e2e.sh tests/cli/cli_check.sh tests/cli/cli_cfi.sh
 tests/clients/demo_tiny.sh tests/clients/demo_perf.sh tests/gdb/gdb_fresh.sh tests/python/python_install.sh
 tests/lib/proof_summary_check.sh'
DISTCHECK_TESTS=$(echo $DISTCHECK_TESTS)
# The emulated machines (tests/guest, minutes each), the musl build
# (tests/musl/musl.sh) and CPython's test file on the two interpreters
# (tests/cpython) proved themselves in the
# README's `make check`; part 1 checks the tarball ships their files.  So
# the tarball's `make check` skips them, and with them the proofs that only
# an in-tree build runs (tests/arch/port_drill.sh): strict mode off here, as
# in the sanitizer passes, for the same reason (every proof was established,
# strictly, by the README's `make check` of this run); a test that fails
# still fails the step.
export PT_GUEST_TESTS=0 PT_MUSL_TESTS=0 PT_CPYTHON_TESTS=0 PERFTRAMP_ALL_PROOFS=0
cd "$(dirname "$0")/../.."
start=$(date +%s)
. tests/lib/ci_lib.sh

# 1. what the tarball ships
if [ -f Makefile ] && git rev-parse --git-dir > /dev/null 2>&1; then
    list=$(mktemp -d "${TMPDIR:-/tmp}/pt-dist.XXXXXX")
    trap 'rm -rf "$list"' EXIT
    tarball=$(sed -n 's/^PACKAGE_TARNAME = //p' Makefile)-$(sed -n 's/^VERSION = //p' Makefile).tar.gz
    make -s dist-gzip > /dev/null
    tar -tzf "$tarball" | sed 's|^[^/]*/||' | grep -v '/$' | sed '/^$/d' | sort > "$list/shipped"
    rm -f "$tarball"
    # committed files a tarball has no use for
    git ls-files | grep -vxE '\.gitignore|m4/\.gitkeep' | sort > "$list/committed"
    # autotools output: generated, shipped, never committed
    generated='^(configure|Makefile\.in|aclocal\.m4|config\.h\.in|build-aux/[^/]+|m4/(libtool|lt[a-z~_]+)\.m4)$'
    missing=$(comm -23 "$list/committed" "$list/shipped")
    extra=$(comm -13 "$list/committed" "$list/shipped" | grep -vE "$generated" || true)
    if [ -n "$missing" ] || [ -n "$extra" ]; then
        [ -z "$missing" ] || printf '15-distcheck: committed but not in the tarball (add to EXTRA_DIST):\n%s\n' "$missing"
        [ -z "$extra" ] || printf '15-distcheck: in the tarball but not committed (a build output?):\n%s\n' "$extra"
        exit 1
    fi
    echo "15-distcheck: make dist after make check ships the $(wc -l < "$list/committed") committed files and autotools output, nothing else"
else
    echo "15-distcheck: no configured git checkout here: the tarball's contents are not compared"
fi

# 2. make distcheck from a clean copy
# outside /tmp: .ci/leftovers.sh then gives the run a private, empty /tmp
ci_src /var/tmp/ci-distcheck-src
(cd "$CI_SRC_DIR" && ./configure -q && .ci/leftovers.sh \
    make -s -j2 distcheck DISTCHECK_CONFIGURE_FLAGS=--enable-werror TESTS="$DISTCHECK_TESTS" > distcheck.log 2>&1) || {
    tail -n 80 "$CI_SRC_DIR/distcheck.log"
    ci_logs "$CI_SRC_DIR"
    exit 1
}
grep -E '^(leftovers|[^ ]*tar.gz is ready|# (TOTAL|PASS|SKIP|FAIL|ERROR):)|archives ready' "$CI_SRC_DIR/distcheck.log" || true
[ -n "${PT_CI_SRC:-}" ] || rm -rf /var/tmp/ci-distcheck-src
echo "15-distcheck: make distcheck passed ($(( $(date +%s) - start ))s)"
