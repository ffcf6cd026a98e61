#!/bin/sh
# SPDX-License-Identifier: MIT
# The library cross-builds with the ordinary `./configure --host=<triple>`:
# for every foreign table in pt_arch_list, configure + make the shared
# library and examples/hello in a scratch directory, then run hello under
# qemu-<name>-static.  hello is linked -all-static: dynamically linked
# ppc64le and s390x programs (even a bare puts) abort under this qemu-user
# 7.2 at start-up with "stack smashing detected", whatever they link.
# Check is not multi-arch, so HAVE_CHECK is false there; libffi comes
# from Debian multiarch or $PT_CROSS_PREFIX/<name> (tools/deps/arch.sh),
# given through FFI_CFLAGS/FFI_LIBS (no cross pkg-config).
# Usage: tests/arch/cross_configure.sh [SRCDIR]   (exit 1 on a failure;
# PT_ARCHES="a b" limits it to some architectures)
set -u
src=${1:-${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}}
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
host=${PT_HOST_ARCH:-$(uname -m)}
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-cross.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
. "$src/tools/deps/cross_lib.sh"
[ -x "$src/configure" ] || { echo "cross_configure: run autoreconf -fi in $src first"; exit 1; }

table_field() {
    f=$(grep -l "const struct pt_arch pt_arch_$1 *=" "$src"/src/arch/*.c 2>/dev/null | head -n 1)
    [ -n "$f" ] && sed -n "s/^ *\\.$2 *= *\"\\([^\"]*\\)\".*/\\1/p" "$f" | head -n 1
}

bad=0
for sym in $(sed -n 's/^ *&pt_arch_\([A-Za-z0-9_]*\) *,.*/\1/p' "$src/src/arch/arch_list.c"); do
    name=$(table_field "$sym" name)
    triple=$(table_field "$sym" clang_target)
    [ -n "$name" ] && [ -n "$triple" ] && [ "$name" != "$host" ] || continue
    case " ${PT_ARCHES:-$name} " in *" $name "*) ;; *) continue ;; esac
    qemu=$(cross_qemu "$name" "$triple")
    if ! command -v "$triple-gcc" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1; then
        echo "cross $name: SKIP ($triple-gcc or $qemu missing)"
        continue
    fi
    if [ -f "$prefix/$name/lib/libffi.a" ]; then
        ffidir=$prefix/$name/lib ffi_cflags="-I$prefix/$name/include"
    else
        m=$(cross_multiarch "$triple")
        ffidir=/usr/lib/$m ffi_cflags="-I/usr/include/$m"
    fi
    ffi_libs="-L$ffidir -lffi"
    b=$work/$name
    mkdir -p "$b"
    # --disable-tests: only the library and examples/hello are cross-built
    # (the unit tests run natively; tests/arch runs the foreign harness).
    # A static-only libffi (riscv64, built from source) cannot go into a
    # shared library: build static.
    shared=--enable-shared kind=shared
    [ -f "$ffidir/libffi.so" ] || { shared=--disable-shared; kind=static; }
    t0=$(date +%s)
    if ! (cd "$b" && "$src/configure" -q --host="$triple" --enable-werror --disable-tests $shared PKG_CONFIG=false \
            FFI_CFLAGS="$ffi_cflags" FFI_LIBS="$ffi_libs" > config.out 2>&1 &&
          make -j2 libperftramp.la > make.out 2>&1 &&
          make LDFLAGS=-all-static examples/hello >> make.out 2>&1); then
        echo "cross $name: FAIL (configure --host=$triple && make)"
        tail -n 30 "$b/config.out" "$b/make.out" 2>/dev/null | sed 's/^/#   /'
        bad=$((bad + 1)); continue
    fi
    t1=$(date +%s)
    exe=$b/examples/.libs/hello
    [ -f "$exe" ] || exe=$b/examples/hello
    out=$("$qemu" "$exe" 2>&1)
    rc=$?
    have_check=$(sed -n 's/^S\["HAVE_CHECK_TRUE"\]="\(.*\)"$/\1/p' "$b/config.status")
    if [ $rc -eq 0 ] && echo "$out" | grep -q "result 42.0 (direct call gives 42.0)"; then
        echo "cross $name: configure --host=$triple ok (Check: $([ -z "$have_check" ] && echo yes || echo no)), $kind libperftramp built, static examples/hello runs under $qemu ($((t1 - t0))s)"
    else
        echo "cross $name: FAIL (examples/hello under $qemu, exit $rc)"
        echo "$out" | sed 's/^/#   /'
        bad=$((bad + 1))
    fi
done
exit $((bad > 0))
