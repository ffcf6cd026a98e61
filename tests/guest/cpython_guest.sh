#!/bin/bash
# SPDX-License-Identifier: MIT
# CPython's own judgement of examples/cpython on a foreign architecture, in
# an emulated Debian machine (tools/guest): the unmodified
# Lib/test/test_perf_profiler.py and Lib/test/test_perfmaps.py
# (`python -m test test_perf_profiler test_perfmaps -v`) on the stock and
# the patched CPython 3.13.5, side by side, as tests/cpython/test_file.sh
# does on x86-64.  Usage: tests/guest/cpython_guest.sh ARCH
# (tests/guest/cpython_<arch>.sh are the make check entries).
#  1. Cross-builds libperftramp.so.0 for ARCH from this tree, as the
#     installed library is made (the runtime's sources, hidden symbols, the
#     version script), and a perftramp.pc naming it.
#  2. Cross-builds both interpreters: examples/cpython/build.sh
#     --host=TRIPLE (same source and flags, each cached, built at most once
#     per machine; the patched one links the library of step 1 by its
#     soname, so a rebuilt or mutated library needs no new CPython).
#  3. Installs both into the payload (bin/python3.13, lib/python3.13 with
#     the shared modules and only the stdlib the two files and regrtest
#     import: $stdlib below; debug sections stripped; .pyc compiled here)
#     and boots ARCH's machine with tests/guest/cpython_run.sh.
#  4. Judges both runs (tests/lib/unittest_outcomes.awk,
#     tests/lib/unittest_compare.awk) and prints
#       PROOF: cpython.<arch>.test_perf_profiler proven|failed <detail>
# Where stock CPython has a trampoline (aarch64), proven means what it
# means on x86-64: every test that passes on stock passes on patched, none
# that ran on stock is skipped there, and TestPerfProfiler (-X perf, perf
# --call-graph fp) passed on both.  Where it has none (ppc64le, s390x,
# riscv64), stock must skip the whole file ("perf trampoline profiling not
# supported") and the patched one must run it: every test passes, or is
# skipped for a reason of the machine this README row already states (the
# DWARF class below perf 6.6: Debian 12's perf is 6.1), or is left out
# here ($ignored below, with the reason).  At least one test must pass:
# zero tests run is a failure.
# PT_GUEST_TESTS=0 or PT_CPYTHON_TESTS=0 skips; PT_GUEST_KEEP=1 keeps the
# work directory.
set -u
arch=${1:?usage: cpython_guest.sh ARCH}
S=$(cd "${PT_SRCDIR:-$(dirname "$0")/../..}" && pwd)
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
PROOF_IDS="cpython.$arch.test_perf_profiler"
# shellcheck source=tests/lib/proof_lib.sh
. "$S/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/cpython_lib.sh
. "$S/tests/lib/cpython_lib.sh" # side_by_side
[ "${PT_GUEST_TESTS:-1}" = 0 ] && skip "PT_GUEST_TESTS=0"
[ "${PT_CPYTHON_TESTS:-1}" = 0 ] && skip "PT_CPYTHON_TESTS=0"
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-cpython-guest.XXXXXX") || { echo "FAIL: mktemp"; exit 99; }
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    if [ -n "${PT_GUEST_KEEP:-}" ]; then echo "# work directory: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT

f=$(grep -l "^ *\.name *= *\"$arch\"" "$S"/src/arch/*.c 2> /dev/null | head -n 1)
triple=$([ -n "$f" ] && sed -n 's/^ *\.clang_target *= *"\([^"]*\)".*/\1/p' "$f" | head -n 1)
[ -n "$triple" ] || { echo "FAIL: no table named $arch in src/arch"; exit 1; }
for tool in "$triple-gcc" "$triple-strip" mmdebstrap cpio timeout; do
    command -v "$tool" > /dev/null 2>&1 || skip "$tool missing (tools/install-deps installs it)"
done
if [ ! -f "$B/config.h" ] || [ ! -f "$B/perftramp_version.h" ]; then echo "FAIL: $B is not configured"; exit 1; fi

# The tests this machine leaves out (regrtest --ignore patterns), each for
# a property of its perf or kernel that the README's row for the machine
# states, shown apart from perftramp by tests/guest/perf_guest.sh's
# plain-C control
ignored=()
case $arch in
# README's s390x row: perf records no user frame in --call-graph fp
# chains on this machine (Debian 12, kernel 6.1), of plain C neither; the
# fp test looks for the Python frames in those chains.  Its DWARF twin
# (-X perf_jit) and the other fp test (no Python frames wanted) still run.
s390x) ignored=("test.test_perf_profiler.TestPerfProfiler.test_python_calls_appear_in_the_stack_if_perf_activated: perf records no user frame in fp chains here, plain C neither (README, s390x row)") ;;
# README's riscv64 row: this machine's perf (6.12, Debian 13) runs the
# DWARF class (it needs 6.6), but its dwarf unwinder walks no frame past
# the pc here, of plain C neither; and perf script writes "Fail to find IP
# register for arch riscv64, returns 0" to stderr for every dwarf sample
# (1446 lines for 1464 samples of busybox sh, no Python, no perftramp),
# where the class's other test wants that stderr empty.  So the DWARF class
# is left out here; the -X perf (fp) class runs whole.
riscv64) ignored=("test.test_perf_profiler.TestPerfProfilerWithDwarf.test_python_calls_appear_in_the_stack_if_perf_activated: perf's dwarf unwinder walks no frame past the pc here, plain C neither (README, riscv64 row)"
    "test.test_perf_profiler.TestPerfProfilerWithDwarf.test_python_calls_do_not_appear_in_the_stack_if_perf_deactivated: perf script prints 'Fail to find IP register for arch riscv64' on stderr for every dwarf sample here, of plain C too (README, riscv64 row); the test wants stderr empty") ;;
esac

# ---- 1. libperftramp.so.0 for ARCH: the runtime's sources (src/ but the
# readers), compiled as tests/guest/perf_guest.sh does (this host's
# config.h: the same glibc on every Debian architecture), linked as
# Makefile.am links the installed library
t0=$SECONDS
if [ -f "/opt/perftramp-cross/$arch/lib/libffi.a" ]; then ffi=/opt/perftramp-cross/$arch
else ffi=/usr; fi
ffilib=$ffi/lib/$([ "$ffi" = /usr ] && echo "$triple")
ffiinc=$ffi/include/$([ "$ffi" = /usr ] && echo "$triple")
[ -f "$ffiinc/ffi.h" ] || skip "$ffiinc/ffi.h missing (tools/install-deps installs libffi for $arch)"
lib=$work/lib
mkdir -p "$lib/inc"
sources=()
for c in "$S"/src/*/*.c; do case $c in */src/read/*) ;; *) sources+=("$c") ;; esac; done
# only ffi.h and ffitarget.h: a multiarch include directory must not shadow
# the cross toolchain's own libc headers
cp "$ffiinc/ffi.h" "$ffiinc/ffitarget.h" "$lib/inc/"
if ! "$triple-gcc" -std=gnu11 -O2 -g -fPIC -pthread -fvisibility=hidden -fno-omit-frame-pointer \
        -include "$B/config.h" -I"$B" -I"$S/include" -I"$S/src" -I"$lib/inc" \
        -shared -Wl,-soname,libperftramp.so.0 -Wl,--version-script="$S/src/api/libperftramp.map" -Wl,-z,defs \
        -o "$lib/libperftramp.so.0" "${sources[@]}" \
        -L"$ffilib" -lffi -ldl > "$work/lib.log" 2>&1; then
    tail -n 20 "$work/lib.log"
    bad "building libperftramp.so.0 for $arch ($triple-gcc) failed"
    exit 1
fi
ln -s libperftramp.so.0 "$lib/libperftramp.so"
printf '%s\n' "arch=$arch" "Name: perftramp" "Description: perftramp for $arch, uninstalled" \
    "Version: $(sed -n 's/^Version: //p' "$B/perftramp.pc")" \
    "Libs: -L$lib -lperftramp" "Cflags: -I$S/include -I$B" > "$lib/perftramp.pc"
t_lib=$((SECONDS - t0))

# ---- 2. the interpreters
t0=$SECONDS
PT_CPYTHON_PKG_CONFIG_LIBDIR=$lib sh "$S/examples/cpython/build.sh" --host="$triple" \
    > "$work/build.out" 2> "$work/build.err"
rc=$?
[ $rc -eq 2 ] && skip "the CPython 3.13.5 source cannot be had: $(tail -n 1 "$work/build.err")"
cat "$work/build.err"
[ $rc -eq 0 ] || { bad "examples/cpython/build.sh --host=$triple failed"; exit 1; }
t_build=$((SECONDS - t0))
stockdir=$(sed -n 's/^stock //p' "$work/build.out")
native=$(PT_CPYTHON_PKG_CONFIG_LIBDIR='' sh "$S/examples/cpython/build.sh" stock | sed -n 's/^stock //p')/python

# ---- 3. the payload
# The stdlib that regrtest and the two files import (modules and packages,
# found by logging every process's modules in a run of the whole file)
stdlib="__future__.py _collections_abc.py _colorize.py _compat_pickle.py _compression.py
_opcode_metadata.py _sitebuiltins.py _weakrefset.py abc.py argparse.py ast.py bisect.py codecs.py
collections contextlib.py copy.py copyreg.py dataclasses.py difflib.py dis.py email encodings
enum.py fnmatch.py functools.py genericpath.py gettext.py glob.py heapq.py importlib inspect.py
io.py json keyword.py linecache.py locale.py logging ntpath.py opcode.py operator.py os.py
pathlib pickle.py platform.py posixpath.py pprint.py py_compile.py random.py re reprlib.py
runpy.py selectors.py shlex.py shutil.py signal.py site.py stat.py string.py struct.py
subprocess.py sysconfig tempfile.py textwrap.py threading.py token.py tokenize.py trace.py
traceback.py types.py typing.py unittest warnings.py weakref.py zipfile zipimport.py
test/__init__.py test/__main__.py test/libregrtest test/support
test/test_perf_profiler.py test/test_perfmaps.py"
p=$work/payload
mkdir -p "$p/lib" "$p/out"
cp "$lib/libperftramp.so.0" "$p/lib/"
cp "$S/tests/guest/cpython_run.sh" "$p/run"
: > "$p/ignore"
for i in "${ignored[@]}"; do echo "${i%%: *}" >> "$p/ignore"; done
for kind in stock patched; do
    dir=$(sed -n "s/^$kind //p" "$work/build.out")
    d=$p/$kind
    l=$d/lib/python3.13
    mkdir -p "$d/bin" "$l/lib-dynload"
    # shellcheck disable=SC2086 # $stdlib is a list
    if ! { "$triple-strip" --strip-debug -o "$d/bin/python3.13" "$dir/python" &&
           for so in "$dir"/build/lib.*/*.so; do "$triple-strip" --strip-debug -o "$l/lib-dynload/${so##*/}" "$so" || exit 1; done &&
           cp "$dir"/build/lib.*/_sysconfigdata_*.py "$l/" &&
           (cd "$dir/Lib" && cp -R --parents $stdlib "$l/") &&
           find "$l" -name __pycache__ -prune -exec rm -rf {} + &&
           "$native" -m compileall -q "$l" > "$work/compileall.log"; } 2>&1; then
        bad "installing the $kind interpreter into the payload failed"
        exit 1
    fi
done
size=$(du -sm "$p" | cut -f1)

# ---- 4. the machine
"$S/tools/guest" image "$arch" > /dev/null 2> "$work/image.err" || {
    cat "$work/image.err"; bad "tools/guest image $arch failed"; exit 1; }
cat "$work/image.err"
t0=$SECONDS
PT_GUEST_TIMEOUT=${PT_GUEST_TIMEOUT:-2400} "$S/tools/guest" run "$arch" "$p" > "$work/guest.out" 2> "$work/run.err"
rc=$?
t_guest=$((SECONDS - t0))
cat "$work/guest.out" "$work/run.err"
[ $rc -eq 0 ] || echo "# the guest's payload exited $rc"

# ---- 5. the outcomes
for kind in stock patched; do
    [ -s "$p/out/$kind.log" ] || { bad "no output of the $kind run came back"; exit 1; }
    awk -f "$S/tests/lib/unittest_outcomes.awk" "$p/out/$kind.log" > "$work/$kind.outcomes"
done
side_by_side "$work" " in the $arch machine"
[ ${#ignored[@]} -eq 0 ] || printf '  left out in this machine: %s\n' "${ignored[@]}"
echo "times: libperftramp $t_lib s, interpreters $t_build s, payload $size MB, guest $t_guest s"

perf=$(sed -n 's/^perf: perf version \([0-9]*\.[0-9]*\).*/\1/p' "$work/guest.out" | head -n 1)
# the file skips its DWARF class below perf 6.6 (on stock and patched)
old_perf=0
[ -n "$perf" ] && [ "$(printf '%s\n' "$perf" 6.6 | sort -V | head -n 1)" != 6.6 ] && old_perf=1
outcome() { awk -F '\t' -v id="$2" '$1 == id { print $2 }' "$work/$1.outcomes"; }
fp=test.test_perf_profiler.TestPerfProfiler.test_python_calls_appear_in_the_stack_if_perf_activated
problems=
[ "$same" -eq 0 ] || problems="$problems; $regressed test(s) passing on stock do not pass on patched, $newly run on stock are skipped on patched"
[ "${pok:-0}" -gt 0 ] || problems="$problems; no test passed on the patched interpreter"
if grep -q '^#define PY_HAVE_PERF_TRAMPOLINE 1' "$stockdir/pyconfig.h"; then
    mode="stock has a trampoline here: side by side"
    for kind in stock patched; do
        [ "$(outcome $kind $fp)" = ok ] || problems="$problems; TestPerfProfiler (-X perf, --call-graph fp) did not pass on $kind"
    done
else
    mode="stock has no trampoline here"
    [ "$(awk -F '\t' '$1 == "test_perf_profiler" { print $2 "\t" $3 }' "$work/stock.outcomes")" = \
        "$(printf 'skipped\tperf trampoline profiling not supported')" ] ||
        problems="$problems; stock did not skip test_perf_profiler as unsupported"
    grep -q "^test_perf_profiler	" "$work/patched.outcomes" &&
        problems="$problems; patched skipped the whole test_perf_profiler"
fi
# on patched: every test passes, or skips for a reason this machine's row states
while IFS=$'\t' read -r id out detail; do
    case $out in
    ok) ;;
    skipped)
        [ $old_perf = 1 ] && [ "$detail" = "perf command may not work due to a perf bug" ] ||
            problems="$problems; $id skipped on patched: $detail" ;;
    *) problems="$problems; $id: $out on patched" ;;
    esac
done < "$work/patched.outcomes"
detail="$arch machine (perf $perf), $mode: stock $cok ok, $csk skipped, $cother failed; patched $pok ok, $psk skipped, $pother failed; $kept pass on both"
[ $old_perf = 1 ] && detail="$detail; the DWARF class skips itself (perf < 6.6)"
if grep -q 'perf record gets -e cpu-clock' "$work/guest.out"; then
    if grep -q 'default event (cycles) never returned' "$work/guest.out"; then
        detail="$detail; perf record given -e cpu-clock (perf record -e cycles never returns here)"
    else
        detail="$detail; perf record given -e cpu-clock (the default event sampled nothing here)"
    fi
fi
[ ${#ignored[@]} -eq 0 ] || detail="$detail; left out: ${ignored[*]}"
if [ -z "$problems" ]; then prove "$PROOF_IDS" proven "$detail"
else prove "$PROOF_IDS" failed "${problems#; }; $detail"; exit 1; fi
exit 0
