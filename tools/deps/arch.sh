#!/bin/sh
# SPDX-License-Identifier: MIT
# Foreign-architecture test dependencies a package list cannot express:
#  - libffi for arm64, ppc64el and s390x from Debian multiarch
#    (dpkg --add-architecture, then libffi-dev:<debarch>);
#  - Debian 12 has no riscv64 archive, so libffi for riscv64 is built from
#    Debian's own source package (deb-src + apt-get source) with the cross
#    gcc into a private prefix, $PT_CROSS_PREFIX/riscv64 (default
#    /opt/perftramp-cross/riscv64).
# Idempotent, and a few dpkg queries when everything is already there.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -y -qq"
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "ok installed"; }

updated=no
update() { [ $updated = yes ] || { $APT update; updated=yes; }; }

# 1. multiarch libffi
missing=
for a in arm64 ppc64el s390x; do
    if ! dpkg --print-foreign-architectures | grep -qx "$a"; then
        $SUDO dpkg --add-architecture "$a"
        updated=no
    fi
    installed "libffi-dev:$a" || missing="$missing libffi-dev:$a"
done
if [ -n "$missing" ]; then
    update
    $APT install --no-install-recommends $missing >/dev/null
fi

# 2. riscv64 libffi from Debian's source package
if [ ! -f "$prefix/riscv64/lib/libffi.a" ] && command -v riscv64-linux-gnu-gcc >/dev/null; then
    src=/etc/apt/sources.list.d/perftramp-deb-src.sources
    if ! grep -qs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources && \
       ! grep -qs '^deb-src' /etc/apt/sources.list; then
        # the machine's own Debian mirror, with source packages switched on
        if [ -f /etc/apt/sources.list.d/debian.sources ]; then
            sed 's/^Types: *deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO sh -c "cat > $src"
        else
            grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO sh -c "cat > ${src%.sources}.list"
        fi
        updated=no
    fi
    update
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    (cd "$work" && apt-get -qq source libffi >/dev/null 2>&1)
    dir=$(find "$work" -maxdepth 1 -type d -name 'libffi-*' | head -n 1)
    [ -n "$dir" ] || { echo "arch.sh: apt-get source libffi failed" >&2; exit 1; }
    (cd "$dir" && ./configure -q --host=riscv64-linux-gnu --prefix="$prefix/riscv64" \
        --disable-shared --enable-static --disable-docs --disable-multi-os-directory \
        CFLAGS='-O2 -fPIC' >/dev/null && make -s -j2 >/dev/null 2>&1 && $SUDO make -s install >/dev/null)
    echo "arch.sh: libffi for riscv64 in $prefix/riscv64"
fi
