#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check on jitdumps written by perftramp on other architectures:
# examples/hello cross-built statically for s390x (big-endian: the dump,
# its .eh_frame and its code are in the other byte order) and aarch64, run
# under qemu-<arch>-static with PERFTRAMP=jitdump.  The dump must be valid
# and warning-free apart from the byte-order note, name the producer's
# architecture, and a corrupted copy must be rejected.
# Per arch: PROOF: check.foreign-dump.<arch> (docs/testing.md).
set -u
: "${PT_BUILDDIR:=.}" "${PT_SRCDIR:=.}"
PT="$PT_BUILDDIR/tools/perftramp"
[ -x "$PT" ] || { echo "FAIL: $PT not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cli_foreign.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
. "$PT_SRCDIR/tests/lib/cli_lib.sh"

ran=0
for spec in s390x:s390x-linux-gnu:foreign aarch64:aarch64-linux-gnu:native; do
    arch=${spec%%:*} rest=${spec#*:}
    triple=${rest%%:*} order=${rest#*:}
    cc=$triple-gcc
    ffi=/usr/lib/$triple/libffi.a
    if ! command -v "$cc" >/dev/null 2>&1 || ! command -v "qemu-$arch-static" >/dev/null 2>&1 || [ ! -f "$ffi" ]; then
        echo "note: $arch: $cc, qemu-$arch-static or $ffi missing (tools/deps/arch.*)"
        echo "PROOF: check.foreign-dump.$arch not-run $cc, qemu-$arch-static or $ffi missing"
        continue
    fi
    fail_before=$fail
    mkdir "$work/$arch"
    # the library sources, as tests/arch/run_foreign.sh builds them
    if ! "$cc" -std=c11 -O1 -static -D_GNU_SOURCE -I"$PT_SRCDIR/include" -I"$PT_SRCDIR/src" -I"$PT_BUILDDIR" \
            "$PT_SRCDIR"/src/*/*.c "$PT_SRCDIR/examples/hello.c" "$ffi" -pthread -ldl \
            -o "$work/$arch/hello" > "$work/$arch/build.log" 2>&1; then
        echo "FAIL: $arch: cross build of examples/hello"; grep -v "statically linked" "$work/$arch/build.log" | head; fail=1
        echo "PROOF: check.foreign-dump.$arch failed cross build of examples/hello"
        continue
    fi
    (cd "$work/$arch" && PERFTRAMP=jitdump JITDUMPDIR="$work/$arch" "qemu-$arch-static" ./hello) > "$work/$arch/run.log" 2>&1 ||
        { echo "FAIL: $arch: hello under qemu"; cat "$work/$arch/run.log"; fail=1
          echo "PROOF: check.foreign-dump.$arch failed hello under qemu"; continue; }
    dump=$(ls "$work/$arch"/jit-*.dump 2>/dev/null | head -1)
    [ -n "$dump" ] || { echo "FAIL: $arch: no jit-*.dump written"; fail=1
                        echo "PROOF: check.foreign-dump.$arch failed no jit-*.dump written"; continue; }
    ran=$((ran + 1))
    check_expect 0 "$dump" "$arch perftramp dump"
    grep -q "architecture $arch (ELF machine" "$work/out.txt" || { echo "FAIL: $arch: producer not named"; cat "$work/out.txt"; fail=1; }
    grep -q "$order byte order" "$work/out.txt" || { echo "FAIL: $arch: want $order byte order"; cat "$work/out.txt"; fail=1; }
    # nothing but the byte-order note (and, for a perf here that unwinds
    # with libdw, the dump outside /tmp: tests/cli/cli_check_libdw.sh)
    if grep "^  warning" "$work/out.txt" | grep -v "other byte order" | grep -vq "not /tmp: this perf unwinds with libdw"; then
        echo "FAIL: $arch: unexpected warnings"; cat "$work/out.txt"; fail=1
    fi
    head -5 "$work/out.txt"
    dump_be=0; [ "$order" = foreign ] && dump_be=1  # s390x: big-endian on this little-endian host
    corrupt_all "$dump" "$arch"
    if [ "$fail" = "$fail_before" ]; then
        echo "PROOF: check.foreign-dump.$arch proven perftramp check reads the $order-byte-order dump of a $arch run under qemu and rejects every corrupted copy"
    else
        echo "PROOF: check.foreign-dump.$arch failed (see above)"
    fi
done
[ $ran -gt 0 ] || { echo "SKIP: no cross compiler + qemu-user-static + libffi.a for s390x or aarch64"; exit 77; }
exit $fail
