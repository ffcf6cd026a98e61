#!/bin/bash
# SPDX-License-Identifier: MIT
# make check-torture: hostile files and names, full disks, threads, fork,
# allocation faults, misuse (issue 9).  Uses the tree CI already built
# (quickstart configures in-tree), else its own build in /tmp/ci-torture.
set -euo pipefail
cd "$(dirname "$0")/../.."
. tests/lib/ci_lib.sh
ci_target torture check-torture
