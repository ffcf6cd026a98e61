#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp beside another JIT that has its own GDB JIT descriptor
# (tests/gdb/gdb_foreign_jit_prog.c): in-process, neither list holds the
# other's entries; under gdb, a breakpoint in the foreign function called
# through a trampoline shows both JITs' names in one backtrace:
#   foreign_jit_answer <- pt_calls_foreign <- main
# Then the same host linked with libperftramp.a: it links, the lists stay
# apart, gdb shows the host's JIT only (docs/unwinding.md, "Static
# linking with another JIT").
: "${PT_SRCDIR:=.}" "${PT_BUILDDIR:=.}"
prog=$PT_BUILDDIR/tests/gdb/gdb_foreign_jit_prog
so=$PT_BUILDDIR/.libs/libperftramp.so
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
[ -f "$so" ] || { echo "SKIP: $so not built"; exit 77; }
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm is not installed"; exit 77; }
# gdb reads perftramp's descriptor from the library's symbol table, as a
# local symbol: exported, gdb would read the host's instead
offset=$(nm "$so" | awk '$3 == "__jit_debug_descriptor" && $2 == "d" {print $1}')
[ -n "$offset" ] || { echo "FAIL: no local __jit_debug_descriptor in $so"; nm "$so" | grep jit_debug; exit 1; }
if nm -D "$so" | grep -q jit_debug; then
    echo "FAIL: $so exports the GDB JIT symbols"; exit 1
fi
PT_JIT_DESCRIPTOR_OFFSET=$offset
export PT_JIT_DESCRIPTOR_OFFSET
out=$("$prog" 2>&1)
rc=$?
echo "$out"
if [ $rc -eq 77 ]; then
    echo "PROOF: gdb.foreign-jit not-run not an x86-64 host"
    exit 77
fi
if [ $rc -ne 0 ]; then
    echo "PROOF: gdb.foreign-jit failed in-process: $(echo "$out" | grep FAIL | head -1)"
    exit 1
fi
# shellcheck source=tests/lib/gdb_lib.sh
. "$PT_SRCDIR/tests/lib/gdb_lib.sh"
gdb_need gdb.foreign-jit
out=$(gdb_batch -ex 'set breakpoint pending on' -ex 'break foreign_jit_answer' -ex run -ex bt -ex continue \
    --args "$prog")
frames=$(printf '%s\n' "$out" | frame_names)
want="0 foreign_jit_answer
1 pt_calls_foreign
2 main"
if [ "$frames" != "$want" ] || ! printf '%s\n' "$out" | grep -q '^ok: host list'; then
    echo "FAIL: gdb bt: expected"
    printf '%s\n' "$want"
    echo "got:"
    printf '%s\n' "$out" | grep -E '^#|warning|error|FAIL|^ok' | head -n 20
    echo "PROOF: gdb.foreign-jit failed gdb bt does not show both JITs"
    exit 1
fi
echo "ok: gdb bt: $(printf '%s' "$frames" | tr '\n' ' ')"
n=$(echo "$out" | sed -n 's/.*perftramp list \([0-9]*\) entries.*/\1/p' | head -1)

# What docs/unwinding.md says of a static link beside another JIT: it
# links (perftramp's pair is local in libperftramp.a), the lists stay
# apart, and gdb reads the host's global descriptor only.
ar=$PT_BUILDDIR/.libs/libperftramp.a
static_note="static link not tried (no libperftramp.a)"
if [ -f "$ar" ]; then
    work=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-fjit.XXXXXX") || exit 1
    trap 'rm -rf "$work"' EXIT
    # shellcheck disable=SC2046,SC2086 # flag lists split on purpose
    if ! ${PT_CC:-cc} $PT_CFLAGS -g -O1 -fno-omit-frame-pointer -I"$PT_SRCDIR/include" -I"$PT_SRCDIR/src" \
            -I"$PT_BUILDDIR" -o "$work/static" "$PT_SRCDIR/tests/gdb/gdb_foreign_jit_prog.c" \
            "$PT_SRCDIR/src/emit/elf_image.c" "$PT_SRCDIR/src/emit/bytebuf.c" "$ar" \
            $(pkg-config --libs libffi 2>/dev/null || echo -lffi) -pthread -ldl -rdynamic $PT_LDFLAGS \
            2>"$work/cc.err"; then
        echo "FAIL: a host with its own GDB JIT symbols does not link libperftramp.a:"; head -5 "$work/cc.err"
        echo "PROOF: gdb.foreign-jit failed static link"
        exit 1
    fi
    soff=$(nm "$work/static" | awk '$3 == "__jit_debug_descriptor" && $2 == "d" {print $1}')
    sout=$(PT_JIT_DESCRIPTOR_OFFSET=$soff gdb_batch -ex 'set breakpoint pending on' -ex 'break foreign_jit_answer' \
        -ex run -ex bt -ex continue --args "$work/static")
    sframes=$(printf '%s\n' "$sout" | frame_names | head -2)
    if printf '%s\n' "$sout" | grep -q '^ok: host list' && [ "$sframes" = "0 foreign_jit_answer
1 ??" ]; then
        static_note="static link: links, lists apart, gdb shows the host's JIT only (docs/unwinding.md)"
        echo "ok: $static_note"
    else
        echo "FAIL: static link beside another JIT is not as docs/unwinding.md says:"
        printf '%s\n' "$sout" | grep -E '^#|FAIL|^ok' | head
        echo "PROOF: gdb.foreign-jit failed static link"
        exit 1
    fi
fi
echo "PROOF: gdb.foreign-jit proven 5 trampolines in $n perftramp list entry(ies), 1 host entry, lists apart; gdb bt: foreign_jit_answer < pt_calls_foreign < main; $static_note"
exit 0
