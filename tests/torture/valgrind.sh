#!/bin/sh
# LOG_COMPILER of `make check-valgrind`: one test under memcheck.  Check
# forks each test by default and valgrind would only see the parent:
# CK_FORK=no keeps the tests in the process valgrind watches.  Errors and
# definite leaks fail the test; the test's own status (77: skip) passes on.
CK_FORK=no
export CK_FORK
exec "${PT_BUILDDIR:?}/libtool" --mode=execute valgrind -q --error-exitcode=99 \
    --leak-check=full --show-leak-kinds=definite --errors-for-leak-kinds=definite \
    --smc-check=all "$@"
