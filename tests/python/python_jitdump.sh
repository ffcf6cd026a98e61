#!/bin/sh
# SPDX-License-Identifier: MIT
# The jit-<pid>.dump perftramp's CPython module writes, on every supported
# CPython found here, read record by record by tests/python/python_jitdump.py (a
# reader written apart from perftramp's own) and by `perftramp check`: an
# UNWINDING_INFO before each LOAD, a 20-byte .eh_frame_hdr, CIE "zR", FDE
# pointers pcrel|sdata4, initial_location at the code's first byte and
# address_range inside the code; a LOAD per Python function, named
# py::<qualname>:<file>; a forked child's own dump with its own functions.
# On 3.13 the same reader also reads CPython's own -X perf_jit dump of the
# same script: the checks are not tuned to one producer.
# PROOF: python.<ver>.jitdump per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"
reader=${PT_SRCDIR:-.}/tests/python/python_jitdump.py
checker=${PT_BUILDDIR:-.}/tools/perftramp

jitdump() {
    cat > script.py << 'PY'
import os, sys

def foo():
    return sum(range(100))

def bar():
    return foo()

def baz():
    return bar()

def foo_fork():
    return 1

def bar_fork():
    return foo_fork()

def baz_fork():
    return bar_fork()

baz()
if len(sys.argv) > 1:
    pid = os.fork()
    if pid == 0:
        baz_fork()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    print(pid)
    sys.exit(status)
PY
    F=$PWD/script.py
    mkdir dumps
    run_python -m perftramp --outputs jitdump --jitdump-dir dumps script.py fork > child 2> err ||
        fail "python -m perftramp --outputs jitdump script.py: $(tail -n 1 err)"
    [ ! -s err ] || fail "stderr: $(head -n 1 err)"
    child=$(cat child)
    parent=$(ls dumps | sed -n 's/^jit-\([0-9]*\)\.dump$/\1/p' | grep -vx "$child" | head -n 1)
    [ -f "dumps/jit-$parent.dump" ] || fail "no jit-<pid>.dump for the parent in $(ls dumps | tr '\n' ' ')"
    [ -f "dumps/jit-$child.dump" ] || fail "no jit-$child.dump for the forked child"
    own="py::foo:$F,py::bar:$F,py::baz:$F,py::<module>:$F"
    "$PYTHON" "$reader" "dumps/jit-$parent.dump" --strict --closed --pid "$parent" --names "$own" > parent.txt
    st=$?
    cat parent.txt
    [ $st -eq 0 ] || fail "the parent's dump: $(sed -n 's/^FAIL: //p' parent.txt | head -n 1)"
    "$PYTHON" "$reader" "dumps/jit-$child.dump" --strict --pid "$child" \
        --names "py::foo_fork:$F,py::bar_fork:$F,py::baz_fork:$F,py::foo:$F" > child.txt
    st=$?
    cat child.txt
    [ $st -eq 0 ] || fail "the child's dump: $(sed -n 's/^FAIL: //p' child.txt | head -n 1)"
    if grep -aq "py::foo_fork:" "dumps/jit-$parent.dump"; then
        fail "the parent's dump names the child's py::foo_fork"
    fi
    loads=$(sed -n 's/.*; \([0-9]*\) LOADs,.*/\1/p' parent.txt)
    if [ -x "$checker" ]; then
        "$checker" check "dumps/jit-$parent.dump" "dumps/jit-$child.dump" > check.txt 2>&1 ||
            { cat check.txt; fail "perftramp check: $(head -n 1 check.txt)"; }
        head -n 2 check.txt
        also="; perftramp check agrees"
    else
        also="; perftramp check not built"
    fi
    # CPython 3.13's own jitdump, read by the same reader (it writes
    # /tmp/jit-<pid>.dump whatever the directory; forget_pid removes it)
    if "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 13))'; then
        "$PYTHON" -X perf_jit script.py &
        bpid=$!
        forget_pid "$bpid"
        wait $bpid || fail "python -X perf_jit script.py"
        "$PYTHON" "$reader" "/tmp/jit-$bpid.dump" --pid "$bpid" --names "$own" > builtin.txt
        st=$?
        cat builtin.txt
        [ $st -eq 0 ] || fail "CPython's own -X perf_jit dump fails the same reader: $(sed -n 's/^FAIL: //p' builtin.txt | head -n 1)"
        "$PYTHON" "$reader" "/tmp/jit-$bpid.dump" --strict > builtin-strict.txt
        echo "CPython's -X perf_jit dump, where it differs from perftramp's (not failures):"
        sed -n 's/^FAIL: /  /p' builtin-strict.txt | sed 's/py::[^ ]*/.../g' | sort | uniq -c | sort -rn | head -n 5
        also="$also; CPython's -X perf_jit dump passes the same reader"
    fi
    proven "$loads LOADs, each after an UNWINDING_INFO (CIE zR, FDE pcrel|sdata4, hdr 20 B, initial_location at the code, address_range inside it); the forked child's own dump$also"
}
each_python jitdump jitdump
python_exit
