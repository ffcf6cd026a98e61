#!/bin/bash
# SPDX-License-Identifier: MIT
# perftramp on musl (issue 39, item 2): Debian's musl-gcc (musl-tools), with
# libffi and Check built for musl from Debian's sources by
# tools/deps/musl.sh into $PT_MUSL_PREFIX (/opt/perftramp-musl).
#  1. build: a second build of this tree, configured with CC=musl-gcc
#     (--enable-werror; the kernel's UAPI headers on the include path for
#     one test, tools/deps/musl.sh says why; LDFLAGS=-Wl,--eh-frame-hdr:
#     Debian's musl-gcc.specs replace gcc's link line and drop it, and
#     without .eh_frame_hdr perf's DWARF unwinder finds no FDE in the
#     program, its own C frames included), builds the library (shared and
#     static), the perftramp command, examples/tiny and the Check suites
#     that musl can run; tiny and the command must load musl's loader and
#     no glibc, and tiny must have its .eh_frame_hdr.   musl.x86_64.build
#  2. the Check suites in that build, but those that need what Debian's
#     musl does not have (the list below, with the reason); each must
#     PASS.                                            musl.x86_64.check-suites
#  3. the musl tiny under the real perf, the chains counted with
#     tests/lib/chain_stats.awk (keep=: the evaluator's C frames between two
#     tiny:: frames read as one "*"): >= 90% of >= 50 samples whose leaf is
#     not a trampoline show "* tiny::leaf * tiny::middle * tiny::outer *
#     tiny::<main> * main", every tiny:: frame in the output's dso:
#       perf map + --call-graph fp                    musl.x86_64.tiny-perf-fp
#       jitdump, -k 1, --call-graph dwarf, inject     musl.x86_64.tiny-perf-jitdump-dwarf
#       ELF arenas, plain --call-graph dwarf          musl.x86_64.tiny-perf-elf
#     and the musl perftramp check accepts the dump   musl.x86_64.check
#  4. gdb's bt in the musl tiny names the tiny:: trampolines down to main
#     (GDB JIT interface)                             musl.x86_64.gdb-bt
#  5. PERFTRAMP_UNWIND: Debian's musl-gcc cannot link libgcc's unwinder
#     (the control: a plain C program calling _Unwind_Backtrace fails to
#     link, naming _dl_find_object, glibc's), so a perftramp_open or
#     perftramp_set_outputs asking for it fails with ENOTSUP and changes
#     nothing (check_dynamic, above), and tiny says so and runs on
#                                                     musl.x86_64.unwind-refused
# PT_MUSL_TESTS=0 skips (CI's distcheck and sanitizer passes, which rerun
# make check; the plain make check proved these); PT_MUSL_KEEP=1 keeps the
# work directory.
set -u
S=$(cd "${PT_SRCDIR:-$(dirname "$0")/../..}" && pwd)
B=${PT_BUILDDIR:-$(pwd)}
prefix=${PT_MUSL_PREFIX:-}
if [ -z "$prefix" ]; then
    if [ "$(id -u)" -eq 0 ]; then prefix=/opt/perftramp-musl
    else prefix=${XDG_CACHE_HOME:-$HOME/.cache}/perftramp-musl; fi
fi
MIN=50
P=musl.x86_64
PROOF_IDS="$P.build $P.check-suites $P.tiny-perf-fp $P.tiny-perf-jitdump-dwarf $P.tiny-perf-elf $P.check $P.gdb-bt $P.unwind-refused"
# shellcheck source=tests/lib/proof_lib.sh
. "$S/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/perf_lib.sh
. "$S/tests/lib/perf_lib.sh"
# shellcheck source=tests/lib/second_build.sh
. "$S/tests/lib/second_build.sh"

# The Check suites musl runs, and those it leaves out (and why).
SUITES="tests/emit/check_emitter tests/emit/check_elf tests/arch/check_contract tests/arch/check_reference
  tests/arch/check_near tests/mem/check_doublemap tests/abi/check_abi tests/api/check_env tests/api/check_fork_lazy
  tests/api/check_dynamic tests/outputs/check_jitdump tests/outputs/check_names tests/outputs/check_perfmap
  tests/torture/check_alloc_fault tests/torture/check_disk tests/torture/check_fork tests/torture/check_hostile
  tests/torture/check_misuse tests/torture/check_threads"
LEFT_OUT="tests/unwind/check_unwind: backtrace(3) (musl has no <execinfo.h>) and _Unwind_Backtrace (libgcc's unwinder does not link)
tests/arch/check_boundaries: single-steps a trampoline and unwinds it with libgcc's unwinder, which does not link
tests/unwind/check_unwind_cxx: C++ exceptions: Debian has no libstdc++ for musl
tests/unwind/check_unwind_nongnu: nongnu libunwind is built for glibc (Debian's libunwind8)"

[ "${PT_MUSL_TESTS:-1}" = 0 ] && skip "PT_MUSL_TESTS=0"
[ "$(uname -m)" = x86_64 ] || skip "the musl build is tested on x86_64 only (this is $(uname -m))"
# a sanitizer build's flags do not carry over to the second build
if nm "$B/.libs/libperftramp_core.a" 2> /dev/null | grep -qE '__(asan|tsan|ubsan)_'; then
    skip "sanitizer build (this test runs in the plain build)"
fi
command -v musl-gcc > /dev/null 2>&1 || skip "musl-gcc is not installed (Debian: musl-tools; tools/install-deps)"
[ -f "$prefix/built-with" ] || skip "no libffi and Check for musl in $prefix (tools/deps/musl.sh builds them)"

work=$(mktemp -d "${TMPDIR:-/tmp}/pt-musl.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    if [ -n "${PT_MUSL_KEEP:-}" ]; then echo "# work directory: $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
export HOME=$work/home # perf's build-id cache stays private
mkdir "$HOME"
unset PERFTRAMP PERFTRAMP_SIGNAL MAKEFLAGS MFLAGS MAKELEVEL

# ---- 1. the build --------------------------------------------------------
t0=$(date +%s)
clean_source "$S" "$work" || { prove $P.build failed "no clean source tree"; exit 1; }
b=$work/build
mkdir "$b"
if ! (cd "$b" && "$bsrc/configure" -q --enable-werror CC=musl-gcc CPPFLAGS="-isystem $prefix/kernel-include" \
    LDFLAGS="-L$prefix/lib -Wl,--eh-frame-hdr" PKG_CONFIG_LIBDIR="$prefix/lib/pkgconfig" > configure.log 2>&1); then
    tail -n 30 "$b/configure.log"
    prove $P.build failed "configure CC=musl-gcc failed"
    exit 1
fi
t1=$(date +%s)
grep -q "^FFI_CFLAGS = -I$prefix/include" "$b/Makefile" || { prove $P.build failed "configure did not take libffi from $prefix"; exit 1; }
progs="libperftramp.la tools/perftramp examples/tiny/tiny $SUITES"
# shellcheck disable=SC2086 # lists
if ! (cd "$b" && make -j2 $progs > make.log 2>&1); then
    grep -E 'error|undefined' "$b/make.log" | head -n 20
    prove $P.build failed "make with musl-gcc failed (--enable-werror): $(grep -m1 -E 'error|undefined' "$b/make.log")"
    exit 1
fi
t2=$(date +%s)
TINY=$b/examples/tiny/tiny
PTC=$b/tools/perftramp
# what they load: musl's loader, musl's libc, no glibc
linkage=
for f in "$TINY" "$PTC" "$b/.libs/libperftramp.so"; do
    interp=$(LC_ALL=C readelf -lW "$f" | sed -n 's/.*Requesting program interpreter: \(.*\)]$/\1/p')
    needed=$(LC_ALL=C readelf -dW "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p' | tr '\n' ' ')
    case $needed in *libc.so.6* | *ld-linux* | *libgcc_s*) prove $P.build failed "${f##*/} needs $needed"; exit 1 ;; esac
    case ${f##*/} in
    libperftramp.so) ;;
    *) [ "$interp" = /lib/ld-musl-x86_64.so.1 ] || { prove $P.build failed "${f##*/}'s loader is '$interp'"; exit 1; } ;;
    esac
    linkage="$linkage${f##*/}: ${interp:+$interp, }$needed; "
done
LC_ALL=C readelf -lW "$TINY" | grep -q GNU_EH_FRAME || { prove $P.build failed "tiny has no .eh_frame_hdr (PT_GNU_EH_FRAME)"; exit 1; }
"$PTC" arch x86_64 > "$work/arch.out" 2>&1 || { prove $P.build failed "the musl perftramp arch x86_64 failed"; exit 1; }
prove $P.build proven "musl-gcc ($(dpkg-query -W -f='musl ${Version}' musl-dev 2> /dev/null)), --enable-werror, libffi and Check from Debian's sources ($(cat "$prefix/built-with")): ${linkage% }"
echo "# configure $((t1 - t0)) s, make $((t2 - t1)) s; $linkage"

# ---- 2. the Check suites -------------------------------------------------
echo "# left out, with the reason:"
printf '%s\n' "$LEFT_OUT" | sed 's/^/#   /'
# (check_PROGRAMS: check-TESTS would build every test program first)
# shellcheck disable=SC2086
(cd "$b" && make check-TESTS TESTS="$(echo $SUITES)" check_PROGRAMS="$(echo $SUITES)" > check.log 2>&1)
t3=$(date +%s)
# shellcheck disable=SC2086
test_results "$b" $SUITES
checks=$(cat "$b"/tests/*/*.log 2> /dev/null | sed -n 's/^\([0-9]*\)%: Checks: \([0-9]*\), Failures: 0, Errors: 0$/\2/p' | awk '{ s += $1 } END { print s + 0 }')
# what those suites proved there (indented: they are the musl build's)
for t in $SUITES; do sed -n 's/^PROOF: /#   musl build: /p' "$b/$t.log" 2> /dev/null; done
if [ -z "$notpassed" ]; then
    prove $P.check-suites proven "suites $passed/$total passed with musl ($checks Check tests; left out: check_unwind, check_boundaries, check_unwind_cxx, check_unwind_nongnu) in $((t3 - t2)) s"
else
    prove $P.check-suites failed "suites $passed/$total passed with musl; not passed:$notpassed"
fi

# ---- 3. the musl tiny under perf -------------------------------------------
perf_ok=1
if ! command -v perf > /dev/null 2>&1; then
    perf_ok=0 noperf="perf is not installed (Debian: linux-perf)"
elif ! perf record -q -o "$work/probe.data" -e cpu-clock -- true > "$work/probe.log" 2>&1; then
    perf_ok=0 noperf="perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"
fi
# leaf's loop is where the time goes (about 1 s of CPU): outer calls
# middle 30 times
cat > "$work/chain.tiny" << 'T'
fn leaf(n) { i = 0; while (i < n) { i = i + 1; } return i; }
fn middle(n) { return leaf(n); }
fn outer(k) { t = 0; j = 0; while (j < k) { t = t + middle(600000); j = j + 1; } return t; }
print("sum", outer(30));
T
WANT="* tiny::leaf * tiny::middle * tiny::outer * tiny::<main> * main"
# judge ID WHAT SCRIPT DSO: the PROOF line from a perf script of the musl tiny
judge() {
    local r n c
    r=$(awk -v keep='^(tiny::|main$)' -v leaf='*' -v want="$WANT" -v want_dso="$4" \
        -v checked='^tiny::' -v brief=1 -f "$S/tests/lib/chain_stats.awk" "$3")
    read -r n c _ <<< "$r"
    if [ "$n" -ge "$MIN" ] && at_least_90 "$c" "$n"; then
        prove "$1" proven "$2: complete $(pct "$c" "$n") ($WANT, tiny:: frames in $4)"
    else
        prove "$1" failed "$2: complete $(pct "$c" "$n") (need >= 90% of >= $MIN)"
        grep -m 3 -B 2 -A 12 'tiny::' "$3" | sed 's/^/#   /' | head -n 40
    fi
    echo "# $2: complete $(pct "$c" "$n")"
}
# record NAME PERFTRAMP CALLGRAPH [perf options]: the musl tiny under perf; sets pid
record() {
    local name=$1 out=$2 cg=$3
    shift 3
    mkdir -p "$work/$name"
    (cd "$work/$name" && JITDUMPDIR=$work/$name PERFTRAMP_ELF_DIR=$work/$name PERFTRAMP=$out \
        perf record -q "$@" -e cpu-clock -F 999 --call-graph "$cg" -o perf.data -- "$TINY" "$work/chain.tiny" \
        > tiny.out 2> tiny.err) || { tail -n 3 "$work/$name/tiny.err"; return 1; }
    pid=$(perf script -i "$work/$name/perf.data" -F pid 2> /dev/null | awk 'NF { print $1; exit }')
    [ -n "$pid" ]
}
if [ $perf_ok = 1 ]; then
    # perf map + frame pointers
    if record fp perfmap fp; then
        perf script -i "$work/fp/perf.data" -F comm,ip,sym,symoff,dso > "$work/fp.script" 2> /dev/null
        judge $P.tiny-perf-fp "perf map + --call-graph fp" "$work/fp.script" "perf-${pid}[.]map"
        rm -f "/tmp/perf-$pid.map"
    else
        prove $P.tiny-perf-fp failed "perf record --call-graph fp of the musl tiny failed"
    fi
    # jitdump, -k 1, dwarf, perf inject --jit; then the musl perftramp check
    if record jit jitdump dwarf -k 1; then
        dump=$work/jit/jit-$pid.dump
        if (cd "$work/jit" && perf inject --jit -i perf.data -o inj.data > inject.log 2>&1); then
            perf script -i "$work/jit/inj.data" -F comm,ip,sym,symoff,dso > "$work/jit.script" 2> /dev/null
            judge $P.tiny-perf-jitdump-dwarf "jitdump + -k 1 + --call-graph dwarf + perf inject --jit" "$work/jit.script" "jitted-$pid-[0-9]+[.]so"
        else
            prove $P.tiny-perf-jitdump-dwarf failed "perf inject --jit: $(tail -n 2 "$work/jit/inject.log" | tr '\n' ' ')"
        fi
        if "$PTC" check "$dump" > "$work/check.out" 2>&1; then
            prove $P.check proven "the musl perftramp check on the musl tiny's dump: $(tail -n 1 "$work/check.out")"
        else
            prove $P.check failed "the musl perftramp check: $(tail -n 3 "$work/check.out" | tr '\n' ' ')"
        fi
    else
        prove $P.tiny-perf-jitdump-dwarf failed "perf record -k 1 --call-graph dwarf of the musl tiny failed"
        prove $P.check failed "no dump: perf record failed"
    fi
    # ELF arenas: a plain perf record, no -k 1, no inject
    if record elf elf dwarf; then
        perf script -i "$work/elf/perf.data" -F comm,ip,sym,symoff,dso > "$work/elf.script" 2> /dev/null
        judge $P.tiny-perf-elf "ELF arenas + --call-graph dwarf, no -k 1, no inject" "$work/elf.script" "perftramp-$pid-[0-9]+[.]so"
    else
        prove $P.tiny-perf-elf failed "perf record --call-graph dwarf of the musl tiny (ELF arenas) failed"
    fi
else
    for id in tiny-perf-fp tiny-perf-jitdump-dwarf tiny-perf-elf; do prove $P.$id not-run "$noperf"; done
    # the dump without perf
    mkdir -p "$work/jit"
    if (cd "$work/jit" && JITDUMPDIR=$work/jit PERFTRAMP=jitdump "$TINY" "$work/chain.tiny" > tiny.out 2>&1) &&
        "$PTC" check "$work"/jit/jit-*.dump > "$work/check.out" 2>&1; then
        prove $P.check proven "the musl perftramp check on the musl tiny's dump: $(tail -n 1 "$work/check.out")"
    else
        prove $P.check failed "the musl perftramp check: $(tail -n 3 "$work/check.out" 2> /dev/null | tr '\n' ' ')"
    fi
fi

# ---- 4. gdb ----------------------------------------------------------------
if command -v gdb > /dev/null 2>&1; then
    # shellcheck source=tests/lib/gdb_lib.sh
    . "$S/tests/lib/gdb_lib.sh"
    # the third call of a tiny function: middle, or leaf
    PERFTRAMP=gdb gdb -nx -batch -ex 'set debuginfod enabled off' -ex 'set pagination off' \
        -ex 'break eval_function' -ex run -ex continue -ex continue -ex continue -ex bt \
        --args "$TINY" "$work/chain.tiny" > "$work/gdb.out" 2>&1
    names=$(sed -n '/^#0 /,$p' "$work/gdb.out" | frame_names | cut -d' ' -f2- | tr '\n' ' ')
    case " $names" in
    *" tiny::middle "*" tiny::outer "*" tiny::<main> "*" main "*)
        if grep -q '^#[0-9].* ?? ' "$work/gdb.out"; then
            prove $P.gdb-bt failed "bt has ?? frames: $names"
        else
            prove $P.gdb-bt proven "gdb $(gdb --version | sed -n '1s/.* //p') bt in the musl tiny: $names"
        fi ;;
    *)
        prove $P.gdb-bt failed "bt: $names"
        tail -n 20 "$work/gdb.out" | sed 's/^/#   /' ;;
    esac
else
    prove $P.gdb-bt not-run "gdb is not installed"
fi

# ---- 5. PERFTRAMP_UNWIND ---------------------------------------------------
printf '%s\n' '#include <unwind.h>' \
    'static _Unwind_Reason_Code step(struct _Unwind_Context *c, void *a) { (void)c; (void)a; return _URC_NO_REASON; }' \
    'int main(void) { return _Unwind_Backtrace(step, 0) == _URC_END_OF_STACK ? 0 : 1; }' > "$work/unwinder.c"
if musl-gcc -o "$work/unwinder" "$work/unwinder.c" > "$work/unwinder.err" 2>&1; then
    prove $P.unwind-refused failed "the control linked: libgcc's unwinder links with musl-gcc here, so PERFTRAMP_UNWIND should be proven on musl instead"
elif ! grep -q "undefined reference to \`_dl_find_object'" "$work/unwinder.err"; then
    prove $P.unwind-refused failed "the control failed to link for another reason: $(grep -m1 -e error -e undefined "$work/unwinder.err")"
else
    PERFTRAMP=unwind "$TINY" "$S/examples/tiny/fib.tiny" > "$work/unwind.out" 2> "$work/unwind.err"
    rc=$?
    msg=$(head -n 1 "$work/unwind.err")
    if [ $rc -ne 0 ] || ! grep -q '^fib(' "$work/unwind.out"; then
        prove $P.unwind-refused failed "PERFTRAMP=unwind tiny: exit $rc, $(tr '\n' ' ' < "$work/unwind.err")"
    elif ! grep -q 'PERFTRAMP=unwind.*Not supported' <<< "$msg"; then
        prove $P.unwind-refused failed "PERFTRAMP=unwind tiny said '$msg', not ENOTSUP"
    elif case " $notpassed " in *" tests/api/check_dynamic "*) true ;; *) false ;; esac; then
        prove $P.unwind-refused failed "check_dynamic (set_outputs with PERFTRAMP_UNWIND refused with ENOTSUP, nothing changed) did not pass"
    else
        prove $P.unwind-refused proven "a musl-gcc program calling _Unwind_Backtrace does not link (libgcc_eh.a: undefined _dl_find_object, glibc's); PERFTRAMP_UNWIND is refused with ENOTSUP, changing nothing (check_dynamic), and PERFTRAMP=unwind tiny says '$msg' and runs"
    fi
fi
echo "# musl: build $((t2 - t0)) s, Check suites $((t3 - t2)) s, perf and gdb $(($(date +%s) - t3)) s"
for id in $PROOF_IDS; do [ "${proof[$id]:-}" = proven ] || exit 1; done
exit 0
