#!/bin/sh
# SPDX-License-Identifier: MIT
# PERFTRAMP_GDB's fast paths, checked by gdb itself (tests/gdb/gdb_bt_prog).
#
# 1. gdb.fresh-trampoline: gdb runs the program, which makes 3,000
#    trampolines under gdb and then py::chosen (the 57th slot of a chunk of
#    64: a chunk that is not full) and calls it at once.  Past the first
#    128 wraps of a burst the library does not stop for gdb at each wrap:
#    it patches the chunk's image and has gdb re-read it at the first call
#    through a new trampoline (docs/unwinding.md, "gdb").  A breakpoint in
#    the target must still show  gdb_target <- py::chosen <- gdb_caller
#    <- main, the program must compute the right result through the stub
#    (its argument survives), and gdb must have read far fewer images
#    than there were wraps (`set debug jit on`: one jit_register_code line
#    per read), else the batching is gone.
# 2. gdb.attach: the same 3,000 + 1 trampolines made with no debugger;
#    then gdb -p attaches while the program waits inside gdb_target: bt
#    must name py::chosen (gdb reads every entry of the list at attach:
#    each must be whole, its symbols written before the count that shows
#    them).
set -u
: "${PT_BUILDDIR:=.}"
# unreached: failed (gdb_need says not-run itself when gdb is missing)
fresh="failed" attach="failed" why_fresh="the test stopped before this part" why_attach="the test stopped before this part"
proofs() {
    echo "PROOF: gdb.fresh-trampoline $fresh $why_fresh"
    echo "PROOF: gdb.attach $attach $why_attach"
}
# shellcheck source=tests/lib/gdb_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/gdb_lib.sh"
gdb_need gdb.fresh-trampoline gdb.attach
prog="$PT_BUILDDIR/tests/gdb/gdb_bt_prog"
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
n=3000
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-gdbfresh-XXXXXX") || exit 1
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT

want="0 gdb_target
1 py::chosen
2 gdb_caller
3 main"
fail=0

# ---- 1. made under gdb, called at once --------------------------------
gdb_batch -ex 'set debug jit on' -ex 'break gdb_target' -ex run -ex 'set debug jit off' -ex bt -ex continue \
    --args "$prog" "$n" >"$tmp/run"
frames=$(frame_names <"$tmp/run" | awk 'NR > 1 && $1 + 0 <= prev { exit } { print; prev = $1 + 0 }')
reads=$(grep -c 'jit_register_code: symfile_addr' "$tmp/run")
if [ "$frames" != "$want" ]; then
    echo "FAIL: fresh: bt after $n others, expected"
    printf '%s\n' "$want"
    echo "got:"
    grep -E '^#|rror' "$tmp/run" | head -n 10
    fail=1 fresh=failed why_fresh="bt did not name py::chosen"
elif ! grep -q 'result 41' "$tmp/run"; then
    echo "FAIL: fresh: the program did not compute 41 through the trampoline under gdb"
    grep -vE '^\[jit\]' "$tmp/run" | tail -n 5
    fail=1 fresh=failed why_fresh="wrong result through the trampoline"
elif [ "$reads" -lt 1 ] || [ "$reads" -gt $((n / 4)) ]; then
    echo "FAIL: fresh: gdb read $reads JIT images for $((n + 1)) wraps (want 1..$((n / 4)): batched)"
    fail=1 fresh=failed why_fresh="$reads images read for $((n + 1)) wraps"
else
    echo "ok: fresh: bt $(printf '%s' "$frames" | tr '\n' ' '); gdb read $reads images for $((n + 1)) wraps"
    fresh=proven why_fresh="bt names py::chosen made after $n others under gdb (chunk not full), result right through the stub, $reads image reads for $((n + 1)) wraps"
fi

# ---- 2. gdb -p after the trampolines exist ----------------------------
"$prog" "$n" wait >"$tmp/out" 2>&1 &
pid=$!
i=0
while [ $i -lt 600 ] && ! grep -q '^ready' "$tmp/out"; do
    sleep 0.1
    i=$((i + 1))
done
if ! grep -q '^ready' "$tmp/out"; then
    echo "FAIL: attach: the program did not get ready: $(head -n 1 "$tmp/out")"
    fail=1 attach=failed why_attach="program not ready"
else
    gdb_batch -p "$pid" -ex bt -ex 'set var gdb_go = 1' -ex detach >"$tmp/attach"
    wait "$pid"
    rc=$?
    pid=
    # frames from gdb_target down (frame 0 may be in usleep)
    got=$(frame_names <"$tmp/attach" | awk '$2 == "gdb_target" { on = 1 } on { print $2 }' | tr '\n' ' ')
    if [ "$got" = "gdb_target py::chosen gdb_caller main " ] && [ $rc -eq 0 ]; then
        echo "ok: attach: bt ... $got(exit $rc)"
        attach=proven why_attach="gdb -p on a process with $((n + 1)) trampolines made before the attach: bt names py::chosen"
    else
        echo "FAIL: attach: bt from gdb_target: '$got' (exit $rc), expected 'gdb_target py::chosen gdb_caller main'"
        grep -E '^#|rror' "$tmp/attach" | head -n 12
        fail=1 attach=failed why_attach="bt after gdb -p did not name py::chosen"
    fi
fi
proofs
[ $fail -eq 0 ] || exit 1
echo "PASS: gdb names fresh trampolines and those made before an attach"
