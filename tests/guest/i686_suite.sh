#!/bin/sh
# SPDX-License-Identifier: MIT
# The whole Check suite as a 32-bit build: configure --host=i686-linux-gnu
# (Debian's cross gcc, the i386 multiarch libffi, Check and libunwind), make
# with --enable-werror, then every Check program of that build runs as a
# 32-bit process on a real kernel:
#  - natively, where this machine's kernel runs 32-bit x86 programs (an
#    x86-64 kernel with its ia32 emulation on): `make check` of the Check
#    programs in the 32-bit build;
#  - else in the i686 machine (tools/guest: Debian 12 i386, its own
#    kernel, no perf needed), with the build as the payload.  A kernel
#    built or booted without ia32 emulation (this project's CI machines)
#    runs no 32-bit program at all, and qemu-user lacks what several tests
#    exercise (seccomp filters, mremap aliasing, exec of the 32-bit CLI).
# Prints
#   PROOF: arch.i686.check-suite proven|failed|not-run <detail>
# and, re-named from the suite's own proofs, arch.i686.libgcc
# (_Unwind_Backtrace and backtrace(3)), arch.i686.cxx-eh (a C++ exception
# through trampolines) and arch.i686.nongnu-libunwind.  A program that
# SKIPs does so for a reason its log names (x86-64-only tests, the clang
# and cross assemblers check_reference wants): listed in the detail.
# PT_GUEST_TESTS=0 skips, as it does the other emulated machines.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
ids="check-suite libgcc cxx-eh nongnu-libunwind"
all() { for id in $ids; do echo "PROOF: arch.i686.$id $1 $2"; done; }
skip() { all not-run "$1"; echo "SKIP: $1"; exit 77; }
[ "${PT_GUEST_TESTS:-1}" = 0 ] && skip "PT_GUEST_TESTS=0"
# a sanitizer build's flags do not carry over to the second build
nm "$build/.libs/libperftramp_core.a" 2> /dev/null | grep -qE '__(asan|tsan|ubsan)_' &&
    skip "sanitizer build (this test runs in the plain build)"

# shellcheck source=tools/deps/cross_lib.sh
. "$src/tools/deps/cross_lib.sh"
# shellcheck source=tests/lib/second_build.sh
. "$src/tests/lib/second_build.sh"
triple=$(sed -n 's/^ *\.clang_target *= *"\([^"]*\)".*/\1/p' "$src/src/arch/i686.c")
[ -n "$triple" ] || { echo "FAIL: no .clang_target in src/arch/i686.c"; exit 1; }
command -v "$triple-gcc" > /dev/null 2>&1 || skip "$triple-gcc missing (tools/install-deps)"
m=$(cross_multiarch "$triple")
pc=/usr/lib/$m/pkgconfig
for f in check libffi; do
    [ -f "$pc/$f.pc" ] || skip "$pc/$f.pc missing (tools/install-deps: tools/deps/i686.txt)"
done

work=$(mktemp -d "${TMPDIR:-/tmp}/pt-i686-suite.XXXXXX") || exit 99
[ -n "${PT_GUEST_KEEP:-}" ] && echo "# work directory: $work"
[ -n "${PT_GUEST_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT

# ---- 1. a source tree to configure (tests/lib/second_build.sh)
t0=$(date +%s)
clean_source "$src" "$work" || { all failed "no clean source tree to configure"; exit 1; }
s=$bsrc

# ---- 2. configure --host, make, the Check programs
# The make running this test exports its command line (TEST_LOGS=..., the
# whole list, which beats TESTS= below) and job server in MAKEFLAGS: the
# second build must not inherit them, or its `make check` runs the whole
# suite, this test included, again and again.
unset MAKEFLAGS MFLAGS MAKELEVEL
b=$work/b
mkdir -p "$b"
if ! (cd "$b" && PKG_CONFIG_LIBDIR="$pc:/usr/share/pkgconfig" "$s/configure" -q --host="$triple" --enable-werror \
          > configure.out 2>&1 && make -j2 -s > make.out 2>&1); then
    echo "FAIL: configure --host=$triple && make"
    tail -n 30 "$b/configure.out" "$b/make.out" 2> /dev/null | sed 's/^/#   /'
    all failed "the 32-bit build failed (configure --host=$triple, make --enable-werror)"
    exit 1
fi
[ -z "$(sed -n 's/^S\["HAVE_CHECK_TRUE"\]="\(.*\)"$/\1/p' "$b/config.status")" ] ||
    { all failed "configure found no Check for $triple"; exit 1; }
# shellcheck disable=SC2016 # a make rule, written as is
progs=$(printf 'include Makefile\nprint-tests:\n\t@echo $(TESTS)\n' | (cd "$b" && make -s -f - print-tests) |
    tr ' ' '\n' | grep -v '\.\(sh\|py\)$' | grep . | tr '\n' ' ')
[ -n "$progs" ] || { all failed "no Check program in the 32-bit build's TESTS"; exit 1; }
# only these of the check programs (the scripts' helpers are not run here)
# shellcheck disable=SC2086 # a list
(cd "$b" && make -j2 -s $progs >> make.out 2>&1) || {
    echo "FAIL: make the Check programs"
    tail -n 30 "$b/make.out" | sed 's/^/#   /'
    all failed "the 32-bit Check programs did not build (--enable-werror)"
    exit 1
}
t1=$(date +%s)
echo "# 32-bit build: $((t1 - t0)) s; Check programs: $progs"

# ---- 3. run them as 32-bit processes
res=$work/results
mkdir -p "$res"
if cross_native "$triple" "$work"; then
    where="natively (this kernel runs 32-bit x86 programs)"
    # shellcheck disable=SC2086
    (cd "$b" && make -j2 -k check TESTS="$progs" > check.out 2>&1)
    for p in $progs; do
        r=$(sed -n 's/^:test-result: //p' "$b/$p.trs" 2> /dev/null)
        case $r in PASS) rc=0 ;; SKIP) rc=77 ;; *) rc=1 ;; esac
        echo "$rc" > "$res/$(basename "$p").rc"
        cp "$b/$p.log" "$res/$(basename "$p").log" 2> /dev/null
    done
else
    command -v qemu-system-i386 > /dev/null 2>&1 || skip "qemu-system-i386 missing (tools/install-deps: tools/deps/i686.txt)"
    p=$work/payload
    mkdir -p "$p/b"
    # the build without its objects, and the sources the tests read
    (cd "$b" && find . \( -name '*.o' -o -name '*.lo' -o -name '*.a' -o -name '.deps' \) -prune -o -type f -print |
        tar -cf - -T -) | tar -C "$p/b" -xf -
    cp -r "$s" "$p/src"
    rm -rf "$p/src/.git"
    echo "$progs" > "$p/progs"
    cat > "$p/run" << 'RUN'
#!/bin/sh
# in the i686 machine: every Check program, its log and exit status to out/
mkdir -p out
export PT_SRCDIR=/payload/src PT_BUILDDIR=/payload/b PT_HOST_ARCH=i686 CK_DEFAULT_TIMEOUT=600 TMPDIR=/tmp
# the crash trials without perf: a trial killed by its timer after half a
# second of this emulated machine may not have run a sampled trampoline
# yet (tests/guest/i686.sh proves perf on 32-bit programs)
export PT_CRASH_PERF_EVERY=0
echo "kernel $(uname -m) $(uname -r)"
for t in $(cat /payload/progs); do
    n=$(basename "$t")
    s=$(date +%s)
    (cd /payload/b && "./$t") > "/payload/out/$n.log" 2>&1
    echo $? > "/payload/out/$n.rc"
    echo "$n: exit $(cat "/payload/out/$n.rc") ($(( $(date +%s) - s )) s)"
done
exit 0
RUN
    chmod +x "$p/run"
    PT_GUEST_TIMEOUT=${PT_GUEST_TIMEOUT:-1800} sh "$src/tools/guest" run i686 "$p" > "$work/guest.out" 2> "$work/guest.err"
    grc=$?
    sed 's/^/# /' "$work/guest.out" "$work/guest.err"
    [ "$grc" -eq 0 ] || { all failed "the i686 machine did not run the suite (tools/guest exit $grc)"; exit 1; }
    where="in the i686 machine ($(sed -n 's/^kernel //p' "$work/guest.out" | head -n 1), tools/guest)"
    cp "$p"/out/*.rc "$p"/out/*.log "$res/" 2> /dev/null
fi
t2=$(date +%s)

# ---- 4. the verdicts
n=0 pass=0 bad= skipped=
for t in $progs; do
    x=$(basename "$t")
    n=$((n + 1))
    rc=$(cat "$res/$x.rc" 2> /dev/null || echo missing)
    case $rc in
    0) pass=$((pass + 1)) ;;
    77) skipped="$skipped $x ($(sed -n 's/^SKIP: //p' "$res/$x.log" | head -n 1))" ;;
    *) bad="$bad $x"
       echo "# $x: exit $rc"; grep -E ':[EF]:|^FAIL' "$res/$x.log" 2> /dev/null | head -n 5 | sed 's/^/#   /' ;;
    esac
done
detail="$pass/$n Check programs of the --host=$triple build pass $where${skipped:+; SKIP (named reasons):$skipped} (build $((t1 - t0)) s, run $((t2 - t1)) s)"
if [ -z "$bad" ] && [ "$pass" -gt 0 ]; then
    echo "PROOF: arch.i686.check-suite proven $detail"
else
    echo "PROOF: arch.i686.check-suite failed failing:$bad; $detail"
fi
# the in-process unwinders, from the suite's own proofs
for pair in libgcc:output.libgcc cxx-eh:output.cxx-eh nongnu-libunwind:output.nongnu-libunwind; do
    id=${pair%%:*} theirs=${pair#*:}
    line=$(cat "$res"/*.log 2> /dev/null | sed -n "s/^PROOF: $theirs //p" | head -n 1)
    echo "PROOF: arch.i686.$id ${line:-failed the 32-bit suite printed no $theirs proof} ($where)"
done
[ -z "$bad" ] && [ "$pass" -gt 0 ]
