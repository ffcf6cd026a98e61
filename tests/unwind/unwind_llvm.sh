#!/bin/sh
# SPDX-License-Identifier: MIT
# PERFTRAMP_UNWIND with LLVM's libunwind as the process unwinder: builds
# tests/unwind/check_unwind.c against it (linked first, so its _Unwind_Backtrace
# and __register_frame stand in for libgcc's) and runs the walks.
# perftramp must detect it (__unw_add_dynamic_eh_frame_section /
# __unw_add_dynamic_fde) and must not feed its one-FDE __register_frame a
# whole section.  SKIP when LLVM's libunwind or Check is not installed.
set -u
: "${PT_SRCDIR:?}" "${PT_BUILDDIR:?}"
cc=${PT_CC:-cc}
lib=
for f in /usr/lib/llvm-*/lib/libunwind.so.1; do [ -f "$f" ] && lib=$f; done  # any installed LLVM (the last in glob order)
id=output.llvm-libunwind  # printed by check_unwind.c when it runs (PT_UNWIND_PROOF_ID)
skip() { echo "PROOF: $id not-run $*"; echo "SKIP: $*"; exit 77; }
fail() { echo "PROOF: $id failed $*"; echo "FAIL: $*"; exit 1; }
[ -n "$lib" ] || skip "LLVM libunwind (libunwind-<N>) is not installed"
pkg-config --exists check 2>/dev/null || skip "Check is not installed"
core="$PT_BUILDDIR/.libs/libperftramp_core.a"
[ -f "$core" ] || fail "$core not built"
# a sanitizer build's objects need the sanitizer's runtime and flags, which
# the plain build of this test does not have: the plain build runs it
if nm "$core" 2>/dev/null | grep -qE '__(asan|tsan|ubsan)_'; then
    skip "sanitizer build (this test runs in the plain build)"
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-llvm-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
# shellcheck disable=SC2046
if ! $cc -DPT_UNWIND_ONLY_WALKS -DPT_UNWIND_PROOF_ID="\"$id\"" -I"$PT_SRCDIR/include" -I"$PT_SRCDIR/src" -I"$PT_BUILDDIR" \
    -g -O2 -fno-omit-frame-pointer -fasynchronous-unwind-tables -pthread \
    -o "$tmp/check_unwind_llvm" "$PT_SRCDIR/tests/unwind/check_unwind.c" "$lib" "$core" \
    $(pkg-config --cflags --libs check libffi) -ldl -Wl,-rpath,"$(dirname "$lib")" 2>"$tmp/cc.err"; then
    cat "$tmp/cc.err"; fail "building against $lib"
fi
# the unwinder in use must really be LLVM's
ldd "$tmp/check_unwind_llvm" | grep -q "$(dirname "$lib")/libunwind.so.1" || fail "not linked to $lib"
echo "unwinder: $lib"
# not exec: the EXIT trap must still remove $tmp
"$tmp/check_unwind_llvm"
exit $?
