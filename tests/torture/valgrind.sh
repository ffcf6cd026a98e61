#!/bin/sh
# SPDX-License-Identifier: MIT
# LOG_COMPILER of `make check-valgrind`: one test under memcheck.
# - Check forks each test by default and valgrind would only see the
#   parent: CK_FORK=no keeps the tests in the process valgrind watches.
# - Memory errors fail the test in every process (--error-exitcode; a
#   forked child that hits one exits 99, and its test sees that).
# - Definite leaks fail the test only in the test's own process: children
#   that a test forks end with _exit() and legitimately leave the parent's
#   heap behind.  One log per process (%p); the root of the process tree
#   is the test itself.
CK_FORK=no
export CK_FORK
logs=$(mktemp -d "${TMPDIR:-/tmp}/pt-vg.XXXXXX") || exit 99
"${PT_BUILDDIR:?}/libtool" --mode=execute valgrind --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=none \
    --smc-check=all --log-file="$logs/vg.%p" "$@"
rc=$?
pids=$(for f in "$logs"/vg.*; do printf "%s " "${f##*.}"; done)
root=
for f in "$logs"/vg.*; do
    ppid=$(sed -n 's/^==[0-9]*== Parent PID: \([0-9]*\)$/\1/p' "$f")
    case " $pids " in *" $ppid "*) ;; *) root=$f ;; esac
done
if [ -n "$root" ] && grep -Eq 'definitely lost: [1-9]' "$root"; then
    echo "valgrind: definite leak in the test process"
    rc=99
fi
if [ "$rc" -ne 0 ] && [ "$rc" -ne 77 ]; then
    for f in "$logs"/vg.*; do
        grep -Eq 'ERROR SUMMARY: [1-9]|definitely lost: [1-9]' "$f" && cat "$f"
    done
fi
rm -rf "$logs"
exit $rc
