#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp with a libffi that uses static trampolines (issue 12, point 2).
# tools/deps/ffi-static.sh builds Debian's libffi 3.4.4 source with
# --enable-exec-static-tramp into $PT_FFI_STATIC_PREFIX
# (/opt/perftramp-ffi-static).  This test
#  1. confirms that libffi really uses static trampolines:
#     tests/mem/ffi_static_probe.c, linked against it, finds ffi_closure_alloc's
#     code pointer outside the closure's block, in an executable mapping of
#     a file (libffi's trampoline page), while the block is not executable;
#     and the old probe (8 bytes written at offset 0, ffi_closure.ftramp)
#     makes ffi_closure_free die, as issue 12 saw;
#  2. configures and builds perftramp against it in a separate build
#     directory (that prefix's PKG_CONFIG_PATH, an rpath to its lib/) and
#     checks that the test programs load that libffi;
#  3. runs tests/mem/codemem_which there, which must report perftramp's own
#     double map (and its /proc/self/maps line), and in this build, which
#     must report libffi (Debian's libffi has no static trampolines);
#  4. runs the contract, the perf end-to-end and the unwinding tests (libgcc,
#     every instruction boundary, C++ exceptions, nongnu and LLVM libunwind,
#     gdb), and the fork torture
#     suite (the double map is MAP_SHARED: parent and child must part), in
#     that build: all must pass (a SKIP counts as not run).
# Prints PROOF: libffi.static-tramp proven|failed|not-run.  SKIP (77) when
# that libffi is not built (tools/install-deps builds it; the proof table's
# strict mode then requires this proof).  PT_FFI_STATIC_TESTS=0 skips it (repeated make check
# passes).  PT_FFI_STATIC_KEEP=1 keeps the work directory.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
cc=${PT_CC:-cc}
prefix=${PT_FFI_STATIC_PREFIX:-/opt/perftramp-ffi-static}
proof=libffi.static-tramp

notrun() {
    echo "PROOF: $proof not-run $*"
    echo "SKIP: $*"
    exit 77
}
fail() {
    echo "PROOF: $proof failed $*"
    echo "FAIL: $*"
    exit 1
}

[ "${PT_FFI_STATIC_TESTS:-1}" = 0 ] && notrun "PT_FFI_STATIC_TESTS=0"
case $(uname -m) in
    x86_64 | aarch64) ;;
    *) echo "SKIP: libffi has no static trampolines on $(uname -m)"; echo "PROOF: $proof not-run no static trampolines on $(uname -m)"; exit 77 ;;
esac
# a sanitizer build's flags do not carry over to the second build: the
# plain build runs this test
if nm "$build/.libs/libperftramp_core.a" 2>/dev/null | grep -qE '__(asan|tsan|ubsan)_'; then
    echo "SKIP: sanitizer build (this test runs in the plain build)"
    echo "PROOF: $proof not-run sanitizer build"
    exit 77
fi
[ -f "$prefix/lib/pkgconfig/libffi.pc" ] ||
    notrun "no libffi with static trampolines in $prefix (tools/deps/ffi-static.sh builds it)"
grep -qs -- --enable-exec-static-tramp "$prefix/built-with" ||
    notrun "$prefix/built-with does not say --enable-exec-static-tramp (rebuild: tools/deps/ffi-static.sh)"

# shellcheck source=tests/lib/second_build.sh
. "$src/tests/lib/second_build.sh"
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-ffi-static.XXXXXX") || fail "mktemp"
if [ -n "${PT_FFI_STATIC_KEEP:-}" ]; then echo "# work directory: $work"; else trap 'rm -rf "$work"' EXIT; fi
ffi_cflags=$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --cflags libffi)
ffi_libs="$(PKG_CONFIG_PATH=$prefix/lib/pkgconfig pkg-config --libs libffi) -Wl,-rpath,$prefix/lib"

# ---- 1. this libffi uses static trampolines ------------------------------
echo "== 1. $prefix: $(tr '\n' ' ' < "$prefix/built-with")"
# shellcheck disable=SC2086
$cc -O1 -o "$work/ffi_static_probe" "$src/tests/mem/ffi_static_probe.c" $ffi_cflags $ffi_libs 2>"$work/probe.err" ||
    { cat "$work/probe.err"; fail "cannot build tests/mem/ffi_static_probe.c against $prefix"; }
ldd "$work/ffi_static_probe" | grep -q "$prefix/lib/libffi" || fail "ffi_static_probe does not load $prefix's libffi"
"$work/ffi_static_probe" layout > "$work/layout.out" 2>&1
rc=$?
sed 's/^/   /' "$work/layout.out"
[ $rc -eq 0 ] || fail "$prefix's libffi does not use static trampolines (see the mappings above)"
"$work/ffi_static_probe" old-probe > "$work/old.out" 2>&1
rc=$?
if [ $rc -gt 128 ]; then
    echo "   the old probe (header written, then ffi_closure_free) dies with signal $((rc - 128)), as issue 12 saw"
else
    cat "$work/old.out"
    fail "the old probe did not crash this libffi (exit $rc): not the static-trampoline layout"
fi

# ---- 2. perftramp built against it -------------------------------------------
# An in-tree configured source refuses out-of-tree builds: a clean copy
# (tests/lib/second_build.sh) unless src is clean.
t0=$(date +%s)
clean_source "$src" "$work" || fail "no source tree to configure a second build from"
mkdir "$work/build"
b=$work/build
(cd "$b" && "$bsrc/configure" -q --enable-werror PKG_CONFIG_PATH="$prefix/lib/pkgconfig" \
    LDFLAGS="-Wl,-rpath,$prefix/lib" > configure.log 2>&1) ||
    { tail -30 "$b/configure.log" "$b/config.log" 2>/dev/null; fail "configure against $prefix"; }
grep -q "^FFI_CFLAGS = .*$prefix" "$b/Makefile" || fail "configure did not take libffi from $prefix"
# The make running this test exports its command line (TESTS=...,
# LOG_COMPILER=...) and job server in MAKEFLAGS: the second build must not
# inherit them.
unset MAKEFLAGS MFLAGS MAKELEVEL
# The library, the perftramp command and examples (make all), then only the
# check programs the tests below are or run (perf_e2e.sh: the workload and
# jitdump_edit; gdb_bt.sh: its program); check-TESTS then runs these tests.
tests="tests/arch/check_contract tests/perf/perf_e2e.sh tests/unwind/check_unwind tests/arch/check_boundaries tests/unwind/check_unwind_cxx tests/unwind/check_unwind_nongnu tests/unwind/unwind_llvm.sh tests/gdb/gdb_bt.sh tests/torture/check_fork"
progs="tests/arch/check_contract tests/unwind/check_unwind tests/arch/check_boundaries tests/unwind/check_unwind_cxx tests/unwind/check_unwind_nongnu tests/torture/check_fork tests/perf/perf_workload tests/outputs/jitdump_edit tests/gdb/gdb_bt_prog tests/mem/codemem_which"
# shellcheck disable=SC2086 # a list
(cd "$b" && make -j2 all > make.log 2>&1 && make -j2 $progs >> make.log 2>&1) ||
    { tail -40 "$b/make.log"; fail "building against $prefix"; }
echo "== 2. perftramp configured and built against $prefix in $(($(date +%s) - t0))s"
for p in tests/arch/check_contract tests/perf/perf_workload tests/mem/codemem_which; do
    lib=$(ldd "$b/$p" | sed -n 's/^.*libffi[^ ]* => \([^ ]*\).*/\1/p')
    echo "   $p loads $lib"
    case $lib in "$prefix"/lib/*) ;; *) fail "$p does not load $prefix's libffi" ;; esac
done

# ---- 3. which memory ---------------------------------------------------------
echo "== 3. code memory"
"$b/tests/mem/codemem_which" > "$work/which.out" 2>&1 || { cat "$work/which.out"; fail "codemem_which (static trampolines)"; }
sed 's/^/   static-trampoline libffi: /' "$work/which.out"
grep -qx "backend: doublemap" "$work/which.out" || fail "perftramp did not fall back to its own double map"
memory=$(sed -n 's/^memory: //p' "$work/which.out")
grep -q '^trampoline: .* in r-xs "' "$work/which.out" || fail "the trampoline is not in a shared read-execute view"
# This build's libffi: used as-is unless it has static trampolines too.
if [ -x "$build/tests/mem/codemem_which" ]; then
    "$build/tests/mem/codemem_which" > "$work/which-system.out" 2>&1 || { cat "$work/which-system.out"; fail "codemem_which (this build)"; }
    sed 's/^/   this build'"'"'s libffi: /' "$work/which-system.out"
    want=libffi
    # shellcheck disable=SC2046
    if $cc -O1 -o "$work/ffi_system_probe" "$src/tests/mem/ffi_static_probe.c" $(pkg-config --cflags --libs libffi) \
            2>/dev/null && "$work/ffi_system_probe" layout > "$work/system-layout.out" 2>&1; then
        want=doublemap
    fi
    grep -qx "backend: $want" "$work/which-system.out" || fail "this build's libffi: backend is not $want"
fi

# ---- 4. the tests, against this libffi -------------------------------------------
echo "== 4. contract, perf, unwinding and fork tests against $prefix"
# Tests that build their own program (unwind_llvm.sh) take libffi from
# pkg-config and find it at run time through the library path.
# shellcheck disable=SC2086
(cd "$b" && PKG_CONFIG_PATH=$prefix/lib/pkgconfig LD_LIBRARY_PATH=$prefix/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
    make check-TESTS TESTS="$tests" > check.log 2>&1)
# shellcheck disable=SC2086 # $tests is a list
test_results "$b" $tests
# what those tests proved there (indented: they are the second build's)
for t in $tests; do
    [ -f "$b/$t.log" ] && sed -n 's/^PROOF: /   static-trampoline build: /p' "$b/$t.log"
done
[ -z "$notpassed" ] || fail "$passed/$total passed against static-trampoline libffi; not passed:$notpassed"
echo "PROOF: $proof proven libffi 3.4.4 --enable-exec-static-tramp (code pointer in libffi's trampoline page); perftramp fell back to doublemap ($memory); $passed/$total contract, perf, unwind and fork tests passed"
exit 0
