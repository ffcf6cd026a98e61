#!/bin/sh
# SPDX-License-Identifier: MIT
# Cross-architecture tests: what no Debian 12 package provides.  Debian 12
# has no riscv64 archive, so libffi for riscv64 is built from Debian's own
# source package (a deb-src entry, apt-get source libffi) with the cross gcc
# into a private prefix, $PT_CROSS_PREFIX/riscv64 (default
# /opt/perftramp-cross/riscv64).  Its log is kept in
# $PT_DEPS_LOGDIR/riscv64-libffi.log; when the build fails, the build tree
# (config.log included) is kept beside it and both are printed.
# The other architectures' libffi is Debian multiarch (tools/deps/arch.txt).
# Run by tools/install-deps, after the cross toolchains were proven.
# Silent when the library is already there.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -y -qq"
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
logdir=${PT_DEPS_LOGDIR:-/var/log/perftramp-deps}
[ ! -f "$prefix/riscv64/lib/libffi.a" ] || exit 0

triple=riscv64-linux-gnu
command -v "$triple-gcc" > /dev/null 2>&1 || {
    echo "install-deps: $triple-gcc not found: install gcc-$triple (tools/deps/arch.txt)" >&2
    exit 1
}
. "$(dirname "$0")/libffi-source.sh"
libffi_source riscv64-libffi "libffi for riscv64 into $prefix/riscv64"
(cd "$dir" && ./configure --host=$triple --prefix="$prefix/riscv64" \
    --disable-shared --enable-static --disable-docs --disable-multi-os-directory \
    CFLAGS='-O2 -fPIC') >> "$log" 2>&1 || failed "libffi's configure --host=$triple failed"
(cd "$dir" && make -j2) >> "$log" 2>&1 || failed "building libffi for $triple failed"
(cd "$dir" && $SUDO make install) >> "$log" 2>&1 || failed "installing libffi into $prefix/riscv64 failed"
[ -f "$prefix/riscv64/lib/libffi.a" ] || failed "make install left no $prefix/riscv64/lib/libffi.a"
rm -rf "$tree"
echo "install-deps: libffi for riscv64 in $prefix/riscv64 (log: $log)"
