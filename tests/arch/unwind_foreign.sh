#!/bin/sh
# SPDX-License-Identifier: MIT
# PERFTRAMP_UNWIND (libgcc) on every architecture in pt_arch_list: builds
# tests/arch/unwind_foreign.c statically with <clang_target>-gcc and the arch's
# libffi.a (as tests/arch/run_foreign.sh does; tools/deps/arch.sh installs
# them) and runs it under qemu-user (tools/deps/cross_lib.sh names it), or
# natively where the kernel runs it (i686 on x86-64); natively (shared
# libffi) for the host.  An
# arch whose tools are missing is a SKIP line; exits 77 when none ran.
# PT_ARCH_TESTS=0 runs the host only.
# Per arch: PROOF: output.libgcc.<arch> proven|failed|not-run (docs/testing.md).
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
host=${PT_HOST_ARCH:-$(uname -m)}
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-unwind-foreign.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
config=
[ -f "$build/config.h" ] && config="-include $build/config.h"
. "$src/tools/deps/cross_lib.sh"

table_field() {
    f=$(grep -l "const struct pt_arch pt_arch_$1 *=" "$src"/src/arch/*.c 2>/dev/null | head -n 1)
    [ -n "$f" ] || return 1
    sed -n "s/^ *\\.$2 *= *\"\\([^\"]*\\)\".*/\\1/p" "$f" | head -n 1
}

ran=0 bad=0
proof() { p_arch=$1 p_verdict=$2; shift 2; echo "PROOF: output.libgcc.$p_arch $p_verdict $*"; }
# shellcheck disable=SC2013 # one symbol per word
for sym in $(sed -n 's/^ *&pt_arch_\([A-Za-z0-9_]*\) *,.*/\1/p' "$src/src/arch/arch_list.c"); do
    name=$(table_field "$sym" name) || continue
    triple=$(table_field "$sym" clang_target) || continue
    static=-static
    if [ "$name" = "$host" ]; then
        # the host links its shared libffi (Debian ships no libffi.a)
        cc=${PT_CC:-cc} run='' static=
        ffilib=$(pkg-config --variable=libdir libffi 2>/dev/null)
        ffiinc=$(pkg-config --variable=includedir libffi 2>/dev/null)
        [ -f "$ffiinc/ffi.h" ] || ffiinc=/usr/include/$triple
    else
        # (the ASan pass of 15-distcheck: cross-built programs carry no sanitizer, and the
        # plain make check ran them)
        if [ "${PT_ARCH_TESTS:-1}" = 0 ]; then
            echo "arch $name: SKIP (PT_ARCH_TESTS=0)"; proof "$name" not-run "PT_ARCH_TESTS=0"; continue
        fi
        cc=$triple-gcc run=$(cross_qemu "$name" "$triple")
        command -v "$cc" >/dev/null 2>&1 || { echo "arch $name: SKIP ($cc not installed)"; proof "$name" not-run "$cc not installed"; continue; }
        if cross_native "$triple" "$work"; then
            run=
        else
            command -v "$run" >/dev/null 2>&1 || { echo "arch $name: SKIP ($run not installed)"; proof "$name" not-run "$run not installed"; continue; }
        fi
        if [ -f "$prefix/$name/lib/libffi.a" ]; then
            ffilib=$prefix/$name/lib ffiinc=$prefix/$name/include
        else
            m=$(cross_multiarch "$triple")
            ffilib=/usr/lib/$m ffiinc=/usr/include/$m
        fi
    fi
    if { [ -n "$static" ] && [ ! -f "$ffilib/libffi.a" ]; } || [ ! -f "$ffiinc/ffi.h" ]; then
        echo "arch $name: SKIP (no static libffi for $triple)"
        proof "$name" not-run "no static libffi for $triple"
        continue
    fi
    inc=$work/inc-$name
    mkdir -p "$inc" && cp "$ffiinc/ffi.h" "$ffiinc/ffitarget.h" "$inc/"
    exe=$work/unwind_foreign-$name
    # shellcheck disable=SC2086
    if ! $cc -std=c11 -O2 -g $static -pthread -fasynchronous-unwind-tables -fno-omit-frame-pointer \
            $config -I"$build" -I"$src/include" -I"$src/src" -I"$src/tests" -I"$inc" \
            "$src"/src/*/*.c "$src/tests/arch/unwind_foreign.c" \
            -L"$ffilib" -lffi -ldl -o "$exe" >"$work/$name.log" 2>&1; then
        echo "arch $name: FAIL (build with $cc)"; proof "$name" failed "build with $cc"; sed 's/^/#   /' "$work/$name.log" | head -n 20
        bad=$((bad + 1)); continue
    fi
    $run "$exe" >"$work/$name.out" 2>&1
    rc=$?
    ran=$((ran + 1))
    if [ $rc -eq 0 ]; then
        echo "arch $name: ok ($(tail -n 1 "$work/$name.out")${run:+, $run})"
        proof "$name" proven "$(tail -n 1 "$work/$name.out")${run:+ ($run)}"
    else
        echo "arch $name: FAIL (exit $rc)"; proof "$name" failed "exit $rc${run:+ under $run}"; sed 's/^/#   /' "$work/$name.out" | head -n 20
        bad=$((bad + 1))
    fi
done
[ $bad -eq 0 ] || exit 1
[ $ran -gt 0 ] || { echo "SKIP: no architecture could run"; exit 77; }
exit 0
