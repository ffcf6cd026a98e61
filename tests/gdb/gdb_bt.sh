#!/bin/sh
# SPDX-License-Identifier: MIT
# gdb and the GDB JIT interface, checked by gdb itself.
#
# 1. gdb -batch breaks in the target of a trampoline: `bt` must show
#    gdb_target <- py::chosen (the trampoline's name, from the GDB JIT
#    interface) <- gdb_caller <- main.  Run with 0 and 1,000 other live
#    trampolines, and after releasing them (chunks rebuilt).  The name can
#    only come from the JIT symbol file: without it gdb prints `??`.
# 2. stepi through a trampoline: at every instruction `bt` is complete.
# 3. Garbage in %rbp (x86-64, tests/perf/hidden_rbp.S): py::chosen is entered
#    from pt_hidden_loop, which keeps garbage in %rbp, through py::outer:
#      gdb_target <- py::chosen <- pt_hidden_loop <- py::outer
#                 <- gdb_hidden_caller <- hidden_main <- main
#    (a) break in gdb_target: bt complete, and gdb's own log (`set debug
#        frame`, then selecting each frame) says it unwound every
#        trampoline frame with its "dwarf2" unwinder, i.e. from the
#        .eh_frame of perftramp's JIT ELF;
#    (b) stepi through py::chosen: bt complete at every one of its
#        instructions, the entry and the `ret` included;
#    (c) the same images with .eh_frame renamed (the program edits its own
#        registered images, then re-registers them): gdb now picks another
#        unwinder for those frames, so (a) can fail.  gdb's prologue
#        analyser reads `push %rbp; mov %rsp,%rbp` by itself, so bt itself
#        may still be complete there: that is why (a) asks gdb which
#        unwinder it used;
#    (d) the same images with the CFA offset 16 changed to 24: bt must
#        break.  gdb follows the .eh_frame it was given, wrong or right.
# Also checks libperftramp.so has __jit_debug_* in its symbol table.
set -u
: "${PT_BUILDDIR:=.}"
# unreached: failed (gdb_need says not-run itself when gdb is missing)
proof_gdb="failed" proof_hidden="failed"
why_gdb="the test stopped before this part" why_hidden="the test stopped before this part"
proofs() {
    echo "PROOF: output.gdb $proof_gdb $why_gdb"
    echo "PROOF: gdb.hidden-rbp $proof_hidden $why_hidden"
}
# shellcheck source=tests/lib/gdb_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/gdb_lib.sh"
gdb_need output.gdb gdb.hidden-rbp
prog="$PT_BUILDDIR/tests/gdb/gdb_bt_prog"
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }

so="$PT_BUILDDIR/.libs/libperftramp.so"
if [ -f "$so" ] && command -v nm >/dev/null 2>&1; then
    # in the library's symbol table, where gdb looks (local: docs/abi.md)
    for sym in __jit_debug_descriptor __jit_debug_register_code; do
        nm --defined-only "$so" | grep -q " $sym\$" || { echo "FAIL: $so has no symbol $sym"; exit 1; }
    done
fi

fail=0 gdb_fail=0 hidden_fail=0
run() {
    out=$(gdb_batch -ex 'break gdb_target' -ex run -ex bt -ex continue --args "$prog" "$@")
    frames=$(printf '%s\n' "$out" | frame_names)
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
        gdb_fail=1
    fi
    printf '%s\n' "$out" | grep -q 'result 41' || { echo "FAIL: the program did not finish under gdb ($*)"; gdb_fail=1; }
}

run 0
run 1000
run 1000 release

# The instructions of one trampoline, from the table (perftramp arch).
n_insns=$("$PT_BUILDDIR/tools/perftramp" arch "${PT_HOST_ARCH:-x86_64}" 2>/dev/null |
    awk '/^Rules at every instruction offset/ { on = 1; next } on && /^  0x/ { n++ } on && /^  \(/ { on = 0 }
         END { print n + 0 }')
[ "$n_insns" -gt 0 ] || { echo "FAIL: perftramp arch lists no instructions"; n_insns=5; fail=1; }

# stepi_check BREAK NAME CALLERS PROG-ARGS...: stepi from BREAK; at every
# stop inside trampoline NAME, frames 1.. must be CALLERS (space separated).
# Prints "distinct-pcs bad first-bad-frame".
stepi_check() {
    brk=$1 name=$2 callers=$3
    shift 3
    steps=""
    i=0
    while [ $i -lt 80 ]; do steps="$steps -ex stepi -ex bt"; i=$((i + 1)); done
    # shellcheck disable=SC2086
    gdb_batch -ex "break $brk" -ex run $steps --args "$prog" "$@" | awk -v name="$name" -v callers="$callers" '
        function check(   i) {
            for (i = 1; i <= nc; i++)
                if (line[i] !~ (" in " want[i] " \\(")) { bad++; if (badpc == "") badpc = line[0] " / " line[i]; return }
        }
        BEGIN { nc = split(callers, want, " ") }
        /^#0 / { if (inside) check(); inside = 0; n = 0 }
        /^#[0-9]/ { line[n++] = $0 }
        /^#0 / && index($0, " in " name " (") { inside = 1; pc[$2] = 1 }
        END { if (inside) check(); k = 0; for (p in pc) k++; printf "%d %d %s\n", k, bad + 0, badpc }'
}

# stepi through the trampoline: at every instruction gdb's bt (through the
# chunk's .eh_frame) must show py::chosen <- gdb_caller <- main
# shellcheck disable=SC2046 # split the three fields
set -- $(stepi_check gdb_caller py::chosen "gdb_caller main" 100)
if [ "${1:-0}" -ge "$n_insns" ] && [ "${2:-1}" -eq 0 ]; then
    echo "ok: stepi: bt complete at $1 distinct instructions of the trampoline (the table has $n_insns)"
else
    echo "FAIL: stepi: $1 of $n_insns instructions of the trampoline visited, $2 incomplete bt (first: ${3:-})"
    gdb_fail=1
fi

# ---- 3. garbage in %rbp -------------------------------------------------
hidden_want="0 gdb_target
1 py::chosen
2 pt_hidden_loop
3 py::outer
4 gdb_hidden_caller
5 hidden_main
6 main"
# hidden_bt [EDIT]: break in gdb_target, bt, then select frames 1..6 with
# gdb's frame log on.  Sets hb_frames (names), hb_unwinders
# ("py::chosen=dwarf2 py::outer=dwarf2"), hb_out (everything).
hidden_bt() {
    hb_out=$(gdb_batch -ex 'break gdb_target' -ex run -ex bt -ex 'set debug frame on' \
        -ex 'frame 1' -ex 'frame 2' -ex 'frame 3' -ex 'frame 4' -ex 'frame 5' -ex 'frame 6' \
        -ex 'set debug frame off' -ex continue --args "$prog" hidden "$@")
    # the bt only: it ends where the frame numbers stop increasing
    hb_frames=$(printf '%s\n' "$hb_out" | frame_names | awk 'NR > 1 && $1 + 0 <= prev { exit } { print; prev = $1 + 0 }')
    # gdb 13 logs each frame it hands out as {level=N,type=...,unwinder="NAME",...}
    # (once bt has computed them all, selecting a frame logs every level up
    # to it with its unwinder); bt's "#N ... in py::NAME (" gives the levels
    hb_unwinders=$(printf '%s\n' "$hb_out" | awk '
        match($0, /level=[0-9]+,type=[A-Z_]+,unwinder="[^"]*"/) {
            s = substr($0, RSTART, RLENGTH)
            l = s; sub(/^level=/, "", l); sub(/,.*/, "", l)
            u = s; sub(/.*unwinder="/, "", u); sub(/"$/, "", u)
            unw[l + 0] = u
        }
        /^#[0-9]+ +0x[0-9a-f]+ in py::[^ ]* \(/ {
            l = substr($1, 2) + 0
            if (!(l in seen)) { seen[l] = 1; names[l] = $4; if (l > max) max = l }
        }
        END { sep = ""
              for (l = 0; l <= max; l++) if (l in seen) {
                  u = "?"; if (l in unw) u = unw[l]
                  printf "%s%s=%s", sep, names[l], u; sep = " " } }')
}

if "$prog" hidden >/dev/null 2>&1; then hidden_rc=0; else hidden_rc=$?; fi
if [ "$hidden_rc" -eq 77 ]; then
    why_hidden="tests/perf/hidden_rbp.S is written for x86-64 only (host: ${PT_HOST_ARCH:-?})"
    echo "skip: garbage-rbp checks: $why_hidden"
elif [ "$hidden_rc" -ne 0 ]; then
    echo "FAIL: $prog hidden exits $hidden_rc outside gdb"
    hidden_fail=1
else
    # (a)
    hidden_bt
    if [ "$hb_frames" = "$hidden_want" ]; then
        echo "ok: garbage rbp: bt $(printf '%s' "$hb_frames" | tr '\n' ' ')"
    else
        echo "FAIL: garbage rbp: bt expected"
        printf '%s\n' "$hidden_want"
        echo "got:"
        printf '%s\n' "$hb_out" | grep -E '^#' | head -n 12
        hidden_fail=1
    fi
    if [ "$hb_unwinders" = "py::chosen=dwarf2 py::outer=dwarf2" ]; then
        echo "ok: garbage rbp: gdb unwound the trampoline frames from their .eh_frame ($hb_unwinders)"
    else
        echo "FAIL: garbage rbp: trampoline frames not unwound by gdb's dwarf2 unwinder: '$hb_unwinders'"
        hidden_fail=1
    fi
    # (b)
    # shellcheck disable=SC2046
    set -- $(stepi_check pt_hidden_loop py::chosen "pt_hidden_loop py::outer gdb_hidden_caller hidden_main main" hidden)
    if [ "${1:-0}" -ge "$n_insns" ] && [ "${2:-1}" -eq 0 ]; then
        echo "ok: garbage rbp: stepi: bt complete at $1 distinct instructions of py::chosen (the table has $n_insns)"
        hidden_steps=$1
    else
        echo "FAIL: garbage rbp: stepi: $1 of $n_insns instructions of py::chosen visited, $2 incomplete bt (first: ${3:-})"
        hidden_fail=1
    fi
    # (c) .eh_frame renamed in the registered images
    hidden_bt strip
    if ! printf '%s\n' "$hb_out" | grep -q 'edited [1-9][0-9]* place'; then
        echo "FAIL: gdb_bt_prog hidden strip edited nothing"
        hidden_fail=1
    elif [ "$hb_unwinders" = "py::chosen=dwarf2 py::outer=dwarf2" ] || [ -z "$hb_unwinders" ]; then
        echo "FAIL: without .eh_frame gdb still reports its dwarf2 unwinder ('$hb_unwinders'): the check in (a) cannot fail"
        hidden_fail=1
    else
        if [ "$hb_frames" = "$hidden_want" ]; then strip_bt="still complete (gdb's prologue analyser)"; else strip_bt="broken"; fi
        echo "ok: .eh_frame stripped: gdb falls back to other unwinders ($hb_unwinders); bt $strip_bt"
    fi
    # (d) CFA offset 16 -> 24 in the registered images
    hidden_bt cfa24
    if ! printf '%s\n' "$hb_out" | grep -q 'edited [1-9][0-9]* place'; then
        echo "FAIL: gdb_bt_prog hidden cfa24 edited nothing"
        hidden_fail=1
    elif [ "$hb_frames" = "$hidden_want" ]; then
        echo "FAIL: with CFA offset 24 in the JIT ELF's .eh_frame, bt is still complete: gdb did not use it"
        hidden_fail=1
    else
        echo "ok: CFA offset 24 in .eh_frame: bt breaks ($(printf '%s' "$hb_frames" | tr '\n' ' '))"
    fi
    if [ $hidden_fail -eq 0 ]; then
        proof_hidden=proven
        why_hidden="bt complete through py::chosen/py::outer around garbage-rbp pt_hidden_loop, both frames by gdb's dwarf2 unwinder; stepi complete at ${hidden_steps:-?} of $n_insns instructions; .eh_frame stripped -> other unwinders; CFA 24 -> bt broken"
    else
        proof_hidden=failed why_hidden="see gdb_bt.sh.log"
    fi
fi

if [ $gdb_fail -eq 0 ] && [ $hidden_fail -eq 0 ] && [ $fail -eq 0 ]; then
    proof_gdb=proven
    why_gdb="names from the JIT symbol files, bt complete with 0/1000/released others, stepi complete through the trampoline"
    [ "$proof_hidden" = proven ] && why_gdb="$why_gdb; gdb reads the JIT .eh_frame (gdb.hidden-rbp)"
else
    proof_gdb=failed why_gdb="see gdb_bt.sh.log"
fi
proofs
[ $gdb_fail -eq 0 ] && [ $hidden_fail -eq 0 ] && [ $fail -eq 0 ] || exit 1
echo "PASS: gdb bt through trampolines"
