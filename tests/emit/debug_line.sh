#!/bin/sh
# SPDX-License-Identifier: MIT
# emit/debug_line.c, read by binutils: a shared object with two functions
# gets .debug_abbrev/.debug_info/.debug_line from tests/emit/debug_line_prog
# (one unit per function, appended one after the other, as an ELF arena
# would per slot) through objcopy --add-section; addr2line must give each
# function's first and last byte its file:line and the byte after it
# none of them; readelf --debug-dump=line must decode both units.
# PROOF: emit.debug-line.
set -u
B=${PT_BUILDDIR:-.}
prog=$B/tests/emit/debug_line_prog
CC=${PT_CC:-cc}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-debug-line-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
proof() { echo "PROOF: emit.debug-line $*"; }
skip() { proof "not-run $*"; echo "SKIP: $*"; exit 77; }
fail() { proof "failed $*"; echo "FAIL: $*"; exit 1; }

[ -x "$prog" ] || fail "$prog not built"
for t in objcopy addr2line readelf nm; do command -v $t > /dev/null 2>&1 || skip "$t not installed (binutils)"; done

cat > "$tmp/code.c" << 'C'
int alpha(int x) { return x * 3 + 1; }
int beta(int x) { return alpha(x) - 7; }
C
$CC -O1 -fPIC -shared -nostdlib -o "$tmp/code.so" "$tmp/code.c" 2> "$tmp/cc.err" ||
    skip "$CC cannot build a shared object: $(head -n 1 "$tmp/cc.err")"
addr_of() { nm -S "$tmp/code.so" | awk -v f="$1" '$4 == f { print $1 }'; }
size_of() { nm -S "$tmp/code.so" | awk -v f="$1" '$4 == f { print $2 }'; }
a=$(addr_of alpha) as=$(size_of alpha) b=$(addr_of beta) bs=$(size_of beta)
[ -n "$a" ] && [ -n "$b" ] || fail "nm found no alpha/beta in code.so"
"$prog" "$tmp" "$a" "$as" /src/script.tiny 42 "$b" "$bs" /src/other.py 7 || fail "debug_line_prog"
objcopy --add-section .debug_abbrev="$tmp/abbrev.bin" --add-section .debug_info="$tmp/info.bin" \
    --add-section .debug_line="$tmp/line.bin" "$tmp/code.so" "$tmp/lines.so" 2> "$tmp/objcopy.err" ||
    fail "objcopy --add-section: $(head -n 1 "$tmp/objcopy.err")"

hex() { printf '0x%x' "$1"; }
ok=0 n=0
expect() { # ADDR WANT
    got=$(addr2line -e "$tmp/lines.so" "$1" 2> /dev/null)
    n=$((n + 1))
    if [ "$got" = "$2" ]; then ok=$((ok + 1)); else echo "addr2line $1: '$got', want '$2'"; fi
}
expect "$(hex $((0x$a)))" /src/script.tiny:42
expect "$(hex $((0x$a + 0x$as - 1)))" /src/script.tiny:42
expect "$(hex $((0x$b)))" /src/other.py:7
expect "$(hex $((0x$b + 0x$bs - 1)))" /src/other.py:7
# the byte after beta (past both units): no line
after=$(addr2line -e "$tmp/lines.so" "$(hex $((0x$b + 0x$bs)))" 2> /dev/null)
n=$((n + 1))
case $after in *script.tiny* | *other.py*) echo "addr2line after beta: '$after', want no line" ;; *) ok=$((ok + 1)) ;; esac
readelf --debug-dump=decodedline "$tmp/lines.so" > "$tmp/decoded.txt" 2>&1
units=$(grep -c 'CU: ' "$tmp/decoded.txt")
readelf --debug-dump=info,abbrev,rawline "$tmp/lines.so" > "$tmp/raw.txt" 2>&1
if grep -qi 'warning\|error\|corrupt' "$tmp/raw.txt"; then
    n=$((n + 1))
    echo "readelf complains: $(grep -i 'warning\|error\|corrupt' "$tmp/raw.txt" | head -n 3)"
fi
[ "$units" -ge 2 ] || { n=$((n + 1)); echo "readelf decodes $units units: $(head -n 20 "$tmp/decoded.txt")"; }
[ "$ok" = "$n" ] || fail "$ok/$n checks passed (addr2line per address, readelf without complaints)"
proof "proven $ok/$n addresses (first and last byte of two units, the byte after) via addr2line; readelf decodes $units units"
