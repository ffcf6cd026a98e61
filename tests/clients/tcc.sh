#!/bin/bash
# SPDX-License-Identifier: MIT
# examples/tcc: a libtcc JIT whose functions (tcc_leaf <- tcc_mid <-
# tcc_outer, each compiled and published on its own) are understood by
# the real consumers:
#  (a) _Unwind_Backtrace from a C callback called by tcc_leaf passes the
#      three tcc frames in order and reaches main (PERFTRAMP_UNWIND);
#      without outputs it must not (the check can fail).
#  (b) a C++ exception thrown by that callback propagates through the tcc
#      frames to main's catch (tests/clients/tcc_throw); without outputs:
#      std::terminate.
#  (c) gdb -batch: break tcc_probe, bt names tcc_leaf, tcc_mid, tcc_outer
#      then run and main (PERFTRAMP_GDB); without: no tcc names.
#  (d) perf record -k 1 --call-graph dwarf + perf inject --jit (jitdump):
#      >= 90% of the samples in tcc_leaf show
#      tcc_leaf tcc_mid tcc_outer run main, the tcc frames from the
#      jitted .so files.  Then the same run with the three functions in
#      one tcc image, back to back (TCC_JIT_PACKED=1): the share is printed
#      (the trap tcc_jit.c avoids: perf maps each LOAD over
#      [addr, ALIGN8(size)+mapped_size)).
#  (e) perf record --call-graph fp with the perf map: the same >= 90%.
# Proof ids: tcc.backtrace tcc.cxx-exception tcc.gdb tcc.perf-dwarf tcc.perf-fp.
set -u
B=${PT_BUILDDIR:-.}
EX=$B/examples/tcc/tcc_example
THROW=$B/tests/clients/tcc_throw
SECONDS_OF_WORK=${PT_PERF_SECONDS:-1}
MIN_HOT=100

PROOF_IDS="tcc.backtrace tcc.cxx-exception tcc.gdb tcc.perf-dwarf tcc.perf-fp"
# shellcheck source=tests/lib/proof_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/perf_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/perf_lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-tcc-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
maps=()
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    rm -rf "$tmp"
    for m in "${maps[@]}"; do rm -f "$m"; done
}
trap cleanup EXIT
export HOME=$tmp/home
mkdir "$HOME"
unset PERFTRAMP

if [ ! -x "$EX" ] || [ ! -x "$THROW" ]; then
    skip "examples/tcc not built: libtcc is not installed (Debian: libtcc-dev, tools/deps/tcc.txt), re-run configure"
fi
case ${PT_HOST_ARCH:-$(uname -m)} in
x86_64) ;;
*) skip "examples/tcc derives its rows from tcc's x86-64 prologue; host is ${PT_HOST_ARCH:-$(uname -m)}" ;;
esac
# LeakSanitizer cannot run under ptrace (gdb) or perf's children
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

# ---- (a) _Unwind_Backtrace ------------------------------------------------
out=$("$EX" unwind backtrace 2>&1); rc=$?
echo "(a) with PERFTRAMP_UNWIND: $(printf '%s\n' "$out" | grep '^backtrace:')"
ctl=$("$EX" none backtrace 2>&1); crc=$?
echo "(a) without outputs:       $(printf '%s\n' "$ctl" | grep '^backtrace:')"
if [ $rc -ne 0 ]; then bad "(a) _Unwind_Backtrace did not pass the tcc frames to main"; printf '%s\n' "$out"
elif [ $crc -eq 0 ]; then bad "(a) main reached without the published FDEs: the check cannot fail"
else prove tcc.backtrace proven "$(printf '%s\n' "$out" | sed -n 's/^backtrace: //p'); without outputs not"; fi

# ---- (b) C++ exception ----------------------------------------------------
out=$("$THROW" unwind 2>&1); rc=$?
ctl=$("$THROW" none 2>&1); crc=$?
echo "(b) with PERFTRAMP_UNWIND: exit $rc: $out"
echo "(b) without outputs:       exit $crc: $(printf '%s\n' "$ctl" | head -n 1)"
if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^caught in main'; then bad "(b) exception not caught in main"
elif [ $crc -eq 0 ]; then bad "(b) caught without the published FDEs: the check cannot fail"
else prove tcc.cxx-exception proven "std::runtime_error from a callback caught in main through tcc_leaf/tcc_mid/tcc_outer; without outputs std::terminate (exit $crc)"; fi

# ---- (c) gdb ----------------------------------------------------------------
if command -v gdb >/dev/null 2>&1; then
    gdb_frames() {
        gdb -nx -batch -ex 'set debuginfod enabled off' -ex 'set pagination off' -ex 'break tcc_probe' -ex run \
            -ex bt -ex continue --args "$EX" "$1" probe 2>&1 |
            sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) (.*/\1 \2/p; s/^#\([0-9]*\)  *\([^ ]*\) (.*/\1 \2/p' | tr '\n' ' '
    }
    want="0 tcc_probe 1 tcc_leaf 2 tcc_mid 3 tcc_outer 4 run 5 main "
    got=$(gdb_frames gdb)
    ctl=$(gdb_frames none)
    echo "(c) gdb bt with PERFTRAMP_GDB: $got"
    echo "(c) gdb bt without outputs:    $(printf '%s' "$ctl" | cut -c1-60)..."
    if [ "$got" != "$want" ]; then bad "(c) expected '$want'"
    elif printf '%s' "$ctl" | grep -q tcc_leaf; then bad "(c) gdb names tcc_leaf without the GDB output: the check cannot fail"
    else prove tcc.gdb proven "gdb -batch bt: $got"; fi
else
    prove tcc.gdb not-run "gdb is not installed"
fi

# ---- perf ---------------------------------------------------------------------
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
if ! perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1; then
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"
fi
CHAIN="tcc_leaf tcc_mid tcc_outer run main"

# record NAME OUTPUTS CALLGRAPH [perf args]: sets pid
record() {
    local name=$1 outs=$2 cg=$3
    shift 3
    mkdir -p "$tmp/$name.jit"
    JITDUMPDIR=$tmp/$name.jit perf record -q "$@" -e cpu-clock -F 1000 --call-graph "$cg" -o "$tmp/$name.data" \
        -- "$EX" "$outs" spin "$SECONDS_OF_WORK" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        { cat "$tmp/$name.err"; bad "($name) perf record"; return 1; }
    pid=$(awk '/^pid /{print $2}' "$tmp/$name.out")
    [ -n "$pid" ] || { bad "($name) no pid"; return 1; }
}
dwarf_run() { # NAME -> sets hot ok
    local name=$1
    record "$name" jitdump dwarf -k 1 || return 1
    # a HOME (build-id cache) per run: perf must not reuse another run's
    # jitted .so files, whose code and so build-id may be the same
    local home=$tmp/home.$name
    mkdir -p "$home"
    HOME=$home perf inject --jit -i "$tmp/$name.data" -o "$tmp/$name.jit.data" 2>"$tmp/$name.inject.err" ||
        { cat "$tmp/$name.inject.err"; bad "($name) perf inject --jit"; return 1; }
    HOME=$home perf script -i "$tmp/$name.jit.data" -F comm,ip,sym,symoff,dso >"$tmp/$name.script" 2>/dev/null ||
        { bad "($name) perf script"; return 1; }
    read -r hot ok _ < <(CHAIN_CHECKED="^tcc_" chain_stats "" "$CHAIN" "jitted-$pid-[0-9]+\\.so" "" <"$tmp/$name.script")
}

# ---- (d) jitdump + dwarf ------------------------------------------------------
if dwarf_run d; then
    sed -n 's/^fn /(d) published: /p' "$tmp/d.out"
    echo "(d) jitdump, perf record -k 1 --call-graph dwarf + inject --jit: complete chains in tcc_leaf $(pct "$ok" "$hot")"
    if [ "$hot" -lt $MIN_HOT ]; then bad "(d) only $hot samples in tcc_leaf (need $MIN_HOT)"
    elif ! at_least_90 "$ok" "$hot"; then bad "(d) fewer than 90% complete"
    else
        prove tcc.perf-dwarf proven "tcc_leaf <- tcc_mid <- tcc_outer <- run <- main in $(pct "$ok" "$hot") of tcc_leaf samples (jitted .so names)"
        # the trap: packed images (no gap after each)
        if TCC_JIT_PACKED=1 dwarf_run d0; then
            sed -n 's/^fn /(d) packed: /p' "$tmp/d0.out"
            echo "(d) the same with TCC_JIT_PACKED=1 (one tcc image, functions back to back): $(pct "$ok" "$hot") complete"
            why[tcc.perf-dwarf]="${why[tcc.perf-dwarf]}; packed without gaps: $(pct "$ok" "$hot")"
        fi
    fi
fi

# ---- (e) perf map + frame pointers --------------------------------------------
if record e perfmap fp; then
    maps+=("/tmp/perf-$pid.map")
    perf script -i "$tmp/e.data" -F comm,ip,sym,symoff,dso >"$tmp/e.script" 2>/dev/null || bad "(e) perf script"
    read -r hot ok _ < <(CHAIN_CHECKED="^tcc_" chain_stats "" "$CHAIN" "perf-$pid\\.map" "" <"$tmp/e.script")
    echo "(e) perf map, perf record --call-graph fp: complete chains in tcc_leaf $(pct "$ok" "$hot")"
    if [ "$hot" -lt $MIN_HOT ]; then bad "(e) only $hot samples in tcc_leaf (need $MIN_HOT)"
    elif ! at_least_90 "$ok" "$hot"; then bad "(e) fewer than 90% complete"
    else prove tcc.perf-fp proven "tcc_leaf <- tcc_mid <- tcc_outer <- run <- main in $(pct "$ok" "$hot") of tcc_leaf samples (perf map names)"; fi
fi

for id in $PROOF_IDS; do [ -n "${proof[$id]:-}" ] || prove "$id" failed "see tcc.sh.log"; done
[ $failed -eq 0 ] || exit 1
echo "PASS: examples/tcc"
