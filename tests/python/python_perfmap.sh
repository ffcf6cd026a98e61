#!/bin/sh
# SPDX-License-Identifier: MIT
# The perf map of perftramp's CPython module, on every supported CPython
# found here, checked as CPython's own test_perf_profiler checks -X perf's:
# line format and addresses, fork, enable/disable inside a script, nothing
# without it (tests/python/python_perfmap.py).
# PROOF: python.<ver>.perfmap per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"

perfmap() {
    TMPDIR=$PWD run_python "${PT_SRCDIR:-.}/tests/python/python_perfmap.py" > out 2>&1
    st=$?
    cat out
    msg=$(sed -n 's/^FAIL: //p' out | head -n 1)
    [ $st -eq 0 ] || fail "${msg:-$(tail -n 1 out)}"
    proven "$(grep -c '^ok:' out) checks (line format and addresses in executable anonymous memory, fork, enable/disable, off)"
}
each_python perfmap perfmap
python_exit
