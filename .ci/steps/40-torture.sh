#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-torture: hostile files and names, full disks, threads, fork,
# allocation faults, misuse (issue 9).  Uses the tree CI already built
# (quickstart configures in-tree), else its own build in /tmp/ci-torture.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
if [ -f Makefile ]; then
    build=$PWD
else
    ci_src /tmp/ci-torture-src
    ci_build "$CI_SRC_DIR" /tmp/ci-torture
    build=/tmp/ci-torture
fi
if ! (cd "$build" && make -s check-torture); then
    ci_logs "$build"
    exit 1
fi
