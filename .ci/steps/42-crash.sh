#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-crash: the 1,000-trial crash torture (issue 39), each trial a
# producer with every output on SIGKILLed mid-write, about 1 in 20 under
# perf (docs/testing.md, "Killed mid-write").  make check ran 100 trials;
# this is the run the table in docs/testing.md reports.  Uses the tree CI
# already built (quickstart configures in-tree), else its own build in
# /tmp/ci-crash.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
if [ -f Makefile ]; then
    build=$PWD
else
    ci_src /tmp/ci-crash-src
    ci_build "$CI_SRC_DIR" /tmp/ci-crash
    build=/tmp/ci-crash
fi
if ! (cd "$build" && make -s check-crash); then
    ci_logs "$build"
    exit 1
fi
sed -n '/^=== crash torture/,$p' "$build/tests/torture/crash_torture.log"
# the proofs above count trials: the run must be the 1,000 of the table
grep -q '^PROOF: crash.jitdump proven trials \(1[0-9]\{3\}\)/' "$build/tests/torture/crash_torture.log" || {
    echo "42-crash: fewer than 1,000 trials proven"
    exit 1
}
