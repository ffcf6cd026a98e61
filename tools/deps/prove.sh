#!/bin/sh
# SPDX-License-Identifier: MIT
# Proves that the installed toolchains work, by building and running a tiny
# program with each; stops at the first failure with the package to install.
#   prove.sh toolchains  native cc and c++ compile, link and run; for every
#                        foreign table in src/arch, <triple>-gcc links a
#                        static program that runs under qemu-<name>-static
#   prove.sh libffi      a program calls a function through ffi_call, linked
#                        against each architecture's libffi (the native
#                        shared one; Debian multiarch libffi.a, or
#                        $PT_CROSS_PREFIX/<name> for riscv64), and runs
# The architectures come from the tables (.name, .clang_target), as in
# tests/arch/run_foreign.sh; the Debian architecture names from
# dpkg-architecture.  Run by tools/install-deps.
set -eu
src=$(cd "$(dirname "$0")/../.." && pwd)
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
host=$(uname -m)
what=${1:?usage: prove.sh toolchains|libffi}

work=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-deps.XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() {
    echo "install-deps: $1" >&2
    [ ! -s "$work/err" ] || sed 's/^/    /' "$work/err" | head -n 8 >&2
    exit 1
}

# name triple, one line per architecture: a variant table of the same
# architecture (x86_64_near.c beside x86_64.c) has the same triple and
# needs no toolchain of its own, so the first table of a triple names it
table_field() { sed -n "s/^ *\\.$2 *= *\"\\([^\"]*\\)\".*/\\1/p" "$1" | head -n 1; }
arches=$(for f in "$src"/src/arch/*.c; do
    n=$(table_field "$f" name) t=$(table_field "$f" clang_target)
    [ -z "$n" ] || [ -z "$t" ] || echo "$n $t"
done | awk '!seen[$2]++')
[ -n "$arches" ] || fail "no architecture tables found in $src/src/arch"
debarch() { dpkg-architecture -qDEB_HOST_ARCH -t "$1" 2> /dev/null || echo "<debian-arch-of-$1>"; }
. "$src/tools/deps/cross_lib.sh"

cat > "$work/hello.c" << 'EOF'
#include <stdio.h>
int main(void) { printf("hello from %s\n", ARCH); return 0; }
EOF
cat > "$work/hello.cc" << 'EOF'
#include <iostream>
int main() { std::cout << "hello from c++\n"; return 0; }
EOF
# 6 * 7 through ffi_call: the library really works, not only links.
cat > "$work/ffi.c" << 'EOF'
#include <ffi.h>
#include <stdio.h>
static long mul(long a, long b) { return a * b; }
int main(void) {
    ffi_cif cif;
    ffi_type *args[2] = {&ffi_type_slong, &ffi_type_slong};
    long a = 6, b = 7, r = 0;
    void *values[2] = {&a, &b};
    if (ffi_prep_cif(&cif, FFI_DEFAULT_ABI, 2, &ffi_type_slong, args) != FFI_OK) return 1;
    ffi_call(&cif, FFI_FN(mul), &r, values);
    printf("ffi_call: %ld\n", r);
    return r != 42;
}
EOF

# build_run NAME RUNNER EXPECTED COMPILER SOURCE CFLAGS LIBS: compile,
# link, run (under RUNNER unless empty) and compare what it printed; on
# failure $step says which step, $work/err holds what the tool said.
step=
build_run() {
    step="compile"
    # shellcheck disable=SC2086 # CFLAGS, LIBS: lists of words
    $4 $6 -c -o "$work/$1.o" "$5" > "$work/err" 2>&1 || return 1
    step="link"
    # shellcheck disable=SC2086
    $4 $6 -o "$work/$1" "$work/$1.o" $7 > "$work/err" 2>&1 || return 1
    step="run"
    out=$($2 "$work/$1" 2> "$work/err") || return 1
    [ "$out" = "$3" ] || { echo "it printed '$out', not '$3'" > "$work/err"; return 1; }
}

proven=
case $what in
toolchains)
    cc=${CC:-cc}
    command -v "$cc" > /dev/null 2>&1 || fail "no C compiler ($cc): install gcc"
    build_run native "" "hello from $host" "$cc" "$work/hello.c" -DARCH='"'"$host"'"' "" ||
        case $step in
        compile) fail "$cc cannot compile a C program ($step failed): install libc6-dev" ;;
        *) fail "$cc: a C program failed at the $step step: install libc6-dev and gcc" ;;
        esac
    cxx=${CXX:-c++}
    command -v "$cxx" > /dev/null 2>&1 || fail "no C++ compiler ($cxx): install g++"
    build_run native_cxx "" "hello from c++" "$cxx" "$work/hello.cc" "" "" ||
        fail "$cxx: a C++ program failed at the $step step: install g++ (libstdc++-12-dev)"
    proven="$host (cc, c++)"
    while read -r name triple; do
        [ "$name" != "$host" ] || continue
        d=$(debarch "$triple")
        gcc=$triple-gcc qemu=$(cross_qemu "$name" "$triple")
        command -v "$gcc" > /dev/null 2>&1 || fail "$gcc not found: install gcc-$triple"
        command -v "$qemu" > /dev/null 2>&1 || fail "$qemu not found: install qemu-user-static"
        build_run "$name" "$qemu" "hello from $name" "$gcc" "$work/hello.c" "-static -DARCH=\"$name\"" "" ||
            case $step in
            compile | link) fail "$gcc cannot $step a program: install libc6-dev-$d-cross (gcc-$triple only recommends it)" ;;
            run) fail "a static $name program does not run under $qemu: reinstall qemu-user-static" ;;
            esac
        proven="$proven, $name"
    done << EOF
$arches
EOF
    echo "install-deps: toolchains proven: $proven (a static program built and run under qemu-<arch>-static)"
    ;;
libffi)
    cc=${CC:-cc}
    pkg-config --exists libffi 2> /dev/null || fail "pkg-config finds no libffi: install libffi-dev and pkg-config"
    build_run ffi_native "" "ffi_call: 42" "$cc" "$work/ffi.c" "$(pkg-config --cflags libffi)" "$(pkg-config --libs libffi)" ||
        fail "a program calling through libffi failed at the $step step: install libffi-dev"
    proven=$host
    while read -r name triple; do
        [ "$name" != "$host" ] || continue
        d=$(debarch "$triple")
        if grep -q "^[^#]*libffi-dev:$d\b" "$src/tools/deps/arch.txt"; then
            m=$(cross_multiarch "$triple")
            lib=/usr/lib/$m inc=/usr/include/$m hint="install libffi-dev:$d"
        else
            # no Debian package: tools/deps/arch.sh builds it from source
            lib=$prefix/$name/lib inc=$prefix/$name/include
            hint="tools/deps/arch.sh builds it (log: ${PT_DEPS_LOGDIR:-/var/log/perftramp-deps}/$name-libffi.log); to rebuild: rm -rf $prefix/$name; tools/install-deps"
        fi
        { [ -f "$lib/libffi.a" ] && [ -f "$inc/ffi.h" ]; } ||
            fail "no libffi for $name ($lib/libffi.a, $inc/ffi.h): $hint"
        # only ffi.h and ffitarget.h: a multiarch include directory must not
        # shadow the cross compiler's own C library headers
        mkdir -p "$work/$name-include"
        cp "$inc/ffi.h" "$inc/ffitarget.h" "$work/$name-include/"
        build_run "ffi_$name" "$(cross_qemu "$name" "$triple")" "ffi_call: 42" "$triple-gcc" "$work/ffi.c" \
            "-static -I$work/$name-include" "$lib/libffi.a" || fail "$name: a program calling through $lib/libffi.a failed at the $step step: $hint"
        proven="$proven $name"
    done << EOF
$arches
EOF
    echo "install-deps: libffi proven (ffi_call run) on $proven"
    ;;
*) fail "usage: prove.sh toolchains|libffi" ;;
esac
