#!/bin/sh
# SPDX-License-Identifier: MIT
# The library cross-builds with the ordinary `./configure --host=<triple>`:
# for every foreign table in pt_arch_list, configure + make the shared
# library and examples/hello in a scratch directory (two at a time), then run hello under
# qemu-<name>-static.  hello is linked -all-static: dynamically linked
# ppc64le and s390x programs (even a bare puts) abort under this qemu-user
# 7.2 at start-up with "stack smashing detected", whatever they link.
# Check is not multi-arch, so HAVE_CHECK is false there; libffi comes
# from Debian multiarch or $PT_CROSS_PREFIX/<name> (tools/deps/arch.sh),
# given through FFI_CFLAGS/FFI_LIBS (no cross pkg-config).
# Usage: tests/arch/cross_configure.sh [SRCDIR]   (exit 1 on a failure;
# PT_ARCHES="a b" limits it to some architectures, PT_CROSS_EXCEPT="a b"
# leaves some out)
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

# one architecture: configure, build, run hello; prints one line (and the
# logs' tails on a failure), exits 1 on a failure
one_arch() {
    name=$1 triple=$2 qemu=$3
    if [ -f "$prefix/$name/lib/libffi.a" ]; then
        ffidir=$prefix/$name/lib ffi_cflags="-I$prefix/$name/include"
    else
        m=$(cross_multiarch "$triple")
        ffidir=/usr/lib/$m ffi_cflags="-I/usr/include/$m"
    fi
    ffi_libs="-L$ffidir -lffi"
    b=$work/$name
    mkdir -p "$b"
    shared=--enable-shared kind=shared
    [ -f "$ffidir/libffi.so" ] || { shared=--disable-shared; kind=static; }
    t0=$(date +%s)
    if ! (cd "$b" && "$src/configure" -q --host="$triple" --enable-werror --disable-tests $shared PKG_CONFIG=false \
            FFI_CFLAGS="$ffi_cflags" FFI_LIBS="$ffi_libs" > config.out 2>&1 &&
          make -j2 libperftramp.la > make.out 2>&1 &&
          make LDFLAGS=-all-static examples/hello >> make.out 2>&1); then
        echo "cross $name: FAIL (configure --host=$triple && make)"
        tail -n 30 "$b/config.out" "$b/make.out" 2>/dev/null | sed 's/^/#   /'
        return 1
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
        return 1
    fi
}

# Two architectures at a time: configure runs on one core, and it is most
# of each one's time.  Each prints when it is done, in the list's order.
names=
for sym in $(sed -n 's/^ *&pt_arch_\([A-Za-z0-9_]*\) *,.*/\1/p' "$src/src/arch/arch_list.c"); do
    name=$(table_field "$sym" name)
    triple=$(table_field "$sym" clang_target)
    [ -n "$name" ] && [ -n "$triple" ] && [ "$name" != "$host" ] || continue
    case " ${PT_ARCHES:-$name} " in *" $name "*) ;; *) continue ;; esac
    case " ${PT_CROSS_EXCEPT:-} " in *" $name "*) continue ;; esac
    qemu=$(cross_qemu "$name" "$triple")
    if ! command -v "$triple-gcc" >/dev/null 2>&1 || ! command -v "$qemu" >/dev/null 2>&1; then
        echo "cross $name: SKIP ($triple-gcc or $qemu missing)"
        continue
    fi
    (one_arch "$name" "$triple" "$qemu" > "$work/$name.result" 2>&1; echo $? > "$work/$name.rc") &
    names="$names $name"
    [ $(( $(echo $names | wc -w) % 2 )) -eq 0 ] && wait
done
wait
bad=0
for name in $names; do
    cat "$work/$name.result"
    [ "$(cat "$work/$name.rc")" = 0 ] || bad=$((bad + 1))
done
exit $((bad > 0))
