#!/bin/sh
# SPDX-License-Identifier: MIT
# A libffi that uses static trampolines, for tests/mem/ffi_static_tramp.sh.
# Upstream libffi 3.4 turns static trampolines on by default on x86-64,
# aarch64, i386 and arm Linux; Debian builds it with them off.  With them
# on, ffi_closure_alloc returns writable data and a code pointer into a
# shared trampoline page, so perftramp must map its own code memory.
# Built from Debian's own source package (deb-src + apt-get source libffi:
# the same 3.4.4 the system uses) with --enable-exec-static-tramp into a
# private prefix, $PT_FFI_STATIC_PREFIX (default /opt/perftramp-ffi-static).
# CFLAGS are given, so libffi's configure adds no -march for this machine's
# CPU.  The log is kept in $PT_DEPS_LOGDIR/ffi-static.log and copied to
# $prefix/build.log; when the build fails, the build tree (config.log
# included) is kept beside the log and both are printed.  $prefix/built-with
# records the configure line and fficonfig.h's FFI_EXEC_STATIC_TRAMP.
# Run by tools/install-deps.  Silent when the library is there.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -y -qq"
prefix=${PT_FFI_STATIC_PREFIX:-/opt/perftramp-ffi-static}
if [ -z "${PT_DEPS_LOGDIR:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_DEPS_LOGDIR=/var/log/perftramp-deps
    else PT_DEPS_LOGDIR=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-deps; fi
fi
logdir=$PT_DEPS_LOGDIR

if [ -f "$prefix/lib/pkgconfig/libffi.pc" ] && grep -qs -- --enable-exec-static-tramp "$prefix/built-with"; then
    exit 0
fi
case $(uname -m) in
    x86_64 | aarch64) ;;
    *) echo "install-deps: libffi has no static trampolines on $(uname -m): nothing to build"; exit 0 ;;
esac

. "$(dirname "$0")/libffi-source.sh"
libffi_source ffi-static "libffi with static trampolines into $prefix"
flags="--prefix=$prefix --enable-exec-static-tramp --disable-docs --disable-multi-os-directory"
echo "+ ./configure $flags CFLAGS='-O2 -g'" >> "$log"
# shellcheck disable=SC2086 # $flags is a list of options
(cd "$dir" && ./configure $flags CFLAGS='-O2 -g') >> "$log" 2>&1 ||
    failed "libffi's configure --enable-exec-static-tramp failed"
echo "+ fficonfig.h: $(find "$dir" -name fficonfig.h -exec grep -h 'FFI_EXEC_STATIC_TRAMP' {} + | tr '\n' ' ')" >> "$log"
grep -q '^+ fficonfig.h: #define FFI_EXEC_STATIC_TRAMP 1' "$log" ||
    failed "libffi's configure did not turn static trampolines on"
(cd "$dir" && make -j2) >> "$log" 2>&1 || failed "building libffi with static trampolines failed"
(cd "$dir" && $SUDO make install) >> "$log" 2>&1 || failed "installing libffi into $prefix failed"
[ -f "$prefix/lib/pkgconfig/libffi.pc" ] || failed "make install left no $prefix/lib/pkgconfig/libffi.pc"
$SUDO cp "$log" "$prefix/build.log"
grep -E '^\+ (./configure|fficonfig.h)' "$log" | $SUDO sh -c "cat > '$prefix/built-with'"
rm -rf "$tree"
echo "install-deps: libffi $(basename "$dir" | sed 's/^libffi-//') with static trampolines in $prefix (log: $log)"
