#!/bin/bash
# SPDX-License-Identifier: MIT
# Mutation score: tests/mutate.sh breaks the product on purpose, once per
# line of tests/mutations/list.txt (CFI rules of every architecture, the
# jitdump's unwinding info, perf map names, the GDB JIT image), in a scratch
# copy, and fails if any mutation survives its killer tests.  Prints the
# score and the time.  See docs/testing.md, "Mutation score".
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
bash tests/mutate.sh
echo "45-mutate: $(( $(date +%s) - start ))s"
