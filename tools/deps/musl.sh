#!/bin/sh
# SPDX-License-Identifier: MIT
# What tests/musl/musl.sh needs beside musl-gcc (Debian's musl-tools, which
# has the C library only): libffi and Check built for musl from Debian's own
# source packages (the versions the system's libffi-dev and check come from,
# fetched as tools/deps/arch.sh fetches riscv64's libffi), static and -fPIC,
# into $PT_MUSL_PREFIX (default /opt/perftramp-musl as root, else
# ~/.cache/perftramp-musl):
#  - libffi with Debian's own configure options (debian/rules:
#    --disable-exec-static-tramp --enable-pax_emutramp --without-gcc-arch),
#    so it hands out closures as Debian's libffi8 does;
#  - Check with Debian's options but --disable-subunit (no subunit for
#    musl; perftramp's suites do not use it), installed as libcheck_pic.a
#    too, the name Debian's check.pc links (debian/rules installs its -fPIC
#    build so);
#  - no .la files (Debian ships none either): libtool would otherwise fold
#    the static libffi into libperftramp.so but drop it from the
#    convenience library the tests link;
#  - $prefix/kernel-include: links to the kernel's UAPI headers
#    (linux-libc-dev: linux/, asm/, asm-generic/).  musl-gcc searches
#    musl's headers only, and one test (tests/mem/check_doublemap.c: a
#    seccomp filter) includes <linux/filter.h>; Alpine's linux-headers
#    package plays this part there.
# Cached: silent when $prefix/built-with names the same musl, libffi and
# check versions.  Logs in $PT_DEPS_LOGDIR/musl-{libffi,check}.log; a failed
# build keeps its tree beside its log.  Run by tools/install-deps.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -y -qq"
if [ -z "${PT_DEPS_LOGDIR:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_DEPS_LOGDIR=/var/log/perftramp-deps
    else PT_DEPS_LOGDIR=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-deps; fi
fi
logdir=$PT_DEPS_LOGDIR
if [ -z "${PT_MUSL_PREFIX:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_MUSL_PREFIX=/opt/perftramp-musl
    else PT_MUSL_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-musl; fi
fi
prefix=$PT_MUSL_PREFIX
[ "$(uname -m)" = x86_64 ] || { echo "install-deps: the musl build is tested on x86_64 only: nothing to build"; exit 0; }
command -v musl-gcc > /dev/null 2>&1 || {
    echo "install-deps: musl-gcc not found: install musl-tools (tools/deps/musl.txt)" >&2
    exit 1
}
version() { dpkg-query -W -f='${Version}' "$1:$(dpkg --print-architecture)" 2> /dev/null || echo none; }
want="musl-dev $(version musl-dev); libffi $(version libffi-dev); check $(version check)"
if [ "$(cat "$prefix/built-with" 2> /dev/null)" = "$want" ] && [ -f "$prefix/lib/libffi.a" ] &&
    [ -f "$prefix/lib/libcheck_pic.a" ]; then
    exit 0
fi
. "$(dirname "$0")/libffi-source.sh"
$SUDO rm -rf "$prefix"
flags="CC=musl-gcc --prefix=$prefix --disable-shared --enable-static"

deb_source libffi musl-libffi "libffi for musl into $prefix"
echo "+ ./configure $flags (Debian's libffi options) CFLAGS='-O2 -g -fPIC'" >> "$log"
# shellcheck disable=SC2086 # $flags is a list of options
(cd "$dir" && ./configure $flags --disable-docs --disable-multi-os-directory \
    --disable-exec-static-tramp --enable-pax_emutramp --without-gcc-arch CFLAGS='-O2 -g -fPIC') >> "$log" 2>&1 ||
    failed "libffi's configure with musl-gcc failed"
(cd "$dir" && make -j2) >> "$log" 2>&1 || failed "building libffi with musl-gcc failed"
(cd "$dir" && $SUDO make install) >> "$log" 2>&1 || failed "installing libffi into $prefix failed"
rm -rf "$tree"

deb_source check musl-check "Check for musl into $prefix"
echo "+ ./configure $flags --disable-subunit --disable-build-docs CFLAGS='-O2 -g -fPIC -Wno-format-extra-args'" >> "$log"
# shellcheck disable=SC2086
(cd "$dir" && ./configure $flags --disable-subunit --disable-build-docs \
    CFLAGS='-O2 -g -fPIC -Wno-format-extra-args') >> "$log" 2>&1 || failed "Check's configure with musl-gcc failed"
# the library, its header and check.pc (checkmk and the tests: not needed)
(cd "$dir" && make -j2 SUBDIRS='lib src .') >> "$log" 2>&1 || failed "building Check with musl-gcc failed"
(cd "$dir" && $SUDO make install SUBDIRS='lib src .') >> "$log" 2>&1 || failed "installing Check into $prefix failed"
$SUDO cp "$prefix/lib/libcheck.a" "$prefix/lib/libcheck_pic.a"
rm -rf "$tree"

$SUDO rm -f "$prefix"/lib/*.la
$SUDO mkdir -p "$prefix/kernel-include"
for d in /usr/include/linux /usr/include/asm-generic "/usr/include/$(dpkg-architecture -qDEB_HOST_MULTIARCH 2> /dev/null || echo x86_64-linux-gnu)/asm"; do
    [ -d "$d" ] || { echo "install-deps: $d missing (linux-libc-dev)" >&2; exit 1; }
    $SUDO ln -sfn "$d" "$prefix/kernel-include/$(basename "$d")"
done
for f in lib/libffi.a lib/libcheck_pic.a lib/pkgconfig/libffi.pc lib/pkgconfig/check.pc include/ffi.h include/check.h; do
    [ -f "$prefix/$f" ] || { echo "install-deps: the musl build left no $prefix/$f" >&2; exit 1; }
done
echo "$want" | $SUDO sh -c "cat > '$prefix/built-with'"
echo "install-deps: libffi and Check for musl in $prefix ($want)"
