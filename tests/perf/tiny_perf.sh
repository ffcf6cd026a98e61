#!/bin/bash
# SPDX-License-Identifier: MIT
# examples/tiny with the real perf: source lines and the signal switch.
#  (a) srcline: tiny wraps each function with perftramp_wrap_at(script,
#      line); the jitdump's DEBUG_INFO becomes a line table in perf inject's
#      jitted-*.so, so `perf report --sort sym,srcline` shows
#      tiny::collatz_next at hot.tiny:3 (and readelf/addr2line agree).
#  (b) signal, fp: tiny starts with PERFTRAMP_SIGNAL=USR2 and no output;
#      `kill -USR2` turns on the perf map (trampolines made before are
#      replayed), then `perf record -p --call-graph fp` attaches: >= 90% of
#      the samples in the evaluator show the whole chain down to main.
#  (c) signal, dwarf: `kill -USR2` opens the jitdump (every trampoline
#      replayed into it), then `perf record -k 1 --call-graph dwarf -p`
#      attaches (it finds the dump's mmap marker in /proc/PID/maps) and
#      perf inject --jit reads the dump: >= 90% complete as well.
# PROOF ids: dynamic.srcline, dynamic.signal-perf-fp, dynamic.signal-perf-dwarf.
set -u
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
S=$(cd "${PT_SRCDIR:-.}" && pwd)
TINY=$B/examples/tiny/tiny
HOT=$S/examples/tiny/hot.tiny
RECORD_SECONDS=${PT_PERF_SECONDS:-2}
MIN_SAMPLES=100
PCT_OK=90

PROOF_IDS="dynamic.srcline dynamic.signal-perf-fp dynamic.signal-perf-dwarf"
# shellcheck source=tests/lib/proof_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/perf_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/perf_lib.sh"
# shellcheck source=tests/lib/perf_a2l.sh
. "${PT_SRCDIR:-.}/tests/lib/perf_a2l.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-tiny-perf-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
bg=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    if [ -n "$bg" ]; then
        kill "$bg" 2>/dev/null
        wait "$bg" 2>/dev/null
        rm -f "/tmp/perf-$bg.map"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
export HOME=$tmp/home # perf's build-id cache (~/.debug) stays private
mkdir "$HOME"
unset PERFTRAMP PERFTRAMP_SIGNAL
export JITDUMPDIR=$tmp

[ -x "$TINY" ] || { echo "FAIL: $TINY not built"; exit 1; }
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1 ||
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"

at_least() { [ "$3" -gt 0 ] && [ $(($2 * 100)) -ge $(($3 * $1)) ]; } # PCT n d

# ---- (a) srcline -----------------------------------------------------
line_of() { grep -n "^fn $1(" "$HOT" | cut -d: -f1; }
want_next=$(line_of collatz_next)
want_len=$(line_of collatz_length)
( cd "$tmp" && PERFTRAMP=jitdump perf record -q -k 1 -F 4999 -e cpu-clock -o sl.data -- "$TINY" "$HOT" \
    >sl.out 2>sl.err ) || bad "perf record tiny hot.tiny: $(tail -3 "$tmp/sl.err")"
perf inject --jit -i "$tmp/sl.data" -o "$tmp/sl.jit.data" >"$tmp/inject.log" 2>&1 ||
    bad "perf inject --jit: $(tail -3 "$tmp/inject.log")"
perf_a2l report -i "$tmp/sl.jit.data" --no-children --sort sym,srcline --stdio >"$tmp/sl.report" 2>"$tmp/sl.report.err" ||
    bad "perf report exited with status $?: $(sort "$tmp/sl.report.err" | uniq -c | head -n 5)"
got_next=$(grep -c "tiny::collatz_next  *hot\.tiny:$want_next\$" "$tmp/sl.report")
wrong=$(grep 'tiny::' "$tmp/sl.report" | grep -vc 'hot\.tiny:[0-9]')
# the line table in the injected .so of collatz_next, read by binutils
so=$(grep -l 'tiny::collatz_next' "$tmp"/jitted-*.so 2>/dev/null | head -1)
a2l=
if [ -n "$so" ]; then
    addr=$(nm "$so" | awk '/tiny::collatz_next/ {print $1; exit}')
    a2l=$(addr2line -e "$so" "0x$addr" 2>/dev/null)
    readelf --debug-dump=decodedline "$so" >"$tmp/lines.txt" 2>&1
fi
if [ "$got_next" -ge 1 ] && [ "$wrong" = 0 ] && [ "${a2l##*/}" = "hot.tiny:$want_next" ]; then
    prove dynamic.srcline proven "perf report --sort sym,srcline: tiny::collatz_next hot.tiny:$want_next; addr2line on its jitted .so: ${a2l##*/}; no tiny:: row without a line"
    echo "ok: srcline $(grep 'tiny::' "$tmp/sl.report" | head -3 | tr -s ' ' | tr '\n' ';')"
else
    prove dynamic.srcline failed "rows for tiny::collatz_next at hot.tiny:$want_next: $got_next, tiny:: rows without a line: $wrong, addr2line: '${a2l}'"
    bad "srcline: $(grep 'tiny::' "$tmp/sl.report" | head -5)"
fi
grep -q "tiny::collatz_length  *hot\.tiny:$want_len\$" "$tmp/sl.report" ||
    echo "note: no sample row for tiny::collatz_length at hot.tiny:$want_len (few samples land on its trampoline)"

# ---- (b), (c) the signal switch, perf attaching later -----------------
# A script that runs until killed: leaf's loop is where the time goes.
cat >"$tmp/forever.tiny" <<'T'
fn leaf(n) { i = 0; s = 0; while (i < n) { s = s + i % 7; i = i + 1; } return s; }
fn middle(n) { return leaf(n); }
fn outer(k) { t = 0; j = 0; while (j < k) { t = t + middle(1000); j = j + 1; } return t; }
x = 0;
while (1) { x = x + outer(100); }
T
# complete_stats < perf script -F ip,sym: "evaluator-samples complete"
# (tests/lib/tiny_stats.awk, checked on recorded layouts by tests/perf/perf_parsers.sh).
complete_stats() { awk -f "$S/tests/lib/tiny_stats.awk"; }
start_tiny() {
    PERFTRAMP_SIGNAL=USR2 PERFTRAMP=$1 "$TINY" "$tmp/forever.tiny" >"$tmp/forever.out" 2>"$tmp/forever.err" &
    bg=$!
    sleep 0.5 # its trampolines exist, with no output
}
stop_tiny() {
    kill "$bg" 2>/dev/null
    wait "$bg" 2>/dev/null
    rm -f "/tmp/perf-$bg.map"
    bg=
}

# (b) fp with the map: signal first, then attach
start_tiny perfmap
[ -e "/tmp/perf-$bg.map" ] && bad "PERFTRAMP_SIGNAL: the map exists before the signal"
kill -USR2 "$bg"
for _ in $(seq 50); do [ -s "/tmp/perf-$bg.map" ] && break; sleep 0.1; done
if [ -s "/tmp/perf-$bg.map" ]; then
    grep -q ' tiny::leaf$' "/tmp/perf-$bg.map" || bad "the replayed map lacks tiny::leaf: $(cat "/tmp/perf-$bg.map")"
    perf record -q -F 999 -e cpu-clock --call-graph fp -o "$tmp/fp.data" -p "$bg" -- sleep "$RECORD_SECONDS" \
        >"$tmp/fp.log" 2>&1 || bad "perf record -p (fp): $(tail -3 "$tmp/fp.log")"
    perf script -F ip,sym -i "$tmp/fp.data" >"$tmp/fp.script" 2>/dev/null
    read -r hot ok < <(complete_stats <"$tmp/fp.script")
    if [ "$hot" -ge "$MIN_SAMPLES" ] && at_least "$PCT_OK" "$ok" "$hot"; then
        prove dynamic.signal-perf-fp proven "kill -USR2 then perf record -p --call-graph fp: complete stacks $(pct "$ok" "$hot")"
    else
        prove dynamic.signal-perf-fp failed "complete stacks $(pct "$ok" "$hot") (want >= $PCT_OK% of >= $MIN_SAMPLES)"
        bad "fp after the signal: $(pct "$ok" "$hot")"
    fi
    echo "signal fp: complete $(pct "$ok" "$hot")"
else
    prove dynamic.signal-perf-fp failed "no /tmp/perf-$bg.map 5 s after kill -USR2"
    bad "no map after the signal: $(cat "$tmp/forever.err")"
fi
stop_tiny

# (c) dwarf with the jitdump: signal first (the replay writes the dump,
# its mmap marker stays mapped), then attach: perf synthesizes that mapping
# from /proc/PID/maps and perf inject --jit reads the whole dump
start_tiny jitdump
kill -USR2 "$bg"
for _ in $(seq 50); do [ -s "$tmp/jit-$bg.dump" ] && break; sleep 0.1; done
[ -s "$tmp/jit-$bg.dump" ] || bad "no jitdump 5 s after kill -USR2"
perf record -q -k 1 -F 499 -e cpu-clock --call-graph dwarf -o "$tmp/dw.data" -p "$bg" -- sleep "$RECORD_SECONDS" \
    >"$tmp/dw.log" 2>&1 || bad "perf record -p (dwarf): $(tail -3 "$tmp/dw.log")"
stop_tiny
if perf inject --jit -i "$tmp/dw.data" -o "$tmp/dw.jit.data" >"$tmp/dw.inject" 2>&1; then
    perf script -F ip,sym -i "$tmp/dw.jit.data" >"$tmp/dw.script" 2>/dev/null
    read -r hot ok < <(complete_stats <"$tmp/dw.script")
    if [ "$hot" -ge "$MIN_SAMPLES" ] && at_least "$PCT_OK" "$ok" "$hot"; then
        prove dynamic.signal-perf-dwarf proven "kill -USR2, then perf record -k 1 --call-graph dwarf -p, perf inject --jit: complete stacks $(pct "$ok" "$hot")"
    else
        prove dynamic.signal-perf-dwarf failed "complete stacks $(pct "$ok" "$hot") (want >= $PCT_OK% of >= $MIN_SAMPLES)"
        bad "dwarf after the signal: $(pct "$ok" "$hot")"
    fi
    echo "signal dwarf: complete $(pct "$ok" "$hot")"
else
    prove dynamic.signal-perf-dwarf failed "perf inject --jit: $(tail -1 "$tmp/dw.inject")"
    bad "perf inject --jit (dwarf)"
fi
exit $failed
