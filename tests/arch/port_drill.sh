#!/bin/sh
# SPDX-License-Identifier: MIT
# The porting guide, followed by a script: copies the built tree, adds a
# new table <host>_drill (a renamed copy of the host's table, as
# src/arch/x86_64_near.c began) by exactly the per-table steps of
# docs/porting.md's checklist (1-5; the per-machine steps 6-10 are done
# already for a machine that has a table), rebuilds what they touch (make
# reruns automake for mk/arch.am) and runs, with the new table as the host
# table, the reference (tests/check_reference), contract
# (tests/check_contract), boundary (tests/check_boundaries) and publish
# (tests/check_dynamic) proofs.  Prints
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

sym=$(sed -n 's/^const struct pt_arch pt_arch_\([A-Za-z0-9_]*\) *=.*/\1/p' "src/arch/$host.c")
[ -n "$sym" ] || fail "no const struct pt_arch in src/arch/$host.c"
# 1. the table
sed -e "s/^const struct pt_arch pt_arch_$sym /const struct pt_arch pt_arch_$new /" \
    -e "s/^\\( *\\.name = \\)\"$host\"/\\1\"$new\"/" "src/arch/$host.c" > "src/arch/$new.c"
# 2. arch_list.c: the extern, the list entry, the pt_arch_host() case
awk -v sym="$sym" -v new="$new" -v host="$host" '
    { print }
    $0 == "extern const struct pt_arch pt_arch_" sym ";" { print "extern const struct pt_arch pt_arch_" new ";" }
    $0 == "    &pt_arch_" sym "," { print "    &pt_arch_" new "," }
' src/arch/arch_list.c | sed "s/return pt_arch_find(\"$host\");/return pt_arch_find(\"$new\");/" > "$work/arch_list.c"
mv "$work/arch_list.c" src/arch/arch_list.c
grep -q "pt_arch_find(\"$new\")" src/arch/arch_list.c || fail "no pt_arch_host() case for $host in arch_list.c"
# 3. mk/arch.am: the source and the reference
printf 'libperftramp_core_la_SOURCES += src/arch/%s.c\nEXTRA_DIST += tests/ref/%s.S\n' "$new" "$new" >> mk/arch.am
# 4. the reference object
sed "s/perftramp_ref_$host\\b/perftramp_ref_$new/g" "tests/ref/$host.S" > "tests/ref/$new.S"
# 5. the proof rows
for id in reference-clang reference-gas; do
    printf 'arch.%s.%s tests/check_reference - required\n' "$new" "$id" >> tests/proofs.expected
done

# rebuild what the steps touched: make reruns automake (mk/arch.am) and
# config.status, compiles the new table and arch_list.c, relinks
progs="tests/check_reference tests/check_contract tests/check_boundaries tests/check_dynamic"
# shellcheck disable=SC2086
make -s $progs > "$work/make.log" 2>&1 || { tail -n 30 "$work/make.log"; fail "the copy does not build"; }
grep -q "src/arch/$new.c" Makefile.in || fail "automake did not take the table from mk/arch.am"
t1=$(date +%s)

export PT_SRCDIR="$tree" PT_BUILDDIR="$tree" PT_HOST_ARCH="$new"
bad=
proof() { # test, proof id, what
    grep -q "^PROOF: $2 proven" "$work/$(basename "$1").out" || bad="$bad $3"
}
for t in $progs; do
    ./$t > "$work/$(basename "$t").out" 2>&1 || bad="$bad $(basename "$t")"
    sed "s|^|# $(basename "$t"): |" "$work/$(basename "$t").out" | grep -E 'PROOF|[0-9]+%|FAIL|[Ee]rror' | head -n 20
done
proof tests/check_reference "arch.$new.reference-clang" reference-clang
proof tests/check_reference "arch.$new.reference-gas" reference-gas
proof tests/check_boundaries unwind.single-step boundaries
# tests/check_dynamic's frameless function is x86-64 code
[ "$host" != x86_64 ] || proof tests/check_dynamic publish.frameless-x86_64 publish
t2=$(date +%s)
[ -z "$bad" ] || fail "table $new added by the guide's steps:$bad"
echo "PROOF: arch.port-drill proven table $new added by docs/porting.md's steps 1-5: reference (clang, gas), contract, every boundary, publish hold for it as the host table (rebuild $((t1 - t0))s, tests $((t2 - t1))s)"
exit 0
