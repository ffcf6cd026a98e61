#!/bin/sh
# SPDX-License-Identifier: MIT
# The cache maintenance is really in the cross builds (issue 12, point 6).
# For aarch64, ppc64le, riscv64, s390x and arm, compiles the code on the wrap and
# release paths (src/api/perftramp.c, src/mem/*.c) with the cross gcc and
# with clang --target, -O2 as the library ships, disassembles the objects
# (<triple>-objdump -dr) and follows the calls from perftramp_wrap and from
# perftramp_release to a function holding the flush, in order:
#   aarch64  dc cvau, dsb ish, ic ivau, dsb ish, isb
#   ppc64le  dcbst, sync (objdump: hwsync), icbi, sync, isync
#   riscv64  flags 0 (every hart) and a call to __riscv_flush_icache, or,
#            built as if <sys/cachectl.h> were missing, a7 = 259
#            (riscv_flush_icache) and ecall
#   s390x    bcr 15,0 (serialization: objdump says br %r0), which discards
#            instructions prefetched through the other view of double-mapped
#            memory
#   arm      r0 = 0x0f0002 (cacheflush) and a call to syscall: 32-bit Arm
#            user code cannot run cache maintenance operations
# __builtin___clear_cache is not enough: on ppc64le GCC 12 emits nothing,
# and clang calls libgcc's empty __clear_cache on ppc64le and riscv64.
# Prints PROOF: icache.<arch> proven|failed|not-run per architecture.  An
# architecture whose cross gcc is missing is not run; exit 77 when none
# ran, and a skip fails under $CI.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-icache.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
config=
[ -f "$build/config.h" ] && config="-include $build/config.h"
sources="$src/src/api/perftramp.c $(ls "$src"/src/mem/*.c)"

# Reads objdump -dr of objects; for each root, follows calls and branches
# (relocations and <symbol> operands) up to three levels and looks for a
# function whose instructions match the patterns (";"-separated regular
# expressions over "mnemonic operands" and "R_<reloc> symbol" lines; in order when ordered=1,
# else all of them anywhere in it).  Prints one line per root:
#   ok <root> -> ... -> <function>     or     missing <root> (<n> functions reached)
# shellcheck disable=SC2016
find_flush='
function strip(s) { sub(/^</, "", s); sub(/[+@>].*$/, "", s); return s }
/^[0-9a-f]+ <[^>]+>:$/ {
    g = strip($2); sub(/:$/, "", g)
    if (g !~ /^\.L/) { f = g; funcs[f] = 1 } # riscv objects keep local labels: still the same function
    next
}
f == "" { next }
/^[ \t]+[0-9a-f]+:[ \t]+R_[A-Z0-9_]+/ {
    t = strip($3); edges[f] = edges[f] " " t
    text[f] = text[f] "\n" $2 " " t
    next
}
/^[ \t]+[0-9a-f]+:\t/ {
    line = $0; sub(/^[ \t]+[0-9a-f]+:\t/, "", line); gsub(/[ \t]+/, " ", line)
    text[f] = text[f] "\n" line
    if (match(line, /<[^>]+>/)) edges[f] = edges[f] " " strip(substr(line, RSTART, RLENGTH))
}
function matches(fn,   n, lines, i, k, hit, p) {
    n = split(text[fn], lines, "\n")
    if (ordered) {
        k = 1
        for (i = 1; i <= n && k <= npat; i++) if (lines[i] ~ pat[k]) k++
        return k > npat
    }
    for (p = 1; p <= npat; p++) {
        hit = 0
        for (i = 1; i <= n && !hit; i++) if (lines[i] ~ pat[p]) hit = 1
        if (!hit) return 0
    }
    return 1
}
END {
    npat = split(patterns, pat, ";")
    nroots = split(roots, root, " ")
    for (r = 1; r <= nroots; r++) {
        delete seen; delete via; delete depth
        qn = 1; q[1] = root[r]; seen[root[r]] = 1; depth[root[r]] = 0; found = ""
        for (h = 1; h <= qn && found == ""; h++) {
            fn = q[h]
            if (fn in funcs && matches(fn)) { found = fn; break }
            if (depth[fn] >= 3) continue
            n = split(edges[fn], to, " ")
            for (i = 1; i <= n; i++)
                if ((to[i] in funcs) && !(to[i] in seen)) {
                    seen[to[i]] = 1; via[to[i]] = fn; depth[to[i]] = depth[fn] + 1; q[++qn] = to[i]
                }
        }
        if (found == "") { print "missing " root[r] " (" qn " functions reached)"; continue }
        path = found
        for (x = found; x in via; x = via[x]) path = via[x] " -> " path
        print "ok " path
    }
}'

# check ARCH COMPILER-LABEL "COMPILER" "PATTERNS" ORDERED [EXTRA CFLAGS]
# Prints a line per root; returns 1 when a root misses the flush or the
# build fails, 2 when the compiler cannot build for the target.
check() {
    arch=$1 label=$2 compiler=$3 patterns=$4 ordered=$5 extra=${6:-}
    out=$work/$arch-$label
    mkdir -p "$out"
    for s in $sources; do
        # shellcheck disable=SC2086
        if ! $compiler -std=c11 -O2 -fPIC -Wall -Wextra -c $config $extra -I"$build" -I"$src/include" \
                -I"$src/src" -I"$work/$arch-inc" "$s" -o "$out/$(basename "$s" .c).o" 2>"$out/cc.err"; then
            echo "  $arch $label: cannot compile $(basename "$s"):"
            sed 's/^/    /' "$out/cc.err" | head -n 8
            return 2
        fi
    done
    "$triple-objdump" -dr --no-show-raw-insn "$out"/*.o > "$out/dis.txt" || return 1
    awk -v roots="perftramp_wrap perftramp_release" -v patterns="$patterns" -v ordered="$ordered" \
        "$find_flush" "$out/dis.txt" > "$out/result"
    rc=0
    while read -r status rest; do
        echo "  $arch $label: $status $rest"
        [ "$status" = ok ] || rc=1
    done < "$out/result"
    [ -s "$out/result" ] || rc=1
    return $rc
}

ran=0 bad=0 skipped=0
for arch in aarch64 ppc64le riscv64 s390x arm; do
    case $arch in
    aarch64)
        triple=aarch64-linux-gnu
        patterns='^dc cvau,;^dsb ish;^ic ivau,;^dsb ish;^isb'
        ordered=1 what="dc cvau, dsb ish, ic ivau, dsb ish, isb" ;;
    ppc64le)
        triple=powerpc64le-linux-gnu
        patterns='^dcbst ;^(hw)?sync;^icbi ;^(hw)?sync;^isync'
        ordered=1 what="dcbst, sync, icbi, sync, isync" ;;
    riscv64)
        triple=riscv64-linux-gnu
        patterns='^(li a2,0|mv a2,zero);^R_RISCV_CALL(_PLT)? __riscv_flush_icache'
        ordered=0 what="__riscv_flush_icache(start, end, 0)" ;;
    s390x)
        triple=s390x-linux-gnu
        patterns='^(bcr 15,0|br %r0)$'
        ordered=1 what="bcr 15,0" ;;
    arm)
        triple=arm-linux-gnueabihf
        patterns='^movs?w? r0, #2$;^movt r0, #15$;^R_ARM_(THM_)?(CALL|JUMP24) syscall$'
        ordered=0 what="syscall(__ARM_NR_cacheflush = 0xf0002, start, end, 0)" ;;
    esac
    if ! command -v "$triple-gcc" >/dev/null 2>&1 || ! command -v "$triple-objdump" >/dev/null 2>&1; then
        echo "PROOF: icache.$arch not-run $triple-gcc or $triple-objdump not installed (tools/install-deps)"
        skipped=$((skipped + 1))
        continue
    fi
    # libffi's headers for the target (code_ffi.c includes ffi.h)
    ffiinc=/usr/include/$triple
    [ -f "$prefix/$arch/include/ffi.h" ] && ffiinc=$prefix/$arch/include
    if [ ! -f "$ffiinc/ffi.h" ]; then
        echo "PROOF: icache.$arch not-run no ffi.h for $triple (tools/deps/arch.sh)"
        skipped=$((skipped + 1))
        continue
    fi
    mkdir -p "$work/$arch-inc"
    cp "$ffiinc/ffi.h" "$ffiinc/ffitarget.h" "$work/$arch-inc/"
    echo "== $arch: $what"
    ran=$((ran + 1))
    ok=1 compilers=
    check "$arch" gcc "$triple-gcc" "$patterns" "$ordered" || ok=0
    compilers="gcc 12"
    check "$arch" clang "clang --target=$triple" "$patterns" "$ordered"
    case $? in
    0) compilers="$compilers + clang" ;;
    2) echo "  $arch clang: not counted (cannot build for $triple here)" ;;
    *) ok=0 ;;
    esac
    if [ "$arch" = riscv64 ]; then
        # the fallback for a libc without <sys/cachectl.h>: the system call itself
        check "$arch" gcc-syscall "$triple-gcc" '^li a7,259;^ecall' 0 -DPT_NO_SYS_CACHECTL || ok=0
        compilers="$compilers; without <sys/cachectl.h>: ecall 259"
    fi
    if [ $ok = 1 ]; then
        echo "PROOF: icache.$arch proven $what on the wrap and release paths ($compilers, -O2)"
    else
        echo "PROOF: icache.$arch failed the flush is missing from a path (see above)"
        bad=$((bad + 1))
    fi
done

[ $bad -eq 0 ] || exit 1
if [ $skipped -gt 0 ] && [ -n "${CI:-}" ]; then
    echo "FAIL: $skipped architecture(s) not run under CI: tools/install-deps must install them"
    exit 1
fi
[ $ran -gt 0 ] || { echo "SKIP: no cross compiler for aarch64, ppc64le, riscv64, s390x or arm"; exit 77; }
exit 0
