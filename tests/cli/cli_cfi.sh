#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp cfi against what gcc emits.  Small functions are compiled with
# gcc -S (the .cfi_* directives gcc writes) and linked with gcc -shared;
# `perftramp cfi LIB FUNC` must print, as struct perftramp_cfi rows,
#   - the same ops as the directives: .cfi_def_cfa_offset N ->
#     DEF_CFA_OFFSET 0 N, .cfi_offset R,N -> OFFSET R N,
#     .cfi_def_cfa_register R -> DEF_CFA_REGISTER R 0, .cfi_def_cfa R,N ->
#     DEF_CFA R N, .cfi_restore R -> RESTORE R 0 (compared as sorted lists:
#     within one location the order may differ);
#   - at the locations where `readelf -wF` shows the rule table change.
# Natively (x86-64 -O0 and -O2 with callee-saved pushes) and, when the cross
# gcc is installed, for aarch64 (stp/ldp with .cfi_restore).  Then bad
# input: an unknown symbol, a relocatable object, a non-ELF file, usage.
set -u
: "${PT_BUILDDIR:=.}"
PT=$PT_BUILDDIR/tools/perftramp
proof=failed why="the test stopped before this part" # unreached: failed
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-cfi-XXXXXX") || exit 99
trap 'rm -rf "$tmp"; echo "PROOF: cli.cfi $proof $why"' EXIT
[ -x "$PT" ] || { proof=failed why="$PT not built"; echo "FAIL: $PT not built"; exit 1; }
command -v readelf >/dev/null 2>&1 || { proof=not-run why="readelf is not installed"; echo "SKIP: $why"; exit 77; }

cat > "$tmp/f.c" <<'C'
int g(int);
int f0(int x) { int a[4]; a[x & 3] = x; return g(a[1]) + 1; }
int f2(int x) { int a = g(x), b = g(a + 1), c = g(b ^ a); return a + b * 3 + c * x; }
C
fail=0 checked="" ran=0
# check CC OPT FUNC
check() {
    cc=$1 opt=$2 fn=$3 tag="$1 $2 $3"
    ran=$((ran + 1))
    if ! "$cc" "$opt" -fPIC -fasynchronous-unwind-tables -fno-omit-frame-pointer -S "$tmp/f.c" -o "$tmp/f.s" ||
        ! "$cc" "$opt" -fPIC -fasynchronous-unwind-tables -fno-omit-frame-pointer -shared -nostdlib "$tmp/f.c" -o "$tmp/f.so"; then
        echo "FAIL: $tag: $cc cannot build"; fail=1; return
    fi
    # the directives of fn, as "OP REG VALUE"
    awk -v fn="$fn" '
        $0 ~ "^" fn ":" { on = 1 }
        on && /\.cfi_endproc/ { exit }
        on && /\.cfi_def_cfa_offset/ { print "DEF_CFA_OFFSET 0", $2 }
        on && /\.cfi_def_cfa_register/ { print "DEF_CFA_REGISTER", $2, 0 }
        on && /\.cfi_def_cfa / { r = $2; sub(/,/, "", r); print "DEF_CFA", r, $3 }
        on && /\.cfi_offset/ { r = $2; sub(/,/, "", r); print "OFFSET", r, $3 }
        on && /\.cfi_restore / { print "RESTORE", $2, 0 }
        on && /\.cfi_(remember|restore)_state/ { print "UNMAPPED", $1, 0 }
    ' "$tmp/f.s" | sort > "$tmp/want"
    if ! "$PT" cfi "$tmp/f.so" "$fn" > "$tmp/out" 2> "$tmp/err"; then
        echo "FAIL: $tag: perftramp cfi exits non-zero: $(cat "$tmp/err")"; fail=1; return
    fi
    sed -n 's/.*\.offset = \([0-9]*\), \.op = PERFTRAMP_CFI_\([A-Z_]*\), \.reg = \([0-9]*\), \.value = \(-*[0-9]*\)}.*/\2 \3 \4/p' \
        "$tmp/out" | sort > "$tmp/got"
    if ! cmp -s "$tmp/want" "$tmp/got" || [ ! -s "$tmp/want" ]; then
        echo "FAIL: $tag: ops differ from gcc's directives (want | got):"
        paste "$tmp/want" "$tmp/got" | sed 's/^/  /'
        fail=1; return
    fi
    # locations: perftramp's offsets + pc_begin = readelf -wF's rows after the first
    start=$(sed -n 's|^/\* FDE at .*: pc 0x\([0-9a-f]*\)\.\..*|\1|p' "$tmp/out")
    sed -n 's/.*\.offset = \([0-9]*\), .*/\1/p' "$tmp/out" | sort -un |
        while read -r o; do printf '%x\n' $((0x$start + o)); done > "$tmp/got_locs"
    LC_ALL=C readelf -W -wF "$tmp/f.so" | awk -v s="$start" '
        /FDE/ { on = 0; p = $0; sub(/.*pc=0*/, "", p); sub(/\.\..*/, "", p); if (p == s) on = 1; next }
        on && /^[0-9a-f]+ / { n++; if (n > 1) { l = $1; sub(/^0+/, "", l); print l } }
    ' > "$tmp/want_locs"
    if ! cmp -s "$tmp/want_locs" "$tmp/got_locs" || [ ! -s "$tmp/want_locs" ]; then
        echo "FAIL: $tag: locations differ from readelf -wF (want | got):"
        paste "$tmp/want_locs" "$tmp/got_locs" | sed 's/^/  /'
        fail=1; return
    fi
    echo "ok: $tag: $(wc -l < "$tmp/got") ops at $(wc -l < "$tmp/got_locs") locations, as gcc's directives and readelf -wF"
    checked="$checked, $tag"
}

case ${PT_HOST_ARCH:-$(uname -m)} in
x86_64) check gcc -O0 f0; check gcc -O2 f2 ;;
*) echo "note: the native comparison is written for x86-64 hosts" ;;
esac
if command -v aarch64-linux-gnu-gcc >/dev/null 2>&1; then
    check aarch64-linux-gnu-gcc -O0 f0
    check aarch64-linux-gnu-gcc -O2 f2
else
    echo "note: aarch64-linux-gnu-gcc not installed: aarch64 not compared"
fi
[ "$ran" -gt 0 ] || { proof=not-run why="no compiler for a table here"; echo "SKIP: $why"; exit 77; }

# bad input: clear errors, no crash
expect() { # exit-status message-regex args...
    st=$1 re=$2; shift 2
    "$PT" cfi "$@" > /dev/null 2> "$tmp/err"; got=$?
    if [ $got -ne "$st" ] || ! grep -q "$re" "$tmp/err"; then
        echo "FAIL: perftramp cfi $*: exit $got, '$(cat "$tmp/err")' (want $st, /$re/)"; fail=1
    else
        echo "ok: perftramp cfi $*: exit $got: $(head -n 1 "$tmp/err")"
    fi
}
gcc -c -fPIC "$tmp/f.c" -o "$tmp/f.o" 2>/dev/null && expect 1 "relocatable" "$tmp/f.o" f0
expect 1 "no function symbol" "$tmp/f.so" no_such_function
expect 1 "no FDE covers" "$tmp/f.so" 0x1
expect 1 "not an ELF" "$tmp/f.c"
expect 2 "No such file" "$tmp/none.so"
expect 2 "usage" 

if [ $fail -eq 0 ]; then
    proof=proven why="rows equal gcc's .cfi directives at readelf -wF's locations for${checked#,}"
    echo "PASS: perftramp cfi"
else
    proof=failed why="see cli_cfi.sh.log"
fi
exit $fail
