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
mkdir -p "$logdir"
log=$logdir/riscv64-libffi.log
tree=$logdir/riscv64-libffi
rm -rf "$tree"
mkdir -p "$tree"
: > "$log"
echo "install-deps: building libffi for riscv64 from Debian's source package into $prefix/riscv64 (log: $log)"
failed() {
    tail -n 20 "$log" >&2
    echo "install-deps: $1" >&2
    echo "install-deps: the whole log: $log; the build tree is kept in $tree" >&2
    find "$tree" -name config.log 2> /dev/null | sed 's/^/install-deps: configure said more in /' >&2
    exit 1
}

# Source packages: the machine's own Debian mirror, with deb-src switched on.
if ! grep -qs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources &&
    ! grep -qs '^deb-src' /etc/apt/sources.list; then
    src=/etc/apt/sources.list.d/perftramp-deb-src.sources
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: *deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO sh -c "cat > $src"
    else
        grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO sh -c "cat > ${src%.sources}.list"
    fi
    echo "install-deps: source packages switched on in $src" >> "$log"
    $APT update >> "$log" 2>&1 || failed "apt-get update (with deb-src) failed"
fi
if ! (cd "$tree" && apt-get source libffi) >> "$log" 2>&1; then
    # the lists may predate the deb-src entry
    $APT update >> "$log" 2>&1 || failed "apt-get update failed"
    (cd "$tree" && apt-get source libffi) >> "$log" 2>&1 ||
        failed "apt-get source libffi failed (needs a deb-src entry and dpkg-dev)"
fi
dir=$(find "$tree" -maxdepth 1 -type d -name 'libffi-*' | head -n 1)
[ -n "$dir" ] || failed "apt-get source libffi left no libffi-* directory"
(cd "$dir" && ./configure --host=$triple --prefix="$prefix/riscv64" \
    --disable-shared --enable-static --disable-docs --disable-multi-os-directory \
    CFLAGS='-O2 -fPIC') >> "$log" 2>&1 || failed "libffi's configure --host=$triple failed"
(cd "$dir" && make -j2) >> "$log" 2>&1 || failed "building libffi for $triple failed"
(cd "$dir" && $SUDO make install) >> "$log" 2>&1 || failed "installing libffi into $prefix/riscv64 failed"
[ -f "$prefix/riscv64/lib/libffi.a" ] || failed "make install left no $prefix/riscv64/lib/libffi.a"
rm -rf "$tree"
echo "install-deps: libffi for riscv64 in $prefix/riscv64 (log: $log)"
