#!/bin/bash
# SPDX-License-Identifier: MIT
# CI step: the ABI of libperftramp.so against the committed description of
# the last release, abi/libperftramp.abi (docs/abi.md).  Takes the library
# CI's README build made when that build is plain (-g, no sanitizer: `make
# check` just ran against it), else rebuilds it with -g in its own build
# directory (--update always does), describes it with abidw
# (abigail-tools: public types only, from include/) and compares with
# abidiff: any change fails, an added function as much as a changed type
# or symbol version, so that an ABI change is always a decision.
#
# A release that changes the ABI on purpose (docs/abi.md, "Releases")
# rewrites the baseline and commits it:
#     .ci/steps/35-abi.sh --update
set -euo pipefail
cd "$(dirname "$0")/../.."
update=no
[ "${1:-}" = --update ] && update=yes
for t in abidw abidiff; do
    command -v "$t" >/dev/null || { echo "35-abi: $t missing: apt-get install abigail-tools (tools/deps/abi.txt)"; exit 1; }
done
# shellcheck source=tests/lib/ci_lib.sh
. tests/lib/ci_lib.sh
build=/tmp/ci-abi
rm -rf "$build"
mkdir -p "$build"
if [ $update = no ] && ci_plain_tree && [ -f .libs/libperftramp.so ]; then
    src=$PWD
    so=$(readlink -f .libs/libperftramp.so)
    echo "35-abi: the README build's library"
else
    ci_src /tmp/ci-abi-src
    src=$CI_SRC_DIR
    (cd "$build" && "$src/configure" -q --enable-werror --disable-static CFLAGS="-g -O2" && make -j2 -s libperftramp.la >/dev/null)
    so=$(readlink -f "$build/.libs/libperftramp.so")
fi
abidw --no-corpus-path --no-comp-dir-path --headers-dir "$src/include" --drop-private-types \
    --out-file "$build/libperftramp.abi" "$so"
baseline=abi/libperftramp.abi
if [ $update = yes ]; then
    cp "$build/libperftramp.abi" "$baseline"
    echo "35-abi: wrote $baseline from $(basename "$so"); commit it with the release"
    exit 0
fi
[ -f "$baseline" ] || { echo "35-abi: no $baseline (make one with --update)"; exit 1; }
set +e
abidiff --no-unreferenced-symbols "$baseline" "$build/libperftramp.abi" > "$build/abidiff.txt" 2>&1
rc=$?
set -e
[ -n "${PT_CI_SRC:-}" ] || rm -rf /tmp/ci-abi-src
if [ $rc -ne 0 ]; then
    echo "(build kept in $build)"
    echo "35-abi: libperftramp.so differs from $baseline (abidiff exit $rc):"
    cat "$build/abidiff.txt"
    echo "PROOF: abi.baseline failed abidiff exit $rc against $baseline"
    echo "A deliberate change: bump -version-info and the version node as docs/abi.md says, then .ci/steps/35-abi.sh --update"
    exit 1
fi
rm -rf "$build"
funcs=$(grep -c "<elf-symbol " "$baseline" || true)
echo "35-abi: libperftramp.so matches $baseline ($funcs exported symbols, abidiff exit 0)"
echo "PROOF: abi.baseline proven abidiff against $baseline: no change in $funcs exported symbols and their types"
