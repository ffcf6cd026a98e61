#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside an emulated machine (tools/guest run), as its /payload/run,
# under busybox sh with Debian's perf: CPython's own test files,
#   python -m test test_perf_profiler test_perfmaps -v
# on the stock interpreter, then on the patched one (both built from the
# same source and flags by examples/cpython/build.sh, installed here by
# tests/guest/cpython_guest.sh).  Each run's output goes to out/<kind>.log;
# the host judges them.  Prints each run's exit status and time.
# The payload: stock/ and patched/ (bin/python3.13, lib/python3.13),
# lib/libperftramp.so.0 (the patched one's, built for this machine) and
# "ignore": regrtest's --ignore patterns, the tests this machine leaves
# out (cpython_guest.sh says which and why).
cd /payload || exit 1
mkdir -p out /tmp/home
export HOME=/tmp/home
unset PYTHONPERFSUPPORT PYTHON_PERF_JIT_SUPPORT
set --
while read -r pattern; do
    [ -n "$pattern" ] && set -- "$@" --ignore "$pattern"
done < ignore
echo "perf: $(perf --version)"
for kind in stock patched; do
    lib=
    [ "$kind" = patched ] && lib=/payload/lib
    t=$(cut -d. -f1 /proc/uptime)
    # regrtest's own temporary directory in /tmp (RAM), not the build's
    LD_LIBRARY_PATH=$lib "$kind/bin/python3.13" -m test test_perf_profiler test_perfmaps -v \
        --tempdir "/tmp/regrtest-$kind" "$@" > "out/$kind.log" 2>&1
    rc=$?
    echo "$kind: python -m test test_perf_profiler test_perfmaps -v: exit $rc after $(($(cut -d. -f1 /proc/uptime) - t)) s"
done
exit 0
