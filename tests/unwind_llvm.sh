#!/bin/sh
# SPDX-License-Identifier: MIT
# PERFTRAMP_UNWIND with LLVM's libunwind as the process unwinder: builds
# tests/check_unwind.c against it (linked first, so its _Unwind_Backtrace
# and __register_frame stand in for libgcc's) and runs the walks.
# perftramp must detect it (__unw_add_dynamic_eh_frame_section /
# __unw_add_dynamic_fde) and must not feed its one-FDE __register_frame a
# whole section.  SKIP when LLVM's libunwind or Check is not installed.
set -u
: "${PT_SRCDIR:?}" "${PT_BUILDDIR:?}"
cc=${PT_CC:-cc}
lib=
for f in /usr/lib/llvm-*/lib/libunwind.so.1; do [ -f "$f" ] && lib=$f; done  # any installed LLVM (the last in glob order)
[ -n "$lib" ] || { echo "SKIP: LLVM libunwind (libunwind-<N>) is not installed"; exit 77; }
pkg-config --exists check 2>/dev/null || { echo "SKIP: Check is not installed"; exit 77; }
core="$PT_BUILDDIR/.libs/libperftramp_core.a"
[ -f "$core" ] || { echo "FAIL: $core not built"; exit 1; }
# a sanitizer build's objects need the sanitizer's runtime and flags, which
# the plain build of this test does not have: the plain build runs it
if nm "$core" 2>/dev/null | grep -qE '__(asan|tsan|ubsan)_'; then
    echo "SKIP: sanitizer build (this test runs in the plain build)"; exit 77
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-llvm-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
if ! $cc -DPT_UNWIND_ONLY_WALKS -I"$PT_SRCDIR/include" -I"$PT_SRCDIR/src" -I"$PT_BUILDDIR" \
    -g -O2 -fno-omit-frame-pointer -fasynchronous-unwind-tables -pthread \
    -o "$tmp/check_unwind_llvm" "$PT_SRCDIR/tests/check_unwind.c" "$lib" "$core" \
    $(pkg-config --cflags --libs check libffi) -ldl -Wl,-rpath,"$(dirname "$lib")" 2>"$tmp/cc.err"; then
    echo "FAIL: building against $lib:"; cat "$tmp/cc.err"; exit 1
fi
# the unwinder in use must really be LLVM's
ldd "$tmp/check_unwind_llvm" | grep -q "$(dirname "$lib")/libunwind.so.1" || { echo "FAIL: not linked to $lib"; exit 1; }
echo "unwinder: $lib"
# not exec: the EXIT trap must still remove $tmp
"$tmp/check_unwind_llvm"
exit $?
