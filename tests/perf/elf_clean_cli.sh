#!/bin/sh
# SPDX-License-Identifier: MIT
# `perftramp clean [DIR]` from the command line: in a directory holding a
# real ELF arena left by a process that exited (examples/tiny with
# PERFTRAMP=elf), it removes that file and keeps the file of a process that
# still runs, another user's file, a symlink and other names; a DIR it
# cannot use gets a clear message and exit status 2; without DIR it uses
# $PERFTRAMP_ELF_DIR.  Another user's file needs root to plant: without
# root every other check runs, then the test says SKIP for that part.
set -u
: "${PT_BUILDDIR:=.}"
PT="$PT_BUILDDIR/tools/perftramp"
TINY="$PT_BUILDDIR/examples/tiny/tiny"
: "${PT_SRCDIR:=.}"
[ -x "$PT" ] || { echo "FAIL: $PT not built"; exit 1; }
[ -x "$TINY" ] || { echo "FAIL: $TINY not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/elf_clean_cli.XXXXXX") || exit 1
live=
trap '[ -n "$live" ] && kill "$live" 2>/dev/null; rm -rf "$work"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }

# A pid that is surely gone: a child that exited and was reaped.
true &
dead=$!
wait "$dead"
kill -0 "$dead" 2>/dev/null && { echo "SKIP: pid $dead was reused at once"; exit 77; }

d=$work/arenas
mkdir -m 700 "$d"
# 1. a real arena of a process that has exited
PERFTRAMP=elf PERFTRAMP_ELF_DIR=$d "$TINY" "$PT_SRCDIR/examples/tiny/fib.tiny" > "$work/tiny.out" 2>&1 ||
    { cat "$work/tiny.out"; echo "FAIL: tiny with PERFTRAMP=elf failed"; exit 1; }
stale=$(ls "$d" | grep '^perftramp-[0-9]*-[0-9]*\.so$')
[ "$(echo "$stale" | wc -w)" -ge 1 ] || { echo "FAIL: tiny left no perftramp-<pid>-<n>.so in $d"; exit 1; }
# 2. the same bytes under the name of a process that runs
sleep 300 &
live=$!
one=$(echo "$stale" | head -n 1)
cp "$d/$one" "$d/perftramp-$live-0.so"
# 3. names clean must not touch: a dead pid's name as a symlink, other names
ln -s "$one" "$d/perftramp-$dead-7.so"
cp "$d/$one" "$d/perftramp-$dead-0.so.keep"
cp "$d/$one" "$d/libother-$dead.so"
# 4. another user's file with a dead pid's name (root only)
foreign=
if [ "$(id -u)" = 0 ]; then
    cp "$d/$one" "$d/perftramp-$dead-1.so"
    chown 65534 "$d/perftramp-$dead-1.so" && foreign=perftramp-$dead-1.so
fi

"$PT" clean "$d" > "$work/out" 2> "$work/err"
rc=$?
cat "$work/out" "$work/err"
[ $rc = 0 ] || bad "clean $d: exit $rc, want 0"
n=$(echo "$stale" | wc -w)
grep -q "^perftramp clean: removed $n files\? of processes that are gone from $d\$" "$work/out" ||
    bad "clean does not report removing the $n stale file(s)"
for f in $stale; do
    [ ! -e "$d/$f" ] || bad "the exited process's $f is still there"
done
[ -f "$d/perftramp-$live-0.so" ] || bad "the running process's perftramp-$live-0.so was removed"
[ -L "$d/perftramp-$dead-7.so" ] || bad "the symlink perftramp-$dead-7.so was removed"
[ -f "$d/perftramp-$dead-0.so.keep" ] || bad "perftramp-$dead-0.so.keep (another name) was removed"
[ -f "$d/libother-$dead.so" ] || bad "libother-$dead.so was removed"
if [ -n "$foreign" ]; then
    [ -f "$d/$foreign" ] || bad "another user's $foreign was removed"
fi
# Once more: nothing left to remove.
"$PT" clean "$d" > "$work/out2" 2>&1 || bad "a second clean failed: $(cat "$work/out2")"
grep -q "removed 0 files" "$work/out2" || bad "a second clean removed something: $(cat "$work/out2")"

# Without DIR: $PERFTRAMP_ELF_DIR.
PERFTRAMP=elf PERFTRAMP_ELF_DIR=$d "$TINY" "$PT_SRCDIR/examples/tiny/fib.tiny" > /dev/null 2>&1
PERFTRAMP_ELF_DIR=$d "$PT" clean > "$work/out3" 2>&1 || bad "clean with \$PERFTRAMP_ELF_DIR failed: $(cat "$work/out3")"
grep -q "removed [1-9][0-9]* files\? of processes that are gone from $d\$" "$work/out3" ||
    bad "clean without DIR did not use \$PERFTRAMP_ELF_DIR: $(cat "$work/out3")"
# ... and a default directory that does not exist is nothing to remove.
PERFTRAMP_ELF_DIR=$work/none "$PT" clean > "$work/out4" 2>&1 ||
    bad "clean of a missing default directory failed: $(cat "$work/out4")"
grep -q "no such directory, nothing to remove" "$work/out4" || bad "missing default directory: $(cat "$work/out4")"

# A DIR clean cannot use: exit 2, the DIR and the reason on stderr.
: > "$work/plain"
ln -s "$d" "$work/link"
for case in "$work/none:No such file or directory" "$work/plain:Not a directory" \
    "$work/link:a symbolic link, refused as the library refuses it \(give the directory itself\)"; do
    dir=${case%%:*} why=${case#*:}
    "$PT" clean "$dir" > "$work/o" 2> "$work/e"
    rc=$?
    echo "clean $dir: exit $rc: $(cat "$work/e")"
    [ $rc = 2 ] || bad "clean $dir: exit $rc, want 2"
    grep -Eq "^perftramp clean: $dir: ($why)\$" "$work/e" || bad "clean $dir: unclear message: $(cat "$work/e")"
    [ ! -s "$work/o" ] || bad "clean $dir printed to stdout: $(cat "$work/o")"
done
[ -f "$d/perftramp-$live-0.so" ] || bad "clean through a symlinked DIR removed files"
# Usage errors: exit 2 with the usage line.
for args in "-h" "$d $d"; do
    # shellcheck disable=SC2086
    "$PT" clean $args > /dev/null 2> "$work/e"
    rc=$?
    [ $rc = 2 ] && grep -q '^usage: perftramp clean \[DIR\]$' "$work/e" || bad "clean $args: exit $rc, $(cat "$work/e")"
done

if [ $fail != 0 ]; then
    echo "PROOF: elf.clean-cli failed (see FAIL lines)"
    exit 1
fi
if [ -z "$foreign" ]; then
    echo "PROOF: elf.clean-cli not-run another user's file needs root to plant (every other check passed)"
    echo "SKIP: another user's file needs root to plant (every other check passed)"
    exit 77
fi
echo "PROOF: elf.clean-cli proven perftramp clean: the exited process's $n file(s) removed; a running process's file, another user's file, a symlink and other names kept; \$PERFTRAMP_ELF_DIR used without DIR; 3 bad DIRs and 2 usages exit 2 with the reason"
