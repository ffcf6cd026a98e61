#!/bin/bash
# SPDX-License-Identifier: MIT
# Foreign architectures, beyond `make check` (which ran
# tests/arch/run_foreign.sh: contract + unwind under qemu for every table):
# the library also cross-builds with the ordinary ./configure --host=<triple>
# and its example runs under qemu.  Then the per-architecture summary.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
# an in-tree configured checkout refuses out-of-tree builds: use a copy
. tests/lib/ci_lib.sh
ci_src /tmp/ci-arch-src
PT_HOST_ARCH=$(sed -n 's/^PT_HOST_ARCH = *//p' Makefile 2>/dev/null || true)
PT_HOST_ARCH=${PT_HOST_ARCH:-$(uname -m)} sh tests/arch/cross_configure.sh "$CI_SRC_DIR"
if [ -f tests/arch/run_foreign.sh.log ]; then
    sed -n '/^=== architectures:/,$p' tests/arch/run_foreign.sh.log
fi
[ -n "${PT_CI_SRC:-}" ] || rm -rf /tmp/ci-arch-src
echo "arch step: $(( $(date +%s) - start ))s"
