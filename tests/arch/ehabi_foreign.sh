#!/bin/sh
# SPDX-License-Identifier: MIT
# PERFTRAMP_UNWIND where libgcc reads Arm EHABI tables (every table with
# .ehabi set: 32-bit Arm), under qemu-<name>-static:
#   1. tests/arch/ehabi_unwind.cc linked statically with the library's
#      objects: a C++ exception through a trampoline, backtrace(3), and both
#      from threads and a SIGPROF handler while other threads add arenas
#      (PROOF: arch.<name>.ehabi-cxx, -backtrace, -threads);
#   2. the same program against a libperftramp.so linked from the same
#      objects with the library's version scripts, run with the cross
#      glibc: the dynamic linker binds libgcc's __gnu_Unwind_Find_exidx
#      reference to the library's (arch.<name>.ehabi-shared); without the
#      threads part, which qemu-user 7.2 cannot run for any dynamically
#      linked C++ program (4 threads throwing and calling backtrace(3), no
#      perftramp: SIGSEGV, seen here); the emulated machine runs it;
#   3. tests/arch/ehabi_dlopen.c: a dlopen'ed library, which libgcc never
#      asks, refuses PERFTRAMP_UNWIND with ENOTSUP (arch.<name>.ehabi-dlopen).
# A missing cross compiler or qemu is not-run (exit 77), and so is
# PT_ARCH_TESTS=0 (the sanitizer pass: these programs are cross-built,
# uninstrumented).
set -u
ulimit -c 0 # qemu-user writes a core file for each aborting control
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-ehabi.XXXXXX") || exit 99
[ -n "${PT_ARCH_KEEP:-}" ] && echo "# work directory: $work"
[ -n "${PT_ARCH_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
ids="ehabi-cxx ehabi-backtrace ehabi-threads ehabi-shared ehabi-dlopen"

tables=$(grep -l '^ *\.ehabi *= *1' "$src"/src/arch/*.c)
[ -n "$tables" ] || { echo "SKIP: no table reads EHABI"; exit 77; }
if [ "${PT_ARCH_TESTS:-1}" = 0 ]; then
    for f in $tables; do
        name=$(sed -n 's/^ *\.name *= *"\([^"]*\)".*/\1/p' "$f" | head -n 1)
        for id in $ids; do echo "PROOF: arch.$name.$id not-run PT_ARCH_TESTS=0"; done
    done
    echo "SKIP: PT_ARCH_TESTS=0"
    exit 77
fi
config=
[ -f "$build/config.h" ] && config="-include $build/config.h"
ran=0 bad=0
for f in $tables; do
    name=$(sed -n 's/^ *\.name *= *"\([^"]*\)".*/\1/p' "$f" | head -n 1)
    triple=$(sed -n 's/^ *\.clang_target *= *"\([^"]*\)".*/\1/p' "$f" | head -n 1)
    all() { for id in $ids; do echo "PROOF: arch.$name.$id $1 $2"; done; }
    missing=
    for tool in "$triple-gcc" "$triple-g++" "qemu-$name-static"; do
        command -v "$tool" > /dev/null 2>&1 || missing="$missing $tool"
    done
    ffilib=/usr/lib/$triple ffiinc=/usr/include/$triple
    [ -f "$prefix/$name/lib/libffi.a" ] && ffilib=$prefix/$name/lib ffiinc=$prefix/$name/include
    [ -f "$ffilib/libffi.a" ] || missing="$missing $ffilib/libffi.a"
    if [ -n "$missing" ]; then
        all not-run "missing:$missing (tools/install-deps: tools/deps/arch.txt, tools/deps/ehabi.txt)"
        continue
    fi
    w=$work/$name
    mkdir -p "$w/obj" "$w/inc"
    cp "$ffiinc/ffi.h" "$ffiinc/ffitarget.h" "$w/inc/"
    flags="-O2 -g -pthread -fPIC -fvisibility=hidden $config -I$build -I$src/include -I$src/src -I$w/inc"
    t0=$(date +%s)
    # shellcheck disable=SC2086 # flags: a list
    if ! { (cd "$w/obj" && "$triple-gcc" -std=gnu11 $flags -c "$src"/src/arch/*.c "$src"/src/emit/*.c \
                "$src"/src/mem/*.c "$src"/src/outputs/*.c "$src"/src/api/*.c) &&
           "$triple-g++" -std=gnu++17 $flags -static -o "$w/static" "$src/tests/arch/ehabi_unwind.cc" \
               "$w"/obj/*.o "$ffilib/libffi.a" -ldl &&
           "$triple-gcc" -shared -o "$w/libperftramp.so.0" -Wl,-soname,libperftramp.so.0 \
               -Wl,--version-script="$src/src/api/libperftramp.map" \
               -Wl,--version-script="$src/src/api/libperftramp-ehabi.map" "$w"/obj/*.o -L"$ffilib" -lffi -ldl -pthread &&
           ln -sf libperftramp.so.0 "$w/libperftramp.so" &&
           "$triple-g++" -std=gnu++17 $flags -o "$w/shared" "$src/tests/arch/ehabi_unwind.cc" -L"$w" -lperftramp -ldl &&
           "$triple-gcc" -std=gnu11 $flags -o "$w/dlopen" "$src/tests/arch/ehabi_dlopen.c" -ldl; } > "$w/build.log" 2>&1; then
        sed 's/^/#   /' "$w/build.log" | tail -n 30
        all failed "the cross build failed"
        bad=$((bad + 1))
        continue
    fi
    t1=$(date +%s)
    ran=$((ran + 1))
    # the static program
    timeout 300 "qemu-$name-static" "$w/static" > "$w/static.out" 2>&1
    rc=$?
    sed "s/^/# $name static: /" "$w/static.out"
    # the control: the same throw without PERFTRAMP_UNWIND must end in
    # std::terminate, SIGABRT (qemu-user re-raises it: exit 134)
    timeout 120 "qemu-$name-static" "$w/static" control > "$w/control.out" 2>&1
    crc=$?
    sed "s/^/# $name control: /" "$w/control.out"
    for part in cxx backtrace threads; do
        v=$(sed -n "s/^proof: $part //p" "$w/static.out" | head -n 1)
        [ -n "$v" ] || v="failed the program printed no verdict (exit $rc)"
        if [ $part = cxx ]; then
            case $v in
            proven*) [ $crc -eq 134 ] && v="$v; the control without unwind tables ends in std::terminate (SIGABRT)" ||
                v="failed the control without unwind tables exited $crc, not with SIGABRT (134): $(tail -n 1 "$w/control.out")" ;;
            esac
        fi
        echo "PROOF: arch.$name.ehabi-$part $v (static, qemu-$name-static)"
        case $v in proven*) ;; *) bad=$((bad + 1)) ;; esac
    done
    # the shared library, with the cross C library's dynamic linker
    sysroot=/usr/$triple
    timeout 300 "qemu-$name-static" -L "$sysroot" -E LD_LIBRARY_PATH="$w:$ffilib:$sysroot/lib" \
        "$w/shared" shared nothreads > "$w/shared.out" 2>&1
    src_rc=$?
    sed "s/^/# $name shared: /" "$w/shared.out"
    shared_ok=$(grep -c '^proof: [a-z]* proven' "$w/shared.out")
    if [ "$src_rc" -eq 0 ] && [ "$shared_ok" -eq 3 ]; then
        echo "PROOF: arch.$name.ehabi-shared proven against libperftramp.so: $(sed -n 's/^proof: shared proven //p' "$w/shared.out"); the C++ exception and backtrace(3) as statically linked (3/3)"
    else
        echo "PROOF: arch.$name.ehabi-shared failed against libperftramp.so: $shared_ok/3 parts proven, exit $src_rc"
        bad=$((bad + 1))
    fi
    timeout 120 "qemu-$name-static" -L "$sysroot" -E LD_LIBRARY_PATH="$ffilib:$sysroot/lib" \
        "$w/dlopen" "$w/libperftramp.so.0" > "$w/dlopen.out" 2>&1
    v=$(sed -n 's/^proof: dlopen //p' "$w/dlopen.out" | head -n 1)
    [ -n "$v" ] || v="failed the program printed no verdict: $(tail -n 1 "$w/dlopen.out")"
    echo "PROOF: arch.$name.ehabi-dlopen $v"
    case $v in proven*) ;; *) bad=$((bad + 1)) ;; esac
    echo "# $name: build $((t1 - t0)) s, runs $(($(date +%s) - t1)) s"
done
[ $bad -eq 0 ] || exit 1
[ $ran -gt 0 ] || { echo "SKIP: no cross C++ compiler or qemu for an EHABI table"; exit 77; }
exit 0
