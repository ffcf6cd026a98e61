#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check against perf on CPython's own perf support:
#  - 3.13 -X perf_jit writes /tmp/jit-<pid>.dump: one 11-byte trampoline
#    per code object, all with the same bytes.  Valid for the perf here, and
#    perf agrees; judged for perf 6.17 (build-ids from the code alone) the
#    check must report the merged names, for 6.1 without libcrypto not, and
#    the build-ids this perf wrote must indeed all differ (random).
#  - 3.12 -X perf writes only a perf map (/tmp/perf-<pid>.map): given to
#    the check by mistake it must be named for what it is.
set -u
PROOF_ID="check.cpython313 check.cpython312"
# shellcheck source=tests/lib/producers_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/producers_lib.sh"
PY313=${PT_PYTHON313:-$HOME/.pyenv/versions/3.13.0/bin/python3.13}
PY312=${PT_PYTHON312:-$HOME/.pyenv/versions/3.12.1/bin/python3.12}
cat > "$work/fib.py" << 'PY'
import os
print(os.getpid(), flush=True)
def fib(n): return n if n < 2 else fib(n - 1) + fib(n - 2)
def run(): return sum(fib(20) for _ in range(12))
print(run())
PY

# the trampolines are seldom the sampled leaf: judge the call chains
REC_CALLGRAPH="--call-graph dwarf,16384"
if [ -x "$PY313" ]; then
    record "$work/py313" "$PY313" -X perf_jit "$work/fib.py" || failed "python3.13 -X perf_jit under perf record"
    pid=$(head -1 "$work/py313/out.txt")
    dump=/tmp/jit-$pid.dump
    cleanup_extra="$dump /tmp/jitted-$pid-*.so /tmp/perf-$pid.map"
    [ -f "$dump" ] || failed "python3.13 -X perf_jit wrote no $dump"
    judge "$dump"
    inject "$work/py313" "$dump"
    samples "$work/py313"
    sed -n '1,10p' "$work/check.txt"
    if agree check.cpython313 && [ "$check_rc" -eq 0 ] && [ "${s_expected:-0}" -ge 10 ]; then
        ids=$(for so in /tmp/jitted-"$pid"-*.so; do readelf -n "$so" | sed -n 's/.*Build ID: //p'; done)
        n_ids=$(echo "$ids" | sort -u | wc -l)
        "$PT" check --perf-version 6.17 "$dump" > "$work/617.txt" 2>&1
        rc617=$?
        echo "perf 6.17 rules: exit $rc617: $(grep -m1 'same code bytes' "$work/617.txt" | sed 's/^ *//' | cut -c1-160)"
        echo "this perf wrote $n_ids distinct build-ids for $n_so .so"
        if [ $rc617 -eq 1 ] && grep -q "same code bytes" "$work/617.txt" && [ "$n_ids" -eq "$n_so" ]; then
            echo "PROOF: check.cpython313 proven valid and perf agrees: $n_so .so for $n_load LOADs, $s_named of $s_expected samples named right, $n_ids distinct build-ids; names merge only under perf 6.17-6.18 rules"
        else
            echo "PROOF: check.cpython313 failed build-id rules: 6.17 exit $rc617, $n_ids build-ids for $n_so .so"
            fail=1
        fi
    else
        echo "PROOF: check.cpython313 failed check exit $check_rc, perf inject exit $inject_rc, $n_so .so for $n_load LOADs, ${s_expected:-0} samples"
        fail=1
    fi
else
    echo "PROOF: check.cpython313 not-run $PY313 is not installed (pyenv 3.13.0)"
fi

if [ -x "$PY312" ]; then
    record "$work/py312" "$PY312" -X perf "$work/fib.py" || failed "python3.12 -X perf under perf record"
    pid=$(head -1 "$work/py312/out.txt")
    map=/tmp/perf-$pid.map
    cleanup_extra="$cleanup_extra $map"
    [ -f "$map" ] || failed "python3.12 -X perf wrote no $map"
    "$PT" check "$map" > "$work/map.txt" 2>&1
    rc=$?
    p script -F ip,sym -i "$work/py312/perf.data" 2> /dev/null | grep -c 'py::' > "$work/py312/named" || true
    echo "perf map given to check: exit $rc: $(grep -m1 'error  *at' "$work/map.txt" | sed 's/^ *//')"
    echo "perf itself named $(cat "$work/py312/named") samples py::... from the map"
    if [ $rc -eq 1 ] && grep -q "looks like a perf map" "$work/map.txt" && [ "$(cat "$work/py312/named")" -gt 0 ]; then
        echo "PROOF: check.cpython312 proven a perf map is named for what it is (perf reads it directly: $(cat "$work/py312/named") samples named)"
    else
        echo "PROOF: check.cpython312 failed the perf map was not recognised (exit $rc)"
        fail=1
    fi
else
    echo "PROOF: check.cpython312 not-run $PY312 is not installed (pyenv 3.12.1)"
fi
[ -x "$PY313" ] || [ -x "$PY312" ] || { echo "SKIP: no CPython 3.12/3.13"; exit 77; }
exit $fail
