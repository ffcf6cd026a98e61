#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp arch: for every built-in table, the rows perftramp decodes from
# the .eh_frame it emits (rows.txt) must equal the rows readelf decodes from
# the ELF object `--raw` writes; the object's .text must be the code bytes;
# and llvm-objdump must disassemble it for the table's triple.
set -u
: "${PT_BUILDDIR:=.}"
PT="$PT_BUILDDIR/tools/perftramp"
command -v readelf >/dev/null 2>&1 || { echo "SKIP: readelf not installed"; exit 77; }
[ -x "$PT" ] || { echo "FAIL: $PT not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cli_arch.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT

fail=0
archs=$("$PT" arch | awk '{print $1}')
[ -n "$archs" ] || { echo "FAIL: 'perftramp arch' lists no architecture"; exit 1; }

# readelf -wF rows -> "LOC cfa rN+OFF rN=RULE ..." with DWARF numbers.
# Names come from readelf -wf ("r6 (rbp)"); "ra" is the CIE's column.
normalize() {
    obj=$1
    { LC_ALL=C readelf -W -wf "$obj" | sed 's/^/RAW /'; LC_ALL=C readelf -W -wF "$obj"; } | awk '
    function hex(s,   v, i, c) { v = 0; s = tolower(s); for (i = 1; i <= length(s); i++) { c = index("0123456789abcdef", substr(s, i, 1)); if (!c) break; v = v * 16 + c - 1 } return v }
    function num(n) { if (n in map) return map[n]; if (n ~ /^r[0-9]+$/) return substr(n, 2) + 0; return "?" n }
    /^RAW / {
        s = $0
        while (match(s, /r[0-9]+ \([^)]*\)/)) {
            t = substr(s, RSTART, RLENGTH); s = substr(s, RSTART + RLENGTH)
            split(t, p, " "); nm = p[2]; gsub(/[()]/, "", nm); map[nm] = substr(p[1], 2) + 0
        }
        next
    }
    / CIE / { for (i = 1; i <= NF; i++) if ($i ~ /^ra=/) ra = substr($i, 4) + 0 }
    / FDE / { for (i = 1; i <= NF; i++) if ($i ~ /^pc=/) { split(substr($i, 4), pc, "."); start = hex(pc[1]) }
              infde = 1; next }
    infde && $1 == "LOC" { n = NF; for (i = 3; i <= NF; i++) col[i] = ($i == "ra") ? ra : num($i); next }
    infde && NF == 0 { infde = 0; next }
    infde {
        cfa = $2; k = match(cfa, /[+-][0-9]+$/)
        line = sprintf("0x%x cfa r%s%s", hex($1) - start, num(substr(cfa, 1, k - 1)), substr(cfa, k))
        m = 0
        for (i = 3; i <= NF; i++) if ($i != "u") { m++; rn[m] = col[i]; rv[m] = $i }
        for (i = 2; i <= m; i++) for (j = i; j > 1 && rn[j-1] > rn[j]; j--) {
            t = rn[j]; rn[j] = rn[j-1]; rn[j-1] = t; t = rv[j]; rv[j] = rv[j-1]; rv[j-1] = t }
        for (i = 1; i <= m; i++) {
            v = rv[i]; if (v !~ /^(c|v)[+-]/ && v != "s" && v != "exp" && v != "vexp") v = "r" num(v)
            line = line " r" rn[i] "=" v
        }
        print line
    }'
}

for a in $archs; do
    d="$work/$a"
    if ! "$PT" arch "$a" --raw "$d" > "$work/$a.txt"; then
        echo "FAIL: $a: perftramp arch --raw failed"; fail=1; continue
    fi
    for f in code.bin eh_frame.bin eh_frame_hdr.bin trampoline.o rows.txt; do
        [ -s "$d/$f" ] || { echo "FAIL: $a: $f missing or empty"; fail=1; }
    done
    grep -q "covers exactly the trampoline" "$work/$a.txt" || { echo "FAIL: $a: FDE does not cover the code"; fail=1; }
    grep -q "eh_frame_ptr -> .eh_frame start (ok)" "$work/$a.txt" || { echo "FAIL: $a: hdr does not point at .eh_frame"; fail=1; }

    normalize "$d/trampoline.o" > "$work/$a.readelf"
    if [ ! -s "$work/$a.readelf" ]; then
        echo "FAIL: $a: readelf decoded no rows"; readelf -wF "$d/trampoline.o"; fail=1
    elif ! diff -u "$work/$a.readelf" "$d/rows.txt"; then
        echo "FAIL: $a: readelf rows (-) differ from perftramp rows (+)"; fail=1
    else
        echo "ok: $a: $(wc -l < "$d/rows.txt") rows identical to readelf's"
    fi

    # .text in the object is byte-for-byte the code perftramp shows
    if command -v llvm-objcopy >/dev/null 2>&1; then
        llvm-objcopy -O binary --only-section=.text "$d/trampoline.o" "$work/$a.text" 2>/dev/null &&
            cmp -s "$work/$a.text" "$d/code.bin" || { echo "FAIL: $a: .text differs from code.bin"; fail=1; }
    fi
    triple=$(awk -v a="$a" '$1 == a {print $NF == "(host)" ? $(NF-1) : $NF}' <<EOT
$("$PT" arch)
EOT
)
    if command -v llvm-objdump >/dev/null 2>&1; then
        n=$(llvm-objdump -d --triple="$triple" "$d/trampoline.o" 2>&1 | grep -c '^ *[0-9a-f]*:')
        [ "$n" -gt 0 ] || { echo "FAIL: $a: llvm-objdump --triple=$triple disassembled nothing"; fail=1; }
    fi
done

# gdb reads the host table's object: the symbol and one line per instruction
host=$("$PT" arch | awk '$NF == "(host)" {print $1}')
if [ -n "$host" ] && command -v gdb >/dev/null 2>&1; then
    n_insns=$(awk '/^Instructions/ {on = 1; next} on && /^  0x/ && !/data word|end \(one|zero padding/ {n++} on && /^$/ {exit} END {print n + 0}' "$work/$host.txt")
    n_gdb=$(gdb -nx -batch -ex "x/${n_insns}i perftramp_$host" "$work/$host/trampoline.o" 2>/dev/null | grep -c "<perftramp_$host")
    if [ "$n_gdb" -ne "$n_insns" ] || [ "$n_insns" -eq 0 ]; then
        echo "FAIL: gdb disassembled $n_gdb of $n_insns instructions of perftramp_$host"; fail=1
    else
        echo "ok: gdb disassembles the $n_insns instructions of perftramp_$host"
    fi
fi

# usage errors are exit 2, never a crash
"$PT" arch no-such-arch >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: arch no-such-arch exit $rc (want 2)"; fail=1; }
"$PT" arch x86_64 --bogus >/dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: arch --bogus exit $rc (want 2)"; fail=1; }
"$PT" --help | grep -q "perftramp check" || { echo "FAIL: --help does not describe check"; fail=1; }
exit $fail
