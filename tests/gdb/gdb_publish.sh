#!/bin/sh
# SPDX-License-Identifier: MIT
# gdb and perftramp_publish: published code reaches gdb through the GDB JIT
# interface, in batched entries (tests/gdb/gdb_publish_prog.c publishes 150
# filler regions first, withdraws 5, then the frameless function).
# gdb -batch breaks in gdb_pub_target, called by the frameless function:
#   live, replay (set_outputs after publish), toggle (off and on again):
#     bt must be  gdb_pub_target <- jit::frameless <- main
#   unpub: the name must be gone (the entry was removed)
#   norows: published without rows, bt must not reach main through
#     jit::frameless (gdb unwinds it with the rows we gave it)
set -u
: "${PT_BUILDDIR:=.}"
proof="failed" why="the test stopped before this part" # unreached: failed
proofs() { echo "PROOF: publish.gdb $proof $why"; }
# shellcheck source=tests/lib/gdb_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/gdb_lib.sh"
gdb_need publish.gdb
prog="$PT_BUILDDIR/tests/gdb/gdb_publish_prog"
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
if "$prog" live >/dev/null 2>&1; then rc=0; else rc=$?; fi
if [ "$rc" -eq 77 ]; then
    proof=not-run why="the frameless function is x86-64's (host: ${PT_HOST_ARCH:-?}); tests/arch runs the others"
    proofs; echo "SKIP: $why"; exit 77
fi
[ "$rc" -eq 0 ] || { echo "FAIL: $prog live exits $rc outside gdb"; exit 1; }

frames() { # mode -> "N name" per frame of bt
    gdb_batch -ex 'break gdb_pub_target' -ex run -ex bt -ex continue --args "$prog" "$1" | frame_names | tr '\n' ' '
}
want="0 gdb_pub_target 1 jit::frameless 2 main "
fail=0
for mode in live replay toggle; do
    got=$(frames $mode)
    if [ "$got" = "$want" ]; then echo "ok: $mode: bt $got"
    else echo "FAIL: $mode: bt '$got', expected '$want'"; fail=1; fi
done
got=$(frames unpub)
case "$got" in
*jit::frameless*) echo "FAIL: unpub: gdb still names the withdrawn region: $got"; fail=1 ;;
"0 gdb_pub_target "*) echo "ok: unpub: name gone: $got" ;;
*) echo "FAIL: unpub: no bt at all: '$got'"; fail=1 ;;
esac
got=$(frames norows)
if [ "$got" = "$want" ]; then echo "FAIL: norows: bt complete without rows: the check cannot fail"; fail=1
else echo "ok: norows: bt breaks without the rows: $got"; fi
if [ $fail -eq 0 ]; then
    proof=proven why="gdb bt gdb_pub_target <- jit::frameless <- main (published live, replayed, toggled; 150 fillers in batches); gone after unpublish; broken without rows"
else
    proof=failed why="see gdb_publish.sh.log"
fi
proofs
exit $fail
