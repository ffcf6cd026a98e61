#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo (examples/demo.sh) end to end: every profile (jitdump + dwarf,
# perf map + fp, ELF arenas + dwarf without -k 1 or inject) shows the tiny::
# frames of hot.tiny in caller order down to main(), and the demo leaves
# no file behind (temporary directory, jitted-*.so, perftramp-*.so,
# /tmp/perf-<pid>.map).  The ELF part may say SKIP with its reason (a
# noexec TMPDIR): then two profiles.
set -u
srcdir=${PT_SRCDIR:-.}
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# PROOF: demo.perf-profile (docs/testing.md)
fail() {
    echo "PROOF: demo.perf-profile failed $*"
    echo "FAIL: $*"
    exit 1
}
mkdir "$tmp/t"
TMPDIR=$tmp/t sh "$srcdir/examples/demo.sh" > "$tmp/out" 2> "$tmp/err" || {
    cat "$tmp/out" "$tmp/err"
    fail "examples/demo.sh failed"
}
cat "$tmp/out"
[ -z "$(ls -A "$tmp/t")" ] || fail "the demo left files in its TMPDIR: $(ls -A "$tmp/t")"
for map in $(sed -n 's|.*\(/tmp/perf-[0-9]*\.map\).*|\1|p' "$tmp/out"); do
    [ ! -e "$map" ] || fail "the demo left $map behind"
done
if grep -q '^perf cannot profile here' "$tmp/out"; then
    grep -q 'tiny::collatz_next' "$tmp/out" || fail "the fallback shows no tiny:: trampoline"
    grep -q -e '^  perftramp-[0-9]*-[0-9]*\.so: .*tiny::collatz_next' -e '^  SKIP: ELF arenas: ..*' "$tmp/out" ||
        fail "the fallback shows neither an ELF arena's symbols nor why not"
    echo "PROOF: demo.perf-profile not-run perf cannot profile here (the fallback works)"
    echo "SKIP: perf cannot profile here; the fallback (perf map, jitdump summary, ELF arena symbols) works"
    exit 77
fi
grep -q '^--- 3\. ELF arenas: no -k 1, no inject$' "$tmp/out" || fail "the demo has no ELF arenas part"
if grep -q '^  SKIP: ELF arenas: ..*' "$tmp/out"; then
    # Only a noexec TMPDIR excuses the ELF part; no file on a usable mount is a bug.
    grep -q '^  SKIP: ELF arenas: .* is on a noexec mount' "$tmp/out" ||
        fail "the ELF part wrote no file: $(sed -n 's/^  SKIP: ELF arenas: //p' "$tmp/out" | head -1)"
    profiles=2
    elf_note="the ELF part skipped: $(sed -n 's/^  SKIP: ELF arenas: //p' "$tmp/out" | head -1)"
else
    profiles=3
    elf_note="ELF arenas + dwarf, no -k 1, no inject"
    grep -q '^  perftramp-[0-9]*-[0-9]*\.so: .*tiny::collatz_next' "$tmp/out" ||
        fail "the ELF part lists no perftramp-<pid>-<n>.so with the tiny:: symbols"
fi
deepest='main > tiny::<main> > tiny::longest > tiny::collatz_length > tiny::collatz_next'
n=$(grep -c -F "$deepest" "$tmp/out")
[ "$n" = $profiles ] || fail "'$deepest' is in $n of the $profiles profiles"
# Trampolines must not break unwinding: of the samples with a frame in the
# interpreter or a trampoline, nearly all unwind down to main().  (Other
# samples may stop in code without frame pointers or CFI, e.g. a sanitizer
# runtime: not counted.)
awk '/samples with a frame in tiny or a trampoline;/ {
        gsub(/[()%]/, "", $12); n++
        if ($1 + 0 < 50) { print "FAIL: only " $1 " samples in interpreted code"; bad = 1 }
        if ($12 + 0 < 95) { print "FAIL: only " $12 "% of the samples in interpreted code reach main()"; bad = 1 }
     }
     END { exit bad || n != profiles }' profiles=$profiles "$tmp/out" || fail "interpreted stacks do not unwind down to main() (see above)"
# collatz_next is the hot inner function: a real share in every profile.
awk '/\[\.\] tiny::collatz_next$/ { n++; if ($1 + 0 < 15) bad = 1 } END { exit bad || n != profiles }' \
    profiles=$profiles "$tmp/out" || fail "tiny::collatz_next has no real share in every profile"
echo "ok: all $profiles profiles show the interpreted call stacks down to main(), nothing left behind"
echo "PROOF: demo.perf-profile proven make demo: $profiles profiles (jitdump + dwarf, perf map + fp; $elf_note) show tiny:: stacks down to main()"
