#!/bin/bash
# SPDX-License-Identifier: MIT
# PERFTRAMP_ELF source lines with the real perf: examples/tiny wraps each
# function with perftramp_wrap_at(script, line), so its ELF arena file gets
# one DWARF unit per trampoline (.debug_info/.debug_line).  With no -k 1,
# no jitdump and no perf inject:
#   - perf record --call-graph dwarf, then perf report --children --sort
#     sym,srcline shows each of the 4 tiny:: functions (on every call
#     chain, so a row each whatever the sampling) at hot.tiny:<its line>,
#     and no tiny:: row without its own line;
#   - perf script -F ip,sym,srcline: every tiny:: frame of every call
#     chain carries the line of its function's `fn` (tiny::<main>: 1);
#   - addr2line on the arena file agrees for every tiny:: symbol.
# PROOF id: output.elf-srcline.
set -u
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
S=$(cd "${PT_SRCDIR:-.}" && pwd)
TINY=$B/examples/tiny/tiny
HOT=$S/examples/tiny/hot.tiny

PROOF_IDS="output.elf-srcline"
# shellcheck source=tests/lib/proof_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/perf_a2l.sh
. "${PT_SRCDIR:-.}/tests/lib/perf_a2l.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-elf-srcline-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    rm -rf "$tmp"
}
trap cleanup EXIT
export HOME=$tmp/home # perf's build-id cache (~/.debug) stays private
mkdir "$HOME"
unset PERFTRAMP_SIGNAL JITDUMPDIR
export PERFTRAMP=elf PERFTRAMP_ELF_DIR=$tmp/elf
mkdir -m 700 "$PERFTRAMP_ELF_DIR"

[ -x "$TINY" ] || { echo "FAIL: $TINY not built"; exit 1; }
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
for t in addr2line nm; do command -v $t >/dev/null 2>&1 || skip "$t not installed (binutils)"; done
perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1 ||
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"

# want_line NAME: the line tiny gives tiny::NAME (its `fn`; <main>: 1)
want_line() {
    if [ "$1" = "<main>" ]; then echo 1; else grep -n "^fn $1(" "$HOT" | cut -d: -f1; fi
}

( cd "$tmp" && perf record -q -F 4999 -e cpu-clock --call-graph dwarf -o p.data -- "$TINY" "$HOT" \
    >tiny.out 2>tiny.err ) || bad "perf record tiny hot.tiny: $(tail -3 "$tmp/tiny.err")"
ls "$PERFTRAMP_ELF_DIR"/perftramp-*.so >/dev/null 2>&1 || bad "no arena file in $PERFTRAMP_ELF_DIR: $(cat "$tmp/tiny.err")"

# 1. perf report --children --sort sym,srcline: a row for every function
# on a call chain (children, self, [.], sym, srcline)
perf_a2l report -i "$tmp/p.data" --children -g none --sort sym,srcline --stdio >"$tmp/report" 2>"$tmp/report.err" ||
    bad "perf report exited with status $? ($(wc -l <"$tmp/report") lines): $(sort "$tmp/report.err" | uniq -c | head -n 5)"
want_next=$(want_line collatz_next)
rows_next=$(grep -c "tiny::collatz_next  *hot\.tiny:$want_next\$" "$tmp/report")
rows=0 rows_ok=0
while read -r sym line; do
    rows=$((rows + 1))
    [ "$line" = "hot.tiny:$(want_line "${sym#tiny::}")" ] && rows_ok=$((rows_ok + 1)) || echo "report row: $sym $line"
done < <(awk '$4 ~ /^tiny::/ { print $4, $5 }' "$tmp/report")

# 2. perf script: the srcline of every tiny:: frame of every call chain
perf_a2l script -F ip,sym,srcline -i "$tmp/p.data" 2>/dev/null |
    awk 'prev ~ /^tiny::/ { print prev, $1 } { prev = $2 }' | sort | uniq -c >"$tmp/frames"
frames=0 frames_ok=0
while read -r n sym line; do
    frames=$((frames + n))
    if [ "$line" = "hot.tiny:$(want_line "${sym#tiny::}")" ]; then frames_ok=$((frames_ok + n)); else echo "frames: $n $sym $line"; fi
done <"$tmp/frames"

# 3. addr2line on the arena file, every tiny:: symbol
syms=0 syms_ok=0
for f in "$PERFTRAMP_ELF_DIR"/perftramp-*.so; do
    while read -r a _ name; do
        case $name in tiny::*) ;; *) continue ;; esac
        syms=$((syms + 1))
        got=$(addr2line -e "$f" "0x$a" 2>/dev/null)
        [ "${got##*/}" = "hot.tiny:$(want_line "${name#tiny::}")" ] && syms_ok=$((syms_ok + 1)) || echo "addr2line $name: $got"
    done < <(nm "$f")
done

detail="perf report --children --sort sym,srcline: $rows_ok/$rows tiny:: rows at their fn line (tiny::collatz_next hot.tiny:$want_next: $rows_next); perf script: $frames_ok/$frames tiny:: call-chain frames; addr2line: $syms_ok/$syms symbols"
echo "$detail"
grep 'tiny::' "$tmp/report" | head -5
if [ "$rows_next" -ge 1 ] && [ "$rows" -ge 4 ] && [ "$rows_ok" = "$rows" ] && [ "$frames" -ge 100 ] &&
    [ "$frames_ok" = "$frames" ] && [ "$syms" -ge 4 ] && [ "$syms_ok" = "$syms" ]; then
    prove output.elf-srcline proven "no -k 1, no inject: $detail"
else
    prove output.elf-srcline failed "$detail"
    bad "source lines from the ELF arena"
fi
exit $failed
