#!/bin/sh
# SPDX-License-Identifier: MIT
# Unwinding through Python frames, in the process and from gdb, on every
# supported CPython found here.
#  unwind: backtrace(3) -- libgcc's unwinder, the one C++ exceptions and
#     crash handlers use -- called from Python code three calls deep
#     (tests/python/python_backtrace.py).  With `--outputs unwind,perfmap` it
#     walks through py::walk, py::foo, py::bar, py::baz, py::<module> to the
#     interpreter's main; with `--outputs perfmap` alone it stops at the
#     first trampoline (nothing registered: the proof that the
#     registration does it).  CPython 3.12+'s own -X perf is run the same
#     way for the record.
#  gdb: gdb stops in getsid(2) called by py::foo; with `--outputs gdb` its
#     bt names py::foo < py::bar < py::baz < py::<module> (the GDB JIT
#     interface), and with `--outputs unwind` instead names none of them.
# PROOF: python.<ver>.unwind and python.<ver>.gdb per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"

backtrace() { # OUTPUT-FILE PYTHON-ARGS...: runs python_backtrace.py
    out=$1
    shift
    cp "${PT_SRCDIR:-.}/tests/python/python_backtrace.py" bt.py
    run_python "$@" bt.py > "$out" 2>&1 &
    pid=$!
    forget_pid "$pid"
    wait "$pid" || { cat "$out"; fail "python $* bt.py failed"; }
}

unwind() {
    backtrace on.txt -m perftramp --outputs unwind,perfmap
    cat on.txt
    grep -qx 'trampolines: walk foo bar baz <module>' on.txt ||
        fail "backtrace(3) did not walk py::walk, foo, bar, baz, <module>: $(grep trampolines: on.txt)"
    grep -qx 'reaches main: yes' on.txt || fail "backtrace(3) did not reach the interpreter's main"
    backtrace off.txt -m perftramp --outputs perfmap
    echo "without the unwind output: $(tr '\n' ' ' < off.txt)"
    grep -qx 'reaches main: no' off.txt ||
        fail "backtrace(3) reached main without the unwind output: the check cannot tell registration apart"
    if "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 12))'; then
        backtrace builtin.txt -X perf
        echo "CPython's own -X perf: $(tr '\n' ' ' < builtin.txt)"
        grep -qx 'reaches main: yes' builtin.txt && builtin="; CPython's -X perf reaches main too" ||
            builtin="; CPython's own -X perf stops at its first trampoline ($(sed -n 's/^frames: //p' builtin.txt) frames)"
    fi
    proven "backtrace(3) walks py::walk < foo < bar < baz < <module> down to main with --outputs unwind ($(sed -n 's/^frames: //p' on.txt) frames), stops at the first trampoline without it${builtin:-}"
}

gdb_bt() { # OUTPUTS: bt from getsid(2) called in py::foo -> frames.txt
    cat > gbt.py << 'PY'
import os
def foo():
    os.getsid(0)
def bar():
    foo()
def baz():
    bar()
baz()
PY
    # the environment (sanitizer runtimes included) for python, not for gdb itself
    gdb -nx -batch -ex 'set debuginfod enabled off' -ex 'set pagination off' \
        -ex "set exec-wrapper env $python_env ASAN_OPTIONS=detect_leaks=0" \
        -ex 'set breakpoint pending on' -ex 'break getsid' -ex run -ex bt -ex kill \
        --args "$PYTHON" -m perftramp --outputs "$1" gbt.py > gdb.txt 2>&1
    # "#7  0x... in py::foo:/dir/gbt[py] ()": gdb prints the file name's ".py" as "[py]"
    sed -n 's/^#[0-9]* .* in \(py::[^:]*\):.*/\1/p' gdb.txt | tr '\n' ' ' | sed 's/ $//' > frames.txt
}

gdb_test() {
    command -v gdb > /dev/null 2>&1 || not_run "gdb is not installed"
    gdb_bt gdb
    grep -q '^#0 .*getsid' gdb.txt || { cat gdb.txt; fail "gdb did not stop in getsid"; }
    grep -c '^#' gdb.txt > depth
    echo "gdb bt, py:: frames innermost first: $(cat frames.txt)"
    case "$(cat frames.txt) " in
    "py::foo py::bar py::baz py::<module> "*) ;;
    *) grep '^#' gdb.txt | cut -c1-120 | head -n 30; fail "gdb bt: $(cat frames.txt)" ;;
    esac
    gdb_bt unwind # any output but gdb's (unwind writes no file)
    [ ! -s frames.txt ] || fail "gdb named py:: frames without the gdb output: $(cat frames.txt)"
    proven "gdb bt from getsid(2): py::foo < py::bar < py::baz < py::<module> < runpy's frames (GDB JIT interface); none without it"
}
each_python unwind unwind
each_python gdb gdb_test
python_exit
