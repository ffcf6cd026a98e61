#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs tests/arch/foreign_contract.c on every architecture in pt_arch_list:
# natively for the host and for a 32-bit mode the host's kernel runs
# (i686 on x86-64, unless the kernel has its 32-bit emulation switched
# off), under qemu-user for the others.  Each is built statically from the
# library sources with the arch's gcc (<clang_target>-gcc for foreign
# ones) and its libffi.a (Debian's multiarch directory, which the cross
# gcc names with -print-multiarch: /usr/lib/i386-linux-gnu for
# i686-linux-gnu; or $PT_CROSS_PREFIX/<name> for riscv64: see
# tools/deps/arch.sh).  qemu-<name>-static runs it, else qemu named after
# the multiarch directory's CPU (qemu-i386-static for i686).  Prints one summary line per architecture, e.g.
#   arch aarch64: contract 25/25, lifecycle 11/11, unwind 8/8, fp-walk 1/1, cfi-boundaries 8/8, poison-control 1/1 (qemu-aarch64-static, build 7s, run 0s)
# (cfi-boundaries N/N: N = the table's instructions + 1, see the harness),
# and three proof lines per architecture:
#   PROOF: arch.<arch>.executed|unwound|every-boundary proven|failed|not-run <detail>
# It also runs tests/arch/frameless.c (a hand-written frameless function
# published with perftramp_publish, unwound by libgcc) on each and prints
#   PROOF: publish.frameless-<arch> ...   (x86_64's is tests/api/check_dynamic's)
# An arch whose tools are missing is reported as SKIP with the reason and
# its proofs as not-run; the test exits 77 when no foreign arch could run,
# and fails on a SKIP when $CI is set (CI installs everything: a skip
# there is a broken install).
#
# The list comes from src/arch/arch_list.c (&pt_arch_<sym> entries) and each
# table's .name and .clang_target: adding a table to the list adds it here.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
host=${PT_HOST_ARCH:-$(uname -m)}
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
keep=${PT_ARCH_KEEP:-}   # set to keep the work directory (binaries, logs)
# PT_ARCHES="a b": only these architectures.  PT_ARCH_TESTS=0: skip (for
# repeated `make check` passes, e.g. under sanitizers, that add nothing here).
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-arch.XXXXXX") || exit 99
[ -n "$keep" ] && echo "# work directory: $work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

. "$src/tools/deps/cross_lib.sh"

# The configure results (_GNU_SOURCE and friends) of the host build: the
# same glibc on every Debian arch.
config=
[ -f "$build/config.h" ] && config="-include $build/config.h"

# Field `field` (name or clang_target) of the table defining pt_arch_<sym>.
table_field() {
    f=$(grep -l "const struct pt_arch pt_arch_$1 *=" "$src"/src/arch/*.c 2>/dev/null | head -n 1)
    [ -n "$f" ] || return 1
    sed -n "s/^ *\\.$2 *= *\"\\([^\"]*\\)\".*/\\1/p" "$f" | head -n 1
}

syms=$(sed -n 's/^ *&pt_arch_\([A-Za-z0-9_]*\) *,.*/\1/p' "$src/src/arch/arch_list.c")
[ -n "$syms" ] || { echo "FAIL: no tables found in $src/src/arch/arch_list.c"; exit 1; }

if [ "${PT_ARCH_TESTS:-1}" = 0 ]; then
    for sym in $syms; do
        name=$(table_field "$sym" name)
        case " ${PT_ARCHES:-$name} " in *" $name "*) ;; *) continue ;; esac
        for id in executed unwound every-boundary; do
            echo "PROOF: arch.$name.$id not-run PT_ARCH_TESTS=0"
        done
        [ "$name" = x86_64 ] || echo "PROOF: publish.frameless-$name not-run PT_ARCH_TESTS=0"
    done
    echo "SKIP: PT_ARCH_TESTS=0"
    exit 77
fi

ran=0 foreign_ran=0 bad=0 skipped=0 ready=
tmo=
command -v timeout >/dev/null 2>&1 && tmo="timeout 300"
summary=$work/summary
: > "$summary"
say() { echo "$*" | tee -a "$summary"; }
proofs=$work/proofs
: > "$proofs"
# all three proofs of an arch with one verdict (a run that never happened)
proof_all() {
    for id in executed unwound every-boundary; do
        echo "PROOF: arch.$1.$id $2 $3" >> "$proofs"
    done
    [ "$1" = x86_64 ] || echo "PROOF: publish.frameless-$1 $2 $3" >> "$proofs"
}

for sym in $syms; do
    name=$(table_field "$sym" name)
    triple=$(table_field "$sym" clang_target)
    case " ${PT_ARCHES:-$name} " in *" $name "*) ;; *) continue ;; esac
    if [ -z "$name" ] || [ -z "$triple" ]; then
        say "arch $sym: FAIL (no .name/.clang_target found in src/arch/)"
        bad=$((bad + 1))
        continue
    fi
    incdir=$work/$name-include
    mkdir -p "$incdir"
    if [ "$name" = "$host" ]; then
        cc=${PT_CC:-cc}
        run=
        how=native
        extra=
        ffilib=$(for d in $(${cc%% *} -print-search-dirs 2>/dev/null | sed -n 's/^libraries: =//p' | tr ':' ' ') /usr/lib/$triple /usr/lib; do
            [ -f "$d/libffi.a" ] && { echo "$d"; break; }; done)
        ffiinc=$(pkg-config --variable=includedir libffi 2>/dev/null)
        [ -f "$ffiinc/ffi.h" ] || ffiinc=/usr/include/$triple
    else
        cc=$triple-gcc
        # frame chains the harness walks: s390x's back chain, 32-bit Arm's
        # APCS frames (the harness and library in A32 code)
        case $name in
        s390x) extra="-mbackchain -DPT_S390_BACKCHAIN" ;;
        arm) extra="-marm -mapcs-frame -DPT_ARM_APCS" ;;
        *) extra= ;;
        esac
        if ! command -v "$cc" >/dev/null 2>&1; then
            say "arch $name: SKIP ($cc not installed: tools/install-deps)"
            proof_all "$name" not-run "$cc not installed (tools/install-deps)"
            skipped=$((skipped + 1)); continue
        fi
        multiarch=$(cross_multiarch "$triple")
        run=$(cross_qemu "$name" "$triple")
        how=$run
        # the kernel runs it itself (a 32-bit mode of this CPU): no qemu
        if cross_native "$triple" "$work"; then
            run= how="native ($name programs on this $host kernel)"
        elif ! command -v "$run" >/dev/null 2>&1; then
            say "arch $name: SKIP ($run not installed: qemu-user-static)"
            proof_all "$name" not-run "$run not installed (qemu-user-static)"
            skipped=$((skipped + 1)); continue
        fi
        if [ -f "$prefix/$name/lib/libffi.a" ]; then
            ffilib=$prefix/$name/lib ffiinc=$prefix/$name/include
        else
            ffilib=/usr/lib/$multiarch ffiinc=/usr/include/$multiarch
        fi
    fi
    if [ ! -f "$ffilib/libffi.a" ] || [ ! -f "$ffiinc/ffi.h" ]; then
        say "arch $name: SKIP (no static libffi for $triple: tools/deps/arch.sh)"
        proof_all "$name" not-run "no static libffi for $triple (tools/deps/arch.sh)"
        skipped=$((skipped + 1)); continue
    fi
    # only ffi.h and ffitarget.h: a multiarch include dir must not shadow
    # the cross toolchain's own libc headers
    cp "$ffiinc/ffi.h" "$ffiinc/ffitarget.h" "$incdir/"
    printf "cc='%s'\nrun='%s'\nhow='%s'\nextra='%s'\nffilib='%s'\nincdir='%s'\n" \
        "$cc" "$run" "$how" "$extra" "$ffilib" "$incdir" > "$work/$name.env"
    ready="$ready $name"
done

# Builds one arch's harnesses (static: run under qemu-user without a
# sysroot): the library's objects once, linked into foreign_contract and
# frameless.
build_one() {
    # shellcheck source=/dev/null # written above
    . "$work/$1.env"
    t0=$(date +%s)
    # -fasynchronous-unwind-tables: Debian's riscv64 gcc turns unwind
    # tables off; the unwind test walks through the harness's own frames.
    flags="-std=c11 -O2 -g -static -pthread -Wall -Wextra -fasynchronous-unwind-tables -fno-omit-frame-pointer
           -fno-optimize-sibling-calls $extra $config -I$build -I$src/include -I$src/src -I$incdir"
    mkdir -p "$work/$1.obj"
    # shellcheck disable=SC2086
    if (cd "$work/$1.obj" && $cc $flags -c "$src"/src/*/*.c) > "$work/$1.build.log" 2>&1 &&
        $cc $flags "$work/$1.obj"/*.o "$src/tests/arch/foreign_contract.c" \
            -L"$ffilib" -lffi -ldl -o "$work/foreign_contract-$1" >> "$work/$1.build.log" 2>&1 &&
        $cc $flags "$work/$1.obj"/*.o "$src/tests/arch/frameless.c" \
            -L"$ffilib" -lffi -ldl -o "$work/frameless-$1" >> "$work/$1.build.log" 2>&1; then
        echo 0 > "$work/$1.build.rc"
    else
        echo 1 > "$work/$1.build.rc"
    fi
    echo $(($(date +%s) - t0)) > "$work/$1.build.time"
}

# Build two at a time (the build dominates; each run takes about a second).
n=0
for name in $ready; do
    build_one "$name" &
    n=$((n + 1))
    [ $((n % ${PT_ARCH_JOBS:-2})) -ne 0 ] || wait
done
wait

for name in $ready; do
    # shellcheck source=/dev/null # written above
    . "$work/$name.env"
    exe=$work/foreign_contract-$name
    if [ "$(cat "$work/$name.build.rc" 2>/dev/null)" != 0 ]; then
        say "arch $name: FAIL (build with $cc)"
        sed 's/^/#   /' "$work/$name.build.log" | head -n 40
        proof_all "$name" failed "the harness does not build with $cc"
        bad=$((bad + 1)); continue
    fi
    t1=$(date +%s)
    # a broken table can loop: bound each run (no timing assertion)
    # shellcheck disable=SC2086 # both may be empty (no timeout, the host)
    $tmo $run "$exe" > "$work/$name.out" 2>&1
    rc=$?
    t2=$(date +%s)
    sed "s/^/# $name: /" "$work/$name.out"
    line=$(sed -n 's/^# summary: //p' "$work/$name.out")
    counts=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$work/$name.out")
    ran=$((ran + 1))
    [ "$name" = "$host" ] || foreign_ran=$((foreign_ran + 1))
    if [ $rc -eq 0 ] && [ -n "$counts" ] && echo "$counts" | grep -q ' 0 failed$'; then
        say "arch $name: ${line:-?} ($how, build $(cat "$work/$name.build.time")s, run $((t2 - t1))s)"
    else
        say "arch $name: FAIL ${line:-(no summary)} exit $rc ($how)"
        bad=$((bad + 1))
    fi
    # the harness's verdicts ("proof: <id> <verdict> <detail>"); a run
    # that died before printing one failed that proof
    for id in executed unwound every-boundary; do
        v=$(sed -n "s/^proof: $id //p" "$work/$name.out" | head -n 1)
        [ -n "$v" ] || v="failed the harness printed no verdict (exit $rc)"
        echo "PROOF: arch.$name.$id $v ($how)" >> "$proofs"
    done
    # the frameless function published with its rows (tests/arch/frameless.c)
    # shellcheck disable=SC2086
    $tmo $run "$work/frameless-$name" > "$work/$name.frameless.out" 2>&1
    frc=$?
    sed "s/^/# $name frameless: /" "$work/$name.frameless.out"
    v=$(sed -n "s/^proof: frameless //p" "$work/$name.frameless.out" | head -n 1)
    [ -n "$v" ] || v="failed frameless printed no verdict (exit $frc)"
    if [ $frc -eq 0 ] && grep -q ' 0 failed$' "$work/$name.frameless.out"; then
        say "arch $name: frameless published function unwound to main ($how)"
    else
        say "arch $name: FAIL frameless exit $frc ($how)"
        bad=$((bad + 1))
    fi
    [ "$name" = x86_64 ] || echo "PROOF: publish.frameless-$name $v ($how)" >> "$proofs"
done

cat "$proofs"
echo "=== architectures:"
cat "$summary"
if [ $bad -gt 0 ]; then
    echo "$ran ran, $bad failed, $skipped skipped"
    exit 1
fi
if [ $skipped -gt 0 ] && [ -n "${CI:-}" ]; then
    echo "FAIL: $skipped architecture(s) skipped under CI: tools/install-deps must install them"
    exit 1
fi
if [ $foreign_ran -eq 0 ]; then
    echo "SKIP: no foreign architecture could run (cross gcc, qemu-user-static or libffi missing)"
    exit 77
fi
exit 0
