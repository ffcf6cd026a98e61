#!/bin/sh
# SPDX-License-Identifier: MIT
# Growing struct perftramp_options keeps old programs working, and a new
# program that asks for more than the library knows is refused
# (docs/abi.md, "Growing a struct"):
#   - tests/abi/old_program.c, compiled against tests/abi/old/ (a frozen
#     copy of the 0.1.0 headers), runs against this build's library and
#     against tests/abi/libperftramp_grown.la, the same library built with
#     -DPERFTRAMP_TEST_GROWN_OPTIONS (one more option field); its options
#     end at a PROT_NONE page, so a read past them would crash it;
#   - tests/abi/new_program.c, with a struct one field longer: the new
#     field 0 opens on both libraries; non-zero opens on the grown one and
#     fails with EINVAL on today's.
: "${PT_SRCDIR:=.}" "${PT_BUILDDIR:=.}" "${PT_CC:=cc}"
today=$PT_BUILDDIR/.libs/libperftramp.so.0
grown=$PT_BUILDDIR/tests/abi/.libs/libperftramp_grown.so.0
for f in "$today" "$grown"; do
    [ -f "$f" ] || { echo "SKIP: $f not built (a --disable-shared build?)"; exit 77; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-abi-grown.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail=0
# each library as libperftramp.so.0 in a directory of its own
mkdir "$work/today" "$work/grown"
cp "$today" "$work/today/libperftramp.so.0"
cp "$grown" "$work/grown/libperftramp.so.0"
ln -s libperftramp.so.0 "$work/today/libperftramp.so"

build() { # build NAME INCLUDE_DIR
    # shellcheck disable=SC2086
    $PT_CC $PT_CFLAGS -I"$2" -I"$PT_BUILDDIR" -o "$work/$1" "$PT_SRCDIR/tests/abi/$1.c" -L"$work/today" -lperftramp -ldl \
        $PT_LDFLAGS 2>"$work/$1.err" || { echo "FAIL: building $1:"; head -5 "$work/$1.err"; exit 1; }
}
build old_program "$PT_SRCDIR/tests/abi/old"
build new_program "$PT_SRCDIR/include"

runs=0
# run WHICH WANT PROGRAM [ARG]: PROGRAM against library WHICH must print WANT
run() {
    which=$1 want=$2
    shift 2
    out=$(LD_LIBRARY_PATH="$work/$which" "$work/$1" "$2" 2>&1)
    rc=$?
    case $out in
    *"$want"*) echo "ok: $1 ${2:+$2 }against the $which library: $out"; runs=$((runs + 1)) ;;
    *) echo "FAIL: $1 ${2:+$2 }against the $which library: want '$want', got '$out' (exit $rc)"; fail=1 ;;
    esac
}
run today "against $work/today/" old_program
run grown "against $work/grown/" old_program
run today opened new_program 0
run grown opened new_program 0
run today EINVAL new_program 1
run grown opened new_program 1

if [ $fail -eq 0 ]; then
    echo "PROOF: abi.options-growth proven $runs runs: 0.1.0 program on today's and a grown library, new field refused by the older one"
else
    echo "PROOF: abi.options-growth failed see above"
fi
exit $fail
