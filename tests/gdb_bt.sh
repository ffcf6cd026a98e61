#!/bin/sh
# SPDX-License-Identifier: MIT
# gdb -batch breaks in the target of a trampoline: `bt` must show
# gdb_target <- py::chosen (the trampoline's name, from the GDB JIT
# interface) <- gdb_caller <- main.  Run with 0 and 1,000 other live
# trampolines, and after releasing them (chunks rebuilt).  The name can
# only come from the JIT symbol file: without it gdb prints `??` and the
# frame comparison fails.  Also checks libperftramp.so has __jit_debug_*.
set -u
: "${PT_BUILDDIR:=.}"
command -v gdb >/dev/null 2>&1 || { echo "SKIP: gdb is not installed"; exit 77; }
prog="$PT_BUILDDIR/tests/gdb_bt_prog"
libtool="$PT_BUILDDIR/libtool"
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }

so="$PT_BUILDDIR/.libs/libperftramp.so"
if [ -f "$so" ] && command -v nm >/dev/null 2>&1; then
    # in the library's symbol table, where gdb looks (local: docs/abi.md)
    for sym in __jit_debug_descriptor __jit_debug_register_code; do
        nm --defined-only "$so" | grep -q " $sym\$" || { echo "FAIL: $so has no symbol $sym"; exit 1; }
    done
fi

# LeakSanitizer cannot run under ptrace (sanitizer builds)
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

fail=0
run() {
    out=$("$libtool" --mode=execute gdb -nx -batch \
        -ex 'set debuginfod enabled off' -ex 'set pagination off' \
        -ex 'break gdb_target' -ex run -ex bt -ex continue \
        --args "$prog" "$@" 2>&1)
    # keep the frame lines, names only
    frames=$(printf '%s\n' "$out" | sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) (.*/\1 \2/p; s/^#\([0-9]*\)  *\([^ ]*\) (.*/\1 \2/p')
    want="0 gdb_target
1 py::chosen
2 gdb_caller
3 main"
    if [ "$frames" = "$want" ]; then
        echo "ok: bt with $* : $(printf '%s' "$frames" | tr '\n' ' ')"
    else
        echo "FAIL: bt with $*: expected"
        printf '%s\n' "$want"
        echo "got:"
        printf '%s\n' "$out" | grep -E '^#|warning|error' | head -n 20
        fail=1
    fi
    printf '%s\n' "$out" | grep -q 'result 41' || { echo "FAIL: the program did not finish under gdb ($*)"; fail=1; }
}

run 0
run 1000
run 1000 release

# stepi through the trampoline: at every instruction gdb's bt (through the
# chunk's .eh_frame) must show py::chosen <- gdb_caller <- main
steps=""
i=0
while [ $i -lt 60 ]; do steps="$steps -ex stepi -ex bt"; i=$((i + 1)); done
# shellcheck disable=SC2086
out=$("$libtool" --mode=execute gdb -nx -batch -ex 'set debuginfod enabled off' -ex 'set pagination off' \
    -ex 'break gdb_caller' -ex run $steps --args "$prog" 100 2>&1)
verdict=$(printf '%s\n' "$out" | awk '
    /^#0 / { if (inside) check(); inside = 0; n = 0 }
    /^#[0-9]/ { line[n++] = $0 }
    /^#0 .* in py::chosen \(/ { inside = 1; pc[$2] = 1 }
    function check() {
        if (line[1] !~ / in gdb_caller \(/ || line[2] !~ / in main \(/) { bad++; badpc = line[0] }
    }
    END { if (inside) check(); k = 0; for (p in pc) k++; printf "%d %d %s\n", k, bad + 0, badpc }')
# shellcheck disable=SC2086 # split the three fields
set -- $verdict
if [ "${1:-0}" -ge 5 ] && [ "${2:-1}" -eq 0 ]; then
    echo "ok: stepi: bt complete at $1 distinct instructions of the trampoline"
else
    echo "FAIL: stepi: $1 instructions inside the trampoline, $2 incomplete bt (first: ${3:-})"
    fail=1
fi
[ "$fail" = 0 ] || exit 1
echo "PASS: gdb bt through trampolines"
