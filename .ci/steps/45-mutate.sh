#!/bin/bash
# SPDX-License-Identifier: MIT
# Mutation score: tests/mutate.sh breaks the product on purpose, once per
# line of tests/mutations/list.txt (CFI rules of every architecture, the
# jitdump's unwinding info, perf map names, the GDB JIT image), in a scratch
# copy, and fails if any mutation survives its killer tests.
# The whole list takes about 45 minutes on 2 cores, more than CI's budget:
# each CI run takes one slice of PT_MUTATE_SLICES (16: seven or eight
# mutations, at most one of them killed by an emulated machine; about 4
# minutes, where a slice of eight took about 6 to 9), chosen by the number of
# commits, so sixteen consecutive commits run every mutation; the other
# slices are still checked for STALE lines.  Killers that passed in this
# tree's `make check` (the README's command, just run) are not rerun for
# the baseline.  `make check-mutations` runs the whole list.  See
# docs/testing.md, "Mutation score".
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
k=${PT_MUTATE_SLICES:-16}
n=$(( $(git rev-list --count HEAD) % k ))
args=(--slice "$n/$k")
[ -f libperftramp_core.la ] && args+=(--baseline-from "$PWD")
bash tests/mutate.sh "${args[@]}"
echo "45-mutate: slice $n/$k in $(( $(date +%s) - start ))s (make check-mutations: every slice)"
