#!/bin/sh
# SPDX-License-Identifier: MIT
# The porting guide, followed by a script: copies the built tree, adds a
# new table <host>_drill (a renamed copy of the host's table, as
# src/arch/x86_64_near.c began) by exactly the per-table steps of
# docs/porting.md's checklist (1-5; the per-machine steps 6-10 are done
# already for a machine that has a table), and the same for the first
# 32-bit table of the list (i686_drill, a copy of i686: ELFCLASS32, 4-byte
# data words), rebuilds what they touch (make reruns automake for
# mk/arch.am) and runs, with the new host table as the host table, the
# reference (tests/arch/check_reference, both new tables), contract
# (tests/arch/check_contract, tests/arch/run_foreign.sh for both),
# boundary (tests/arch/check_boundaries, run_foreign.sh) and publish
# (tests/api/check_dynamic, run_foreign.sh) proofs; tests/lib/proof_summary.sh must
# find every row step 5 added proven.  Then the new table loses one required
# field (.dwarf_regs): perftramp_open must refuse it (EINVAL, examples/hello)
# and `perftramp arch` call it BROKEN TABLE.  Prints
#   PROOF: arch.port-drill proven|failed|not-run <detail>
# It reuses the built objects, so only the new table, arch_list.c and the
# links are rebuilt: it needs an in-tree build (srcdir = builddir) and
# reports not-run elsewhere (distcheck's VPATH build), or with
# PT_ARCH_TESTS=0.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$(pwd)}
host=${PT_HOST_ARCH:-$(uname -m)}
new=${host}_drill
not_run() { echo "PROOF: arch.port-drill not-run $*"; echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; echo "PROOF: arch.port-drill failed $*"; exit 1; }

[ "${PT_ARCH_TESTS:-1}" = 0 ] && not_run "PT_ARCH_TESTS=0"
[ "$(cd "$src" && pwd -P)" = "$(cd "$build" && pwd -P)" ] || not_run "not an in-tree build (the drill reuses its objects)"
[ -f "$build/config.status" ] || not_run "no config.status in $build"
[ -f "$src/src/arch/$host.c" ] || not_run "no table src/arch/$host.c for the host"
t0=$(date +%s)
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-drill.XXXXXX") || exit 99
[ -n "${PT_ARCH_KEEP:-}" ] && echo "# work directory: $work"
[ -n "${PT_ARCH_KEEP:-}" ] || trap 'rm -rf "$work"' EXIT
tree=$work/tree
mkdir "$tree"
# the tree as built, times kept (so make sees the objects up to date);
# not the tests' logs
(cd "$src" && tar --exclude=./.git --exclude='*.log' --exclude='*.trs' --exclude='./tests/*/*.log' -cf - .) |
    (cd "$tree" && tar -xf -) || fail "copying $src"
# the copy's configuration names the copy
sed -i "s#$src#$tree#g" "$tree/config.status" || fail "config.status"
cd "$tree" || exit 99

# the guide's steps 1-5 for a table NEW, a copy of table BASE (the name
# and file of a table are the same): add_table BASE NEW
: > "$work/rows"
add_table() {
    base=$1 nt=$2
    sym=$(sed -n 's/^const struct pt_arch pt_arch_\([A-Za-z0-9_]*\) *=.*/\1/p' "src/arch/$base.c")
    [ -n "$sym" ] || fail "no const struct pt_arch in src/arch/$base.c"
    # 1. the table
    sed -e "s/^const struct pt_arch pt_arch_$sym /const struct pt_arch pt_arch_$nt /" \
        -e "s/^\\( *\\.name = \\)\"$base\"/\\1\"$nt\"/" "src/arch/$base.c" > "src/arch/$nt.c"
    # 2. arch_list.c: the extern, the list entry, the pt_arch_host() case
    awk -v sym="$sym" -v new="$nt" '
        { print }
        $0 == "extern const struct pt_arch pt_arch_" sym ";" { print "extern const struct pt_arch pt_arch_" new ";" }
        $0 == "    &pt_arch_" sym "," { print "    &pt_arch_" new "," }
    ' src/arch/arch_list.c | sed "s/return pt_arch_find(\"$base\");/return pt_arch_find(\"$nt\");/" > "$work/arch_list.c"
    mv "$work/arch_list.c" src/arch/arch_list.c
    grep -q "pt_arch_find(\"$nt\")" src/arch/arch_list.c || fail "no pt_arch_host() case for $base in arch_list.c"
    # 3. mk/arch.am: the source and the reference
    printf 'libperftramp_core_la_SOURCES += src/arch/%s.c\nEXTRA_DIST += tests/ref/%s.S\n' "$nt" "$nt" >> mk/arch.am
    # 4. the reference object
    sed "s/perftramp_ref_$base\\b/perftramp_ref_$nt/g" "tests/ref/$base.S" > "tests/ref/$nt.S"
    # 5. the proof rows: BASE's, renamed (same tests, same counts), and the
    # frameless publish of run_foreign.sh
    sed -n "s/^arch\\.$base\\.\\(reference-clang\\|reference-gas\\|executed\\|unwound\\|every-boundary\\) /arch.$nt.\\1 /p" \
        tests/proofs.expected > "$work/rows.$nt"
    printf 'publish.frameless-%s tests/arch/run_foreign.sh - required\n' "$nt" >> "$work/rows.$nt"
    [ "$(wc -l < "$work/rows.$nt")" -eq 6 ] || fail "step 5: tests/proofs.expected has not the 5 arch.$base.* rows to copy"
    cat "$work/rows.$nt" >> tests/proofs.expected
    cat "$work/rows.$nt" >> "$work/rows"
}
add_table "$host" "$new"
# the first 32-bit table of the list, unless the host's is one
base32=
for f in $(sed -n 's/^ *&pt_arch_\([A-Za-z0-9_]*\) *,.*/\1/p' src/arch/arch_list.c); do
    [ "$f" != "$host" ] && [ "$f" != "$new" ] && [ -f "src/arch/$f.c" ] &&
        grep -q '^ *\.addr_size = 4,' "src/arch/$f.c" && { base32=$f; break; }
done
new32=
if [ -n "$base32" ]; then
    new32=${base32}_drill
    add_table "$base32" "$new32"
fi

# rebuild what the steps touched: make reruns automake (mk/arch.am) and
# config.status, compiles the new table and arch_list.c, relinks
progs="tests/arch/check_reference tests/arch/check_contract tests/arch/check_boundaries tests/api/check_dynamic"
# shellcheck disable=SC2086
make -s $progs > "$work/make.log" 2>&1 || { tail -n 30 "$work/make.log"; fail "the copy does not build"; }
grep -q "src/arch/$new.c" Makefile.in || fail "automake did not take the table from mk/arch.am"
t1=$(date +%s)

# the tests, as make check runs them (a .log and a .trs each), with the new
# table as the host table; run_foreign.sh for the new table only (natively:
# it exits 77, no foreign machine ran, which is not a failure here)
export PT_SRCDIR="$tree" PT_BUILDDIR="$tree" PT_HOST_ARCH="$new"
bad=
logs=
run_one() { # test [command...]
    t=$1; shift
    "$@" > "$t.log" 2>&1
    rc=$?
    case $rc in 0) r=PASS ;; 77) r=SKIP ;; *) r=FAIL ;; esac
    echo ":test-result: $r" > "$t.trs"
    logs="$logs $t.log"
    grep -E '^(PROOF|FAIL|SKIP)|[0-9]+%:|[Ee]rror' "$t.log" | head -n 20 | sed "s|^|# $(basename "$t"): |"
    case $r in FAIL) bad="$bad $(basename "$t")" ;; esac
}
for t in $progs; do
    run_one "$t" "./$t"
done
run_one tests/arch/run_foreign.sh env PT_ARCHES="$new $new32" CI= sh tests/arch/run_foreign.sh
# shellcheck disable=SC2086
PERFTRAMP_ALL_PROOFS=0 sh tests/lib/proof_summary.sh --expected tests/proofs.expected --full no $logs > "$work/summary" 2>&1
# every row step 5 added, proven by the test it names (with its count)
while read -r id _; do
    row=$(awk -v id="$id" '$1 == id { print; exit }' "$work/summary")
    echo "# summary: ${row:-$id: no row}"
    case $row in *" proven "*) ;; *) bad="$bad $id" ;; esac
done < "$work/rows"
for id in unwind.single-step $( [ "$host" != x86_64 ] || echo publish.frameless-x86_64 ); do
    grep -q "^ *$id  *proven " "$work/summary" || bad="$bad $id"
done
t2=$(date +%s)
[ -z "$bad" ] || fail "tables $new $new32 added by the guide's steps:$bad"

# and a table that lacks a required field is refused when a context
# opens, not at a publish later: the drill's table without .dwarf_regs
sed -i '/^ *\.dwarf_regs *=/d' "src/arch/$new.c"
make -s examples/hello tools/perftramp > "$work/make2.log" 2>&1 || { tail -n 30 "$work/make2.log"; fail "the copy without .dwarf_regs does not build"; }
./examples/hello > "$work/hello.out" 2>&1 && fail "perftramp_open accepted the table $new without .dwarf_regs"
grep -q '^perftramp_open: Invalid argument$' "$work/hello.out" ||
    { cat "$work/hello.out"; fail "examples/hello without .dwarf_regs: not EINVAL at perftramp_open"; }
./tools/perftramp arch > "$work/arch.out" 2>&1
grep -q "^$new .*BROKEN TABLE: table has no .dwarf_regs" "$work/arch.out" ||
    { cat "$work/arch.out"; fail "perftramp arch does not call the table without .dwarf_regs broken"; }
echo "# without .dwarf_regs: $(cat "$work/hello.out"); perftramp arch: $(grep "^$new " "$work/arch.out")"
echo "PROOF: arch.port-drill proven table $new${new32:+ and the 32-bit $new32} added by docs/porting.md's steps 1-5: the 6 proof rows of each (reference clang and gas, executed, unwound, every boundary, frameless publish) proven, and contract, single step, publish hold for $new as the host table; without .dwarf_regs it is refused at perftramp_open (EINVAL) and by perftramp arch (rebuild $((t1 - t0))s, tests $((t2 - t1))s)"
exit 0
