#!/bin/sh
# SPDX-License-Identifier: MIT
# Builds CPython 3.13.5 twice from the same source and flags: stock (the
# control) and patched (examples/cpython/cpython-perftramp.patch,
# ./configure --with-perftramp), each at most once per machine.
#   examples/cpython/build.sh [--host=TRIPLE] [stock] [patched]   (default: both)
# Prints "stock DIR" and "patched DIR": DIR/python runs in place.  Exit 1
# with the log's tail when a build fails, 2 when the source cannot be had.
#
# Flags: -fno-omit-frame-pointer, and -mno-omit-leaf-frame-pointer where
# the compiler has it (CPython's advice for perf; test_perf_profiler runs
# its frame-pointer tests only on such a build).  Extension modules that
# neither test_perf_profiler, test_perfmaps, regrtest nor the benchmarks
# import are left out of both builds ($skip: about half the build time).
# The patch changes configure.ac only: autoconf and autoheader regenerate
# configure and pyconfig.h.in (Debian 12's autoconf 2.71 and CPython's
# aclocal.m4 reproduce the shipped files byte for byte from the stock
# configure.ac), so the patch carries no generated lines.
#
# The patched interpreter links libperftramp.so.0 dynamically, built
# against this build tree's library and header; it runs against whatever
# LD_LIBRARY_PATH names (the tests: $PT_BUILDDIR/.libs), so a rebuilt or
# mutated library is tested without rebuilding CPython.  No RUNPATH.
#
# Cache: $PT_CPYTHON_CACHE, else /var/cache/perftramp-cpython as root,
# else ~/.cache/perftramp-cpython/builds (a user also finds root's builds
# there, unless PT_CPYTHON_CACHE names a cache).  DIR = <kind>-<key>, key = the SHA-256 of
# DIR/recipe: the source's line (tools/deps/cpython-source.sh), the
# patch's SHA-256 (patched only), host, compiler, flags, configure line,
# skipped modules and $recipe (bump it when the steps below change).
# DIR/ready marks a finished build; DIR/build.log is its log.  ~210 MB each.
#
# Cross builds: --host=TRIPLE builds the native stock interpreter first,
# as the build Python (--with-build-python), then TRIPLE-gcc's; the
# patched one finds the TRIPLE build of perftramp through
# $PT_CPYTHON_PKG_CONFIG_LIBDIR (a directory holding its perftramp.pc).
set -eu
recipe=1
S=$(cd "${PT_SRCDIR:-$(dirname "$0")/../..}" && pwd)
B=$(cd "${PT_BUILDDIR:-$S}" && pwd)
host=
kinds=
for a; do
    case $a in
    --host=*) host=${a#--host=} ;;
    stock | patched) kinds="$kinds $a" ;;
    *) echo "usage: $0 [--host=TRIPLE] [stock] [patched]" >&2; exit 1 ;;
    esac
done
kinds=${kinds:-stock patched}
die() { echo "examples/cpython/build.sh: $*" >&2; exit 1; }

if [ -z "${PT_CPYTHON_PREFIX:-}" ]; then
    if [ "$(id -u)" -eq 0 ] || [ -f /opt/perftramp-cpython/source ]; then PT_CPYTHON_PREFIX=/opt/perftramp-cpython
    else PT_CPYTHON_PREFIX=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-cpython; fi
fi
export PT_CPYTHON_PREFIX
# where builds are looked for: the cache, and root's unless one was named
caches=${PT_CPYTHON_CACHE:-/var/cache/perftramp-cpython}
if [ -z "${PT_CPYTHON_CACHE:-}" ]; then
    if [ "$(id -u)" -eq 0 ]; then PT_CPYTHON_CACHE=/var/cache/perftramp-cpython
    else PT_CPYTHON_CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-cpython/builds; fi
fi
srclog=$(mktemp)
if ! sh "$S/tools/deps/cpython-source.sh" > "$srclog" 2>&1; then
    tail -n 5 "$srclog" >&2
    rm -f "$srclog"
    echo "examples/cpython/build.sh: the CPython source cannot be had (tools/deps/cpython-source.sh failed)" >&2
    exit 2
fi
rm -f "$srclog"
src=$PT_CPYTHON_PREFIX/Python-3.13.5
patchf=$S/examples/cpython/cpython-perftramp.patch
native=$(cc -dumpmachine)

# Not built, in both: what no test or benchmark here imports, and every
# module that needs a -dev package (so both builds are the same on every
# machine).  The big ones: _decimal (libmpdec), _ctypes, the CJK codecs,
# unicodedata, expat, sqlite, ssl, tkinter, curses, the HACL* hashes but
# _sha2 (random needs it), the C API test modules but _testinternalcapi
# (test_perfmaps and test_pre_fork_compile need it).
skip="_asyncio _bisect _blake2 _bz2 _codecs_cn _codecs_hk _codecs_iso2022 _codecs_jp _codecs_kr
_codecs_tw _contextvars _csv _ctypes _ctypes_test _curses _curses_panel _datetime _dbm _decimal
_elementtree _gdbm _hashlib _heapq _interpchannels _interpqueues _interpreters _lsprof _lzma _md5
_multibytecodec _multiprocessing _pickle _posixshmem _queue _sha1 _sha3 _sqlite3 _ssl _statistics
_testbuffer _testcapi _testclinic _testclinic_limited _testexternalinspection _testimportmultiple
_testlimitedcapi _testmultiphase _testsinglephase _tkinter _uuid _xxtestfuzz _zoneinfo array cmath
mmap pyexpat readline syslog termios unicodedata xxlimited xxlimited_35 xxsubtype zlib"
# shellcheck disable=SC2116,SC2086 # one line, single spaces (the recipe)
skip=$(echo $skip)

# build KIND: DIR on stdout, built when absent ($host: for that triple)
build() {
    kind=$1
    CC=${host:+$host-}gcc
    flags=-fno-omit-frame-pointer
    if $CC -mno-omit-leaf-frame-pointer -c -x c /dev/null -o /dev/null 2> /dev/null; then
        flags="$flags -mno-omit-leaf-frame-pointer"
    fi
    conf=
    [ -z "$host" ] || conf=" --build=$native --host=$host --with-build-python=$build_python/python ac_cv_file__dev_ptmx=yes ac_cv_file__dev_ptc=no ac_cv_buggy_getaddrinfo=no"
    [ "$kind" = stock ] || conf="$conf --with-perftramp"
    recipe_text=$(printf '%s\n' "recipe $recipe" "source $(cat "$PT_CPYTHON_PREFIX/source")" \
        "patch $([ "$kind" = stock ] && echo none || sha256sum < "$patchf" | cut -d' ' -f1)" \
        "host ${host:-$native}" "cc $($CC --version | head -n 1)" "cflags $flags" "configure$conf" "skip $skip")
    key=$(printf '%s\n' "$recipe_text" | sha256sum | cut -c1-12)
    for c in "$PT_CPYTHON_CACHE" $caches; do
        [ -f "$c/$kind-$key/ready" ] && { echo "$c/$kind-$key"; return; }
    done
    mkdir -p "$PT_CPYTHON_CACHE"
    dir=$PT_CPYTHON_CACHE/$kind-$key
    exec 9> "$dir.lock"
    flock 9 # another build of the same key finishes first
    [ -f "$dir/ready" ] && { echo "$dir"; return; }
    echo "examples/cpython/build.sh: building the $kind CPython 3.13.5 for ${host:-$native} in $dir" >&2
    rm -rf "$dir"
    cp -R "$src" "$dir"
    printf '%s\n' "$recipe_text" > "$dir/recipe"
    log=$dir/build.log
    (
        cd "$dir"
        # a cross build sees only the target's .pc files: the build
        # machine's (zlib, readline...) name libraries that do not exist
        # for $host (binascii then links -lz and fails)
        [ -z "$host" ] || export PKG_CONFIG_LIBDIR="${PT_CPYTHON_PKG_CONFIG_LIBDIR:-}"
        if [ "$kind" = patched ]; then
            patch -p1 --quiet --no-backup-if-mismatch < "$patchf" && autoconf && autoheader || exit 1
            if [ -z "$host" ]; then
                # this build tree's library, uninstalled
                mkdir -p perftramp-pc
                printf '%s\n' "Name: perftramp" "Description: perftramp, uninstalled" \
                    "Version: $(sed -n 's/^Version: //p' "$B/perftramp.pc")" \
                    "arch=$(sed -n 's/^arch=//p' "$B/perftramp.pc")" \
                    "Libs: -L$B/.libs -lperftramp" "Cflags: -I$S/include -I$B" > perftramp-pc/perftramp.pc
                export PKG_CONFIG_PATH="$dir/perftramp-pc"
                # ./python runs during the build
                export LD_LIBRARY_PATH="$B/.libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
            fi
        fi
        for m in $skip; do export "py_cv_module_$m=n/a"; done
        # shellcheck disable=SC2086 # $conf is a list of arguments
        ./configure $conf CC="$CC" CFLAGS="$flags" || exit 1
        grep -q '^#define PY_HAVE_PERF_TRAMPOLINE 1' pyconfig.h || [ "$kind" = stock ] ||
            { echo "configure --with-perftramp did not define PY_HAVE_PERF_TRAMPOLINE"; exit 1; }
        nice -n 10 make -j"$(nproc)" || exit 1
    ) > "$log" 2>&1 || {
        tail -n 25 "$log" >&2
        die "building the $kind CPython failed (log: $log)"
    }
    # what running it in place does not need: objects, the static library
    # and the other programs (~180 of ~390 MB)
    find "$dir" -name '*.o' -delete
    rm -rf "$dir/perftramp-pc" "$dir"/libpython*.a "$dir/Programs/_testembed" "$dir/Programs/_freeze_module" \
        "$dir/Programs/_bootstrap_python"
    touch "$dir/ready"
    echo "$dir"
}

build_python=
if [ -n "$host" ]; then
    # the native stock interpreter is the build Python
    h=$host
    host=
    build_python=$(build stock)
    host=$h
fi
for kind in $kinds; do
    # (a failed build's exit status would be lost in echo's argument)
    dir=$(build "$kind") || exit 1
    echo "$kind $dir"
done
