#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp's CPython module, on every supported CPython found here:
# refusal while another eval-frame hook or CPython's own trampoline is
# installed, enable/disable, fork, exceptions, generators, coroutines and
# threads through trampolines (tests/python/python_api.py).
# PROOF: python.<ver>.api per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"

# The module links the installed library's code only: no function of the
# readers (libperftramp_read, tools and tests only) may be in it.
readers=$(nm --defined-only "${PT_BUILDDIR:-.}/.libs/libperftramp_read.a" 2>/dev/null | awk '$2 == "T" {print $3}' | sort -u)
api() {
    [ -n "$readers" ] || fail "no reader functions found in libperftramp_read.a (not built?)"
    printf '%s\n' "$readers" > readers.txt
    carried=$(nm "$module" | awk '$2 ~ /^[Tt]$/ {print $3}' | grep -F -x -f readers.txt | head -n 3 | tr '\n' ' ')
    [ -z "$carried" ] || fail "the module carries reader functions: $carried"
    # A copy outside the source tree: its path is what the trampolines are named after.
    cp "${PT_SRCDIR:-.}/tests/python/python_api.py" api.py || fail "cannot copy python_api.py"
    run_python api.py > out 2>&1
    st=$?
    cat out
    msg=$(sed -n 's/^FAIL: //p' out | head -n 1)
    [ $st -eq 0 ] || fail "${msg:-$(tail -n 1 out)}"
    proven "$(grep -c '^ok:' out) checks (refusals, enable/disable, exceptions, generators, coroutines, threads, fork)"
}
each_python api api
python_exit
