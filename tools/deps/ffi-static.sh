#!/bin/sh
# SPDX-License-Identifier: MIT
# A libffi that uses static trampolines, for tests/ffi_static_tramp.sh.
# Upstream libffi 3.4 turns static trampolines on by default on x86-64,
# aarch64, i386 and arm Linux; Debian builds it with them off.  With them
# on, ffi_closure_alloc returns writable data and a code pointer into a
# shared trampoline page, so perftramp must map its own code memory.
# Built from Debian's own source package (deb-src + apt-get source libffi,
# the same 3.4.4 the system uses) with --enable-exec-static-tramp into a
# private prefix, $PT_FFI_STATIC_PREFIX (default /opt/perftramp-ffi-static).
# The build log stays in $prefix/build.log (or is printed when the build
# fails).  Idempotent: nothing to do when the prefix holds the library.
set -eu
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive
APT="$SUDO apt-get -o DPkg::Lock::Timeout=600 -y -qq"
prefix=${PT_FFI_STATIC_PREFIX:-/opt/perftramp-ffi-static}

if [ -f "$prefix/lib/pkgconfig/libffi.pc" ] && [ -f "$prefix/built-with" ] &&
   grep -q -- --enable-exec-static-tramp "$prefix/built-with"; then
    exit 0
fi
case $(uname -m) in
    x86_64 | aarch64) ;;
    *) echo "ffi-static.sh: libffi has no static trampolines on $(uname -m): nothing to build"; exit 0 ;;
esac

# Source packages: the machine's own Debian mirror with deb-src switched on.
src=/etc/apt/sources.list.d/perftramp-deb-src.sources
if ! grep -qs '^Types:.*deb-src' /etc/apt/sources.list.d/*.sources && \
   ! grep -qs '^deb-src' /etc/apt/sources.list; then
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        sed 's/^Types: *deb$/Types: deb-src/' /etc/apt/sources.list.d/debian.sources | $SUDO sh -c "cat > $src"
    else
        grep -h '^deb ' /etc/apt/sources.list | sed 's/^deb /deb-src /' | $SUDO sh -c "cat > ${src%.sources}.list"
    fi
    $APT update
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/pt-ffi-static.XXXXXX")
log=$work/build.log
cleanup() { rm -rf "$work"; }
trap cleanup EXIT
if ! (cd "$work" && apt-get -qq source libffi) > "$log" 2>&1; then
    if ! (cd "$work" && $APT update && apt-get -qq source libffi) >> "$log" 2>&1; then
        keep=${TMPDIR:-/tmp}/perftramp-ffi-static-build.log
        cp "$log" "$keep"
        echo "ffi-static.sh: apt-get source libffi failed (needs a deb-src entry); log: $keep" >&2
        tail -n 20 "$keep" >&2
        exit 1
    fi
fi
dir=$(find "$work" -maxdepth 1 -type d -name 'libffi-*' | head -n 1)
[ -n "$dir" ] || { echo "ffi-static.sh: no libffi-* directory after apt-get source" >&2; exit 1; }
flags="--prefix=$prefix --enable-exec-static-tramp --disable-docs --disable-multi-os-directory"
# CFLAGS given: libffi's configure then keeps its own -march guess out
# (a binary for the build machine's CPU only).
# shellcheck disable=SC2086 # $flags is a list of options
if ! (cd "$dir" && echo "+ ./configure $flags CFLAGS='-O2 -g'" && ./configure $flags CFLAGS='-O2 -g' &&
      echo "+ fficonfig.h: $(find . -name fficonfig.h -exec grep -h 'FFI_EXEC_STATIC_TRAMP' {} + | tr '\n' ' ')" &&
      make -j2 && $SUDO make install) >> "$log" 2>&1; then
    keep=${TMPDIR:-/tmp}/perftramp-ffi-static-build.log
    cp "$log" "$keep"
    [ -f "$dir/config.log" ] && cp "$dir/config.log" "${keep%.log}-config.log"
    echo "ffi-static.sh: building libffi with --enable-exec-static-tramp failed; log: $keep" >&2
    tail -n 30 "$keep" >&2
    exit 1
fi
# what was built, and how (the test checks the flag is really there)
$SUDO cp "$log" "$prefix/build.log"
grep -E '^\+ (./configure|fficonfig.h)' "$log" | $SUDO sh -c "cat > '$prefix/built-with'"
echo "ffi-static.sh: libffi $(basename "$dir" | sed 's/^libffi-//') with static trampolines in $prefix (log: $prefix/build.log)"
