#!/bin/bash
# SPDX-License-Identifier: MIT
# Real perf and gdb on a foreign architecture, in an emulated Debian machine
# (tools/guest).  Usage: tests/guest/perf_guest.sh ARCH (tests/guest/<arch>.sh
# are the make check entries).
#  1. Cross-builds the library for ARCH with its ordinary configure --host
#     (static programs: examples/tiny, the perftramp command, and
#     tests/perf/perf_workload.c with tests/guest/hidden_fp.S, whose functions
#     keep garbage in the frame-pointer register).
#  2. Boots ARCH's image (built and cached by tools/guest when absent) with
#     those as /payload and runs tests/guest/proofs.sh inside: perf map +
#     fp, jitdump + -k 1 + dwarf + inject, ELF arenas (plain record, and
#     attached with -p), samples on the trampoline's first instructions
#     with garbage in the frame pointer (only its FDE unwinds them), gdb bt.
#  3. Checks the guest's jitdump here too, with this host's perftramp check.
# A table whose in-process unwinder reads Arm EHABI tables (.ehabi) also
# gets the "ehabi" group: tests/arch/ehabi_unwind.cc, static and against a
# libperftramp.so, run in the machine (a C++ exception, backtrace(3),
# threads: arch.<arch>.ehabi-guest).
# Prints the guest's PROOF lines (arch.<arch>.<id>) and the times of each
# part.  PT_GUEST_TESTS=0 skips (repeated make check passes: sanitizers).
set -u
arch=${1:?usage: perf_guest.sh ARCH}
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
prefix=${PT_CROSS_PREFIX:-/opt/perftramp-cross}
# PT_GUEST_PROOFS: the groups to run (default all), e.g. "jitdump" for a
# mutation's killer
table=$(grep -l "^ *\.name *= *\"$arch\"" "$src"/src/arch/*.c 2> /dev/null | head -n 1)
ehabi=
[ -n "$table" ] && grep -q '^ *\.ehabi *= *1' "$table" && ehabi=ehabi
groups=${PT_GUEST_PROOFS:-fp jitdump elf gdb $ehabi}
IDS=
for g in $groups; do
    case $g in
    fp) IDS="$IDS tiny-perf-fp perf-fp" ;;
    jitdump) IDS="$IDS perf-jitdump-dwarf check check-host perf-jitdump-fdes" ;;
    elf) IDS="$IDS perf-elf perf-elf-fdes perf-elf-attach" ;;
    gdb) IDS="$IDS gdb-bt" ;;
    ehabi) IDS="$IDS ehabi-guest" ;;
    *) echo "FAIL: PT_GUEST_PROOFS: unknown group '$g' (fp jitdump elf gdb ehabi)"; exit 99 ;;
    esac
done
all_proofs() { for id in $IDS; do echo "PROOF: arch.$arch.$id $1 $2"; done; }
skip() {
    all_proofs not-run "$1"
    echo "SKIP: $1"
    exit 77
}
[ "${PT_GUEST_TESTS:-1}" = 0 ] && skip "PT_GUEST_TESTS=0"

table_field() {
    [ -n "$table" ] && sed -n "s/^ *\\.$1 *= *\"\\([^\"]*\\)\".*/\\1/p" "$table" | head -n 1
}
triple=$(table_field clang_target)
[ -n "$triple" ] || { echo "FAIL: no table named $arch in src/arch"; exit 1; }
for tool in "$triple-gcc" ${ehabi:+"$triple-g++"} mmdebstrap cpio timeout; do
    command -v "$tool" > /dev/null 2>&1 || skip "$tool missing (tools/install-deps installs it)"
done
host_pt=$build/tools/perftramp
[ -x "$host_pt" ] || { echo "FAIL: $host_pt not built"; exit 1; }

work=$(mktemp -d "${TMPDIR:-/tmp}/pt-guest.XXXXXX") || exit 99
[ -n "${PT_GUEST_KEEP:-}" ] && echo "# work directory: $work"
[ -n "${PT_GUEST_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# ---- 1. the cross build: the library's sources compiled as
# tests/arch/run_foreign.sh does (the host's config.h: the same glibc on
# every Debian architecture), static programs
t0=$(date +%s)
. "$src/tools/deps/cross_lib.sh"
if [ -f "$prefix/$arch/lib/libffi.a" ]; then ffilib=$prefix/$arch/lib ffiinc=$prefix/$arch/include
else m=$(cross_multiarch "$triple"); ffilib=/usr/lib/$m ffiinc=/usr/include/$m; fi
[ -f "$ffilib/libffi.a" ] || skip "$ffilib/libffi.a missing (tools/install-deps installs libffi for $arch)"
[ -f "$build/config.h" ] || { echo "FAIL: $build/config.h missing (configure first)"; exit 1; }
b=$work/build
mkdir -p "$b/inc" "$b/obj"
# only ffi.h and ffitarget.h: a multiarch include directory must not shadow
# the cross toolchain's own libc headers
cp "$ffiinc/ffi.h" "$ffiinc/ffitarget.h" "$b/inc/"
cc=$triple-gcc
cxx=$triple-g++
case $arch in arm)
    cc="$src/tests/guest/cc_eh_frame.sh $triple-gcc"
    cxx="$src/tests/guest/cc_eh_frame.sh $triple-g++" ;;
esac
# -fasynchronous-unwind-tables: Debian's riscv64 gcc has them off;
# -mbackchain: s390x frames chained for perf's and gdb's frame walks;
# -marm -mapcs-frame: 32-bit Arm code in A32 with APCS frames, the only
# user frames the kernel's perf_callchain_user walks (Thumb code keeps its
# frame pointer in r7, which it never reads: tests/guest/fp_control.c
# shows 0 complete chains so), and its CFI in .eh_frame, the only place
# perf's libunwind reads (tests/guest/cc_eh_frame.sh); -fPIC
# -fvisibility=hidden: the same objects make the libperftramp.so the
# ehabi group runs against
extra=
case $arch in
s390x) extra=-mbackchain ;;
arm) extra="-marm -mapcs-frame -fPIC -fvisibility=hidden" ;;
esac
flags="-std=gnu11 -O2 -g -static -pthread -fasynchronous-unwind-tables -fno-omit-frame-pointer
       -fno-optimize-sibling-calls $extra -include $build/config.h -I$build -I$src/include -I$src/src -I$b/inc"
# --eh-frame-hdr: gcc links -static programs without .eh_frame_hdr, and
# perf's DWARF unwinder finds a file's FDEs only through it
libs="-L$ffilib -lffi -ldl -Wl,--eh-frame-hdr"
# shellcheck disable=SC2086 # flags and libs are lists
if ! { (cd "$b/obj" && $cc $flags -c "$src"/src/*/*.c) &&
       $cc $flags -o "$b/perftramp" "$src"/tools/*.c "$b"/obj/*.o $libs &&
       $cc $flags -o "$b/tiny" "$src"/examples/tiny/*.c "$b"/obj/*.o $libs &&
       $cc $flags -o "$b/fp_control" "$src/tests/guest/fp_control.c" -Wl,--eh-frame-hdr &&
       $cc $flags -DPT_HIDDEN_FP -o "$b/perf_workload" "$src/tests/perf/perf_workload.c" \
           "$src/tests/guest/hidden_fp.S" "$b"/obj/*.o $libs; } > "$b/build.log" 2>&1; then
    echo "FAIL: cross build for $arch ($cc)"
    tail -n 30 "$b/build.log" | sed 's/^/#   /'
    all_proofs failed "the cross build failed"
    exit 1
fi
# 32-bit Arm: the plain-C control as Debian builds armhf code by default
# (Thumb-2, r7 frames, unwind tables in .ARM.exidx and .debug_frame only)
case $arch in arm)
    # shellcheck disable=SC2086 # a list
    "$triple-gcc" -std=gnu11 -O2 -g -static -fasynchronous-unwind-tables -fno-omit-frame-pointer \
        -fno-optimize-sibling-calls -o "$b/fp_control_default" "$src/tests/guest/fp_control.c" -Wl,--eh-frame-hdr \
        >> "$b/build.log" 2>&1 || { echo "FAIL: fp_control_default for $arch"; exit 1; } ;;
esac
# the ehabi group: the EHABI test program, static and against a shared
# library linked from the same objects with the library's version scripts
case " $groups " in *" ehabi "*)
    cxxflags="-std=gnu++17 -O2 -g -pthread $extra -I$build -I$src/include"
    # shellcheck disable=SC2086 # lists
    if ! { $cxx $cxxflags -static -o "$b/ehabi_unwind" "$src/tests/arch/ehabi_unwind.cc" "$b"/obj/*.o \
               "$ffilib/libffi.a" -ldl &&
           "$triple-gcc" -shared -o "$b/libperftramp.so.0" -Wl,-soname,libperftramp.so.0 \
               -Wl,--version-script="$src/src/api/libperftramp.map" \
               -Wl,--version-script="$src/src/api/libperftramp-ehabi.map" "$b"/obj/*.o -L"$ffilib" -lffi -ldl -pthread &&
           ln -sf libperftramp.so.0 "$b/libperftramp.so" &&
           $cxx $cxxflags -o "$b/ehabi_shared" "$src/tests/arch/ehabi_unwind.cc" -L"$b" -lperftramp -ldl; } \
            >> "$b/build.log" 2>&1; then
        echo "FAIL: the ehabi programs for $arch"
        tail -n 30 "$b/build.log" | sed 's/^/#   /'
        all_proofs failed "the cross build failed"
        exit 1
    fi ;;
esac
t1=$(date +%s)

# ---- the payload
p=$work/payload
mkdir -p "$p/bin"
cp "$b/perftramp" "$b/tiny" "$b/perf_workload" "$b/fp_control" "$p/bin/"
[ -f "$b/fp_control_default" ] && cp "$b/fp_control_default" "$p/bin/"
if [ -f "$b/ehabi_unwind" ]; then
    mkdir -p "$p/lib"
    cp "$b/ehabi_unwind" "$b/ehabi_shared" "$p/bin/"
    cp "$b/libperftramp.so.0" "$p/lib/"
fi
cp "$src/tests/guest/proofs.sh" "$p/run"
cp "$src/tests/lib/chain_stats.awk" "$p/"
echo "$arch" > "$p/arch"
echo "$groups" > "$p/groups"
# a tenth of the demo's work: TCG runs it about 20 times slower
sed 's/^longest(100000);/longest(10000);/' "$src/examples/tiny/hot.tiny" > "$p/hot.tiny"
# The offsets where the trampoline's frame is not set up: the CFI rows whose
# CFA rule is the entry's (before the frame is built, after it is torn down)
"$host_pt" arch "$arch" --raw "$work/raw" > "$work/arch.txt" || { echo "FAIL: perftramp arch $arch"; exit 1; }
end=$(sed -n 's/^trampoline: \([0-9]*\) bytes of instructions.*/\1/p' "$work/arch.txt")
first= prev= edges=
while read -r off _ rule _; do # rows.txt: "0x8 cfa r31+16 r29=c-16 ..."
    [ -n "$first" ] || first=$rule
    [ -n "$prev" ] && edges="$edges$prev-$(printf %x "$off") "
    prev=
    [ "$rule" = "$first" ] && prev=$off
done < "$work/raw/rows.txt"
[ -n "$prev" ] && edges="$edges$prev-$(printf %x "$end")"
echo "$edges" > "$p/edges"
[ -s "$p/edges" ] || { echo "FAIL: no entry rows in $work/raw/rows.txt"; exit 1; }

# ---- 2. the guest
out=$work/guest.out
t2=$(date +%s)
"$src/tools/guest" image "$arch" > "$work/image" 2> "$work/image.err" || {
    cat "$work/image.err"; all_proofs failed "tools/guest image $arch failed"; exit 1; }
cat "$work/image.err"
t3=$(date +%s)
"$src/tools/guest" run "$arch" "$p" > "$out" 2> "$work/run.err"
rc=$?
t4=$(date +%s)
cat "$out" "$work/run.err"
[ "$rc" -eq 0 ] || echo "# the guest's payload exited $rc"

# ---- 3. the guest's dump, checked by this host's perftramp
dump=$(ls "$p"/out/jit-*.dump 2> /dev/null | head -n 1)
case " $IDS " in *" check-host "*) ;; *) dump=skip ;; esac
if [ "$dump" = skip ]; then :
elif [ -n "$dump" ] && "$host_pt" check "$dump" > "$work/check.out" 2>&1; then
    echo "PROOF: arch.$arch.check-host proven perftramp check on $(uname -m) reads the $arch guest's dump: $(tail -n 1 "$work/check.out")"
else
    echo "PROOF: arch.$arch.check-host failed $( [ -n "$dump" ] && tail -n 2 "$work/check.out" | tr '\n' ' ' || echo 'no dump came back')"
fi
[ -n "${PT_GUEST_SAMPLES:-}" ] && mkdir -p "$PT_GUEST_SAMPLES" && cp "$p"/out/*.script "$p/out/gdb.out" "$PT_GUEST_SAMPLES/" 2> /dev/null

# every proof must have come back
bad=0
for id in $IDS; do
    line=$(grep -E "^(PROOF: |NA: )arch.$arch.$id " "$out" 2> /dev/null | head -n 1)
    [ "$id" = check-host ] && continue
    if [ -z "$line" ]; then
        echo "PROOF: arch.$arch.$id failed the guest never reported it"
        bad=1
    fi
done
grep -q "^PROOF: arch.$arch.[a-z-]* failed" "$out" && bad=1
echo "guest $arch: cross build $((t1 - t0)) s, image $((t3 - t2)) s, boot + proofs $((t4 - t3)) s"
[ "$rc" -eq 0 ] && [ "$bad" -eq 0 ] || exit 1
