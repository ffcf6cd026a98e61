#!/bin/bash
# SPDX-License-Identifier: MIT
# perftramp against a libffi with static trampolines (issue 12, point 2):
# builds Debian's libffi 3.4.4 source with --enable-exec-static-tramp into
# /opt/perftramp-ffi-static (tools/deps/ffi-static.sh; tools/install-deps
# does not run it), then runs tests/ffi_static_tramp.sh in the tree CI
# built: a second build against that libffi runs the contract, perf,
# unwinding and fork tests.  It must pass: a skip fails here.
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
sh tools/deps/ffi-static.sh
make -s check TESTS=tests/ffi_static_tramp.sh > /dev/null || true
if ! grep -q '^:test-result: PASS' tests/ffi_static_tramp.sh.trs 2>/dev/null; then
    echo "25-ffi-static: tests/ffi_static_tramp.sh did not pass"
    cat tests/ffi_static_tramp.sh.log
    exit 1
fi
grep '^PROOF:' tests/ffi_static_tramp.sh.log
echo "25-ffi-static: $(( $(date +%s) - start ))s"
