#!/bin/bash
# SPDX-License-Identifier: MIT
# CPython's own judgement of examples/cpython: the unmodified
# Lib/test/test_perf_profiler.py and Lib/test/test_perfmaps.py
# (`python -m test test_perf_profiler test_perfmaps -v`) on the stock
# interpreter and on the patched one, same source and flags
# (examples/cpython/build.sh), side by side.  The patched one runs against
# this build tree's libperftramp (LD_LIBRARY_PATH; checked in its maps).
# PROOF: cpython.<arch>.test_perf_profiler proven when every test that
# passes on stock passes on the patched interpreter and none that ran on
# stock is skipped there (tests/lib/unittest_compare.awk), at least one
# passed, and the classes that run perf passed on both: TestPerfProfiler
# (-X perf, --call-graph fp) and, with perf >= 6.6, TestPerfProfilerWithDwarf
# (-X perf_jit, -k 1 --call-graph dwarf, perf inject: perftramp's jitdump
# and unwind information).
# Each run gets a /tmp of its own (a mount namespace, as root): the test
# file's tearDown deletes every /tmp/perf-*.map that appeared while a test
# ran, which would take other tests' maps in a parallel `make check`.
# SKIP when the CPython source cannot be had.
set -u
S=$(cd "${PT_SRCDIR:-.}" && pwd)
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
arch=${PT_HOST_ARCH:-$(uname -m)}
PROOF_IDS="cpython.$arch.test_perf_profiler"
# shellcheck source=tests/lib/proof_lib.sh
. "$S/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/cpython_lib.sh
. "$S/tests/lib/cpython_lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-cpython-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    rm -rf "$tmp"
}
trap cleanup EXIT
unset PERFTRAMP PERFTRAMP_SIGNAL JITDUMPDIR PYTHONPERFSUPPORT PYTHON_PERF_JIT_SUPPORT PYTHON_PERFTRAMP_ELF
cpython_builds

# perf >= 6.6, for the file's DWARF class (tools/deps/perf-backports.sh:
# bookworm-backports' perf, unpacked); else Debian 12's 6.1, where that
# class skips itself on both interpreters
if newer=$(sh "$S/tools/deps/perf-backports.sh" --bindir 2> "$tmp/perf.err"); then
    export PATH=$newer:$PATH
else
    echo "bookworm-backports' perf cannot be had ($(tail -n 1 "$tmp/perf.err")): the DWARF class will skip on both"
fi
echo "perf for the test file: $(command -v perf), $(perf --version)"

# isolated DIR CMD...: CMD in DIR, with DIR as its /tmp where a mount
# namespace is ours to make (else as it is), HOME and TMPDIR in it.  The
# build tree's library goes along (it may itself be under /tmp: tests/mutate.sh).
isolated() {
    local dir=$1
    shift
    mkdir -p "$dir/home" "$dir/lib"
    cp -P "$B"/.libs/libperftramp.so* "$dir/lib/"
    if [ "$(id -u)" -eq 0 ] && unshare --mount --propagation private true 2> /dev/null &&
        case $stock$patched in /tmp/*) false ;; esac; then
        HOME=/tmp/home TMPDIR=/tmp LD_LIBRARY_PATH=/tmp/lib unshare --mount --propagation private \
            sh -c 'mount --bind "$0" /tmp && cd /tmp && exec "$@"' "$dir" "$@"
    else
        (cd "$dir" && HOME=$dir/home TMPDIR=$dir LD_LIBRARY_PATH=$dir/lib exec "$@")
    fi
}
# run KIND: the test file on KIND's interpreter; its outcomes in $tmp/KIND.outcomes
run() {
    local py=$stock t0=$SECONDS
    [ "$1" = stock ] || py=$patched
    # (--tempdir: regrtest's work directory, else in the cached build tree)
    isolated "$tmp/$1" "$py" -m test --tempdir=work test_perf_profiler test_perfmaps -v > "$tmp/$1.out" 2>&1
    echo "$1: python -m test test_perf_profiler test_perfmaps -v: exit $?, $((SECONDS - t0)) s"
    awk -f "$S/tests/lib/unittest_outcomes.awk" "$tmp/$1.out" > "$tmp/$1.outcomes"
}
for kind in stock patched; do
    run $kind
    # A test that records perf can lose its samples on a loaded machine
    # (stock's DWARF class failed once at load 12, in 159 s, where it takes
    # 11 s): one more run of that interpreter, the first one's failures shown.
    if grep -q "^test\.test_perf_profiler\.TestPerfProfiler[A-Za-z]*\.[a-z_]*	\(FAIL\|ERROR\)" "$tmp/$kind.outcomes"; then
        echo "$kind: a perf test failed; its report, then one more run:"
        sed -n '/^\(FAIL\|ERROR\): test_/,/^\(=====*\|Ran [0-9]\)/p' "$tmp/$kind.out" | head -n 40 | sed 's/^/    /'
        run $kind
    fi
done
side_by_side "$tmp" ""
# the classes that run perf: fp always, DWARF with perf >= 6.6
classes=TestPerfProfiler
[ -z "$newer" ] || classes="$classes TestPerfProfilerWithDwarf"
for kind in stock patched; do
    for c in $classes; do
        t=$c.test_python_calls_appear_in_the_stack_if_perf_activated
        grep -q "$t	ok" "$tmp/$kind.outcomes" || bad "$kind: $t: $(grep "$t" "$tmp/$kind.outcomes" | cut -f2-)"
    done
done
[ "$cok" -gt 0 ] || bad "no test passed on stock: nothing to compare"
if [ $same -ne 0 ]; then
    bad "$regressed test(s) that pass on stock do not pass on the patched interpreter; $newly that ran on stock were skipped there"
    for kind in stock patched; do
        echo "--- the $kind run's last lines:"
        tail -n 30 "$tmp/$kind.out"
    done
fi
# the DWARF class's own skip reason when it skipped (perf < 6.6)
dwarf=$(grep -m 1 'TestPerfProfilerWithDwarf.*skipped' "$tmp/stock.outcomes" | cut -f3)
[ $failed -eq 0 ] && prove "cpython.$arch.test_perf_profiler" proven \
    "$kept/$kept tests that pass on stock pass on the patched interpreter (stock $cok ok $csk skipped, patched $pok ok $psk skipped), none skipped only on the patched one${dwarf:+; skipped on both: $dwarf}"
exit $failed
