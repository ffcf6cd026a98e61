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
# i686's `configure --host` build is tests/guest/i686_suite.sh's first part
# (then its Check programs run in the i686 machine): when that passed in
# this tree's make check, it is not built again here.
except=
if grep -qx ':test-result: PASS' tests/guest/i686_suite.sh.trs 2> /dev/null; then
    except=i686
    echo "cross i686: configure --host=i686-linux-gnu built and its Check programs passed in make check (tests/guest/i686_suite.sh)"
fi
PT_CROSS_EXCEPT=$except PT_HOST_ARCH=${PT_HOST_ARCH:-$(uname -m)} sh tests/arch/cross_configure.sh "$CI_SRC_DIR"
if [ -f tests/arch/run_foreign.sh.log ]; then
    sed -n '/^=== architectures:/,$p' tests/arch/run_foreign.sh.log
fi
[ -n "${PT_CI_SRC:-}" ] || rm -rf /tmp/ci-arch-src
echo "arch step: $(( $(date +%s) - start ))s"
