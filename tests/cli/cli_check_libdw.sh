#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check and the perf that unwinds with libdw (built without
# libunwind: Debian's on s390x), which unwinds perf inject's .so files only
# as /tmp/jitted-* (docs/facts.md): a dump outside /tmp is a warning
# (name.dir-libdw) for such a perf, and nothing for a perf with libunwind.
# The installed perf is read from `perf version --build-options`: that
# parser runs on the recorded output of each guest's perf and of this
# host's (tests/samples/perf-build-options-*.txt), through a stand-in perf
# on PATH.  Also: the --perf-version flags in any order, bad flags exit 2.
set -u
: "${PT_BUILDDIR:=.}" "${PT_SRCDIR:=.}"
PT=$(cd "$PT_BUILDDIR/tools" && pwd)/perftramp # absolute: some checks run from /tmp
samples=$(cd "$PT_SRCDIR/tests/samples" && pwd)
HELLO="$PT_BUILDDIR/examples/hello"
[ -x "$PT" ] || { echo "FAIL: $PT not built"; exit 1; }
[ -x "$HELLO" ] || { echo "FAIL: $HELLO not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cli_check_libdw.XXXXXX") || exit 1
in_tmp=
trap 'rm -rf "$work"; [ -n "$in_tmp" ] && rm -f "$in_tmp"' EXIT
fail=0 n=0
bad() { echo "FAIL: $*"; fail=1; }

mkdir "$work/dumps" "$work/bin"
PERFTRAMP=jitdump JITDUMPDIR="$work/dumps" "$HELLO" > "$work/hello.out" 2>&1 ||
    { echo "FAIL: examples/hello failed"; cat "$work/hello.out"; exit 1; }
dump=$(ls "$work"/dumps/jit-*.dump 2> /dev/null | head -n 1)
[ -n "$dump" ] || { echo "FAIL: PERFTRAMP=jitdump examples/hello wrote no jit-*.dump"; exit 1; }
case $work in /tmp) echo "FAIL: the scratch directory is /tmp itself"; exit 1 ;; esac
# a copy in /tmp itself (its own pid's name: nobody else writes it)
in_tmp=/tmp/${dump##*/}
[ -e "$in_tmp" ] && { echo "SKIP: $in_tmp exists"; exit 77; }
cp "$dump" "$in_tmp" || { echo "FAIL: cannot copy the dump into /tmp"; exit 1; }

# the stand-in perf: prints a recorded `perf version --build-options`
cat > "$work/bin/perf" <<'PERF'
#!/bin/sh
[ "$*" = "version --build-options" ] && exec cat "$PT_BUILD_OPTIONS"
exit 1
PERF
chmod +x "$work/bin/perf"

# judge SAMPLE FILE: check with the stand-in perf; sets rc, out.txt, out.json
judge() {
    PT_BUILD_OPTIONS=$1 PATH="$work/bin:$PATH" "$PT" check "$2" > "$work/out.txt" 2>&1
    rc=$?
    PT_BUILD_OPTIONS=$1 PATH="$work/bin:$PATH" "$PT" check --json "$2" > "$work/out.json" 2>&1
}
warned() { grep -c 'not /tmp: this perf unwinds with libdw' "$work/out.txt"; }

# SAMPLE|libdw_unwind in the JSON|the source line
while IFS='|' read -r sample want source; do
    case $sample in '#'* | '') continue ;; esac
    f=$samples/$sample
    [ -f "$f" ] || { bad "$f missing"; continue; }
    n=$((n + 1))
    judge "$f" "$dump"
    [ "$rc" -eq 0 ] || bad "$sample: exit $rc"
    grep -q "\"libdw_unwind\":$want," "$work/out.json" ||
        bad "$sample: want \"libdw_unwind\":$want: $(grep -o '"perf":{[^}]*}' "$work/out.json")"
    grep -q "judged for: $source (" "$work/out.txt" ||
        bad "$sample: want 'judged for: $source': $(grep 'judged for' "$work/out.txt")"
    w=$(warned)
    if [ "$want" = true ]; then
        [ "$w" -eq 1 ] || bad "$sample: a dump in $work/dumps: $w warnings about /tmp, want 1"
        grep -q "fix: write the dump in /tmp itself" "$work/out.txt" || bad "$sample: no advice"
        grep -q '"kind":"name.dir-libdw"' "$work/out.json" || bad "$sample: no name.dir-libdw in the JSON"
        judge "$f" "$in_tmp"
        [ "$(warned)" -eq 0 ] || bad "$sample: the dump in /tmp itself is warned about"
        (cd /tmp && PT_BUILD_OPTIONS=$f PATH="$work/bin:$PATH" "$PT" check "${dump##*/}") > "$work/out.txt" 2>&1
        [ "$(warned)" -eq 0 ] || bad "$sample: ${dump##*/} named from /tmp is warned about"
        (cd "$work/dumps" && PT_BUILD_OPTIONS=$f PATH="$work/bin:$PATH" "$PT" check "${dump##*/}") > "$work/out.txt" 2>&1
        [ "$(warned)" -eq 1 ] || bad "$sample: ${dump##*/} named from its own directory is not warned about"
    else
        [ "$w" -eq 0 ] || bad "$sample: warned about /tmp for a perf that does not unwind with libdw"
    fi
    echo "ok: $sample: libdw_unwind $want, $w warnings for a dump outside /tmp"
done << 'LIST'
perf-build-options-s390x-6.1.176.txt|true|perf 6.1.176 on this machine, without libcrypto, unwinding with libdw
perf-build-options-x86_64-6.1.187.txt|false|perf 6.1.187 on this machine, without libcrypto
perf-build-options-aarch64-6.1.176.txt|false|perf 6.1.176 on this machine, without libcrypto
perf-build-options-riscv64-6.12.117.txt|true|perf 6.12.117 on this machine, without libcrypto, unwinding with libdw
# no libunwind line at all: unknown, no rule
perf-build-options-layouts.txt|null|perf 5.10.0 on this machine, with libcrypto
LIST
[ "$n" -eq 5 ] || bad "read $n samples, want 5"

# --perf-version: flags in any order; unknown or empty flags are usage errors
for v in 6.1+libdw 6.1+libdw+libcrypto 6.1+libcrypto+libdw; do
    "$PT" check --json --perf-version "$v" "$dump" > "$work/out.json" 2>&1
    grep -q '"libdw_unwind":true,' "$work/out.json" || bad "--perf-version $v: not libdw"
    case $v in *libcrypto*) grep -q '"libcrypto":true,' "$work/out.json" || bad "--perf-version $v: not libcrypto" ;; esac
    grep -q '"kind":"name.dir-libdw"' "$work/out.json" || bad "--perf-version $v: no warning for $work/dumps"
done
"$PT" check --json --perf-version 6.1 "$dump" > "$work/out.json" 2>&1
grep -q '"libdw_unwind":null,' "$work/out.json" || bad "--perf-version 6.1: the unwinder is not unknown"
grep -q 'name.dir-libdw' "$work/out.json" && bad "--perf-version 6.1: warned without knowing the unwinder"
for v in 6.1+libdwarf 6.1+ 6.1++libdw 6.1+libdw+; do
    "$PT" check --perf-version "$v" "$dump" > "$work/out.txt" 2>&1
    rc=$?
    [ "$rc" -eq 2 ] && grep -q "want X.Y, then +libcrypto or +libdw" "$work/out.txt" ||
        bad "--perf-version '$v': exit $rc, want 2 with the grammar: $(head -n 1 "$work/out.txt")"
done
[ "$fail" -eq 0 ] && echo "cli_check_libdw: $n recorded perf builds, the /tmp rule and the --perf-version flags: ok"
exit $fail
