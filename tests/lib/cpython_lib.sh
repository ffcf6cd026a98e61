# SPDX-License-Identifier: MIT
# What tests/cpython/*.sh share (bash; after tests/lib/proof_lib.sh, with
# $S, $B and $tmp set):
#   cpython_builds   sets $stock and $patched, the interpreters of
#                    examples/cpython/build.sh (built now when the cache
#                    lacks them, its messages passed on), and puts this
#                    build tree's libperftramp first on LD_LIBRARY_PATH,
#                    checked in the patched interpreter's maps.  SKIP when
#                    the source cannot be had, with PT_CPYTHON_TESTS=0
#                    (repeated make check passes), and when the library is
#                    a sanitizer build: CPython is not instrumented, so
#                    libasan would not come first in it and its subprocesses
#                    (the plain make check runs these tests).
#   side_by_side DIR WHERE   reads DIR/stock.outcomes and DIR/patched.outcomes
#                    (tests/lib/unittest_outcomes.awk's), prints each test's
#                    outcome on both and the counts, and sets $same (0 when
#                    no test regressed or was newly skipped) and $cok $csk
#                    $cother $pok $psk $pother $kept $regressed $newly
#                    (tests/lib/unittest_compare.awk's counts)
# shellcheck shell=bash
cpython_builds() {
    [ "${PT_CPYTHON_TESTS:-1}" = 0 ] && skip "PT_CPYTHON_TESTS=0"
    ldd "$B/.libs/libperftramp.so.0" 2> /dev/null | grep -qE 'lib(a|t|ub)san' &&
        skip "libperftramp is a sanitizer build: the uninstrumented CPython cannot load it (the plain make check runs this test)"
    sh "$S/examples/cpython/build.sh" > "$tmp/build.out" 2> "$tmp/build.err"
    local rc=$?
    [ $rc -eq 2 ] && skip "the CPython 3.13.5 source cannot be had: $(tail -n 1 "$tmp/build.err")"
    cat "$tmp/build.err"
    [ $rc -eq 0 ] || { bad "examples/cpython/build.sh failed"; exit 1; }
    stock=$(sed -n 's/^stock //p' "$tmp/build.out")/python
    patched=$(sed -n 's/^patched //p' "$tmp/build.out")/python
    export LD_LIBRARY_PATH=$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
    local lib
    lib=$("$patched" -c 'print(*[l.split()[-1] for l in open("/proc/self/maps") if "libperftramp" in l][:1])')
    [ "$lib" -ef "$B/.libs/libperftramp.so.0" ] ||
        { bad "the patched interpreter loaded '$lib', not $B/.libs/libperftramp.so.0"; exit 1; }
}

# shellcheck disable=SC2034 # the counts are the caller's
side_by_side() {
    echo "each test's outcome$2 (tests/lib/unittest_outcomes.awk), stock | patched:"
    awk -F '\t' -f "$S/tests/lib/unittest_compare.awk" "$1/stock.outcomes" "$1/patched.outcomes" > "$1/table"
    same=$?
    grep -v '^counts: ' "$1/table"
    read -r cok csk cother pok psk pother kept regressed newly < <(sed -n 's/^counts: //p' "$1/table")
    echo "stock: $cok ok, $csk skipped, $cother failed; patched: $pok ok, $psk skipped, $pother failed"
}
