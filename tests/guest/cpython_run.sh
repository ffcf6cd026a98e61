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
# perf's default event, cycles, samples nothing in some of these machines
# (ppc64le: qemu's pseries under TCG), and in riscv64's (qemu's virt, perf
# 6.12) `perf record -e cycles` never returns, even of /bin/true, and only
# SIGKILL ends it.  There `perf record` gets -e cpu-clock from a wrapper
# first on PATH, the event tests/guest/proofs.sh records with everywhere.
# The test file is left as it is.
timeout -s KILL 30 perf record -q -o /tmp/probe.data -- stock/bin/python3.13 -c 'for i in range(300000): pass' > /dev/null 2>&1
probe=$?
if [ $probe -eq 137 ]; then
    echo "perf: perf record with the default event (cycles) never returned here (killed after 30 s)"
fi
if [ "$(perf script -i /tmp/probe.data 2> /dev/null | wc -l)" -eq 0 ]; then
    mkdir -p /tmp/perfbin
    real=$(command -v perf)
    # shellcheck disable=SC2016 # "$1" and "$@" are the wrapper's
    printf '#!/bin/sh\nif [ "$1" = record ]; then shift; exec %s record -e cpu-clock "$@"; fi\nexec %s "$@"\n' \
        "$real" "$real" > /tmp/perfbin/perf
    chmod +x /tmp/perfbin/perf
    export PATH="/tmp/perfbin:$PATH"
    echo "perf: the default event (cycles) sampled nothing here: perf record gets -e cpu-clock"
fi
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
