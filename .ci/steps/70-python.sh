#!/bin/bash
# SPDX-License-Identifier: MIT
# The CPython 3.11 example (examples/python): `make check` runs its tests
# only when it can build the module; here it must.  Uses the in-tree build
# that README's commands made; python3-dev comes from tools/deps/demo.txt.
set -euo pipefail
cd "$(dirname "$0")/../.."
make -s python
make -s check TESTS='tests/python_api.sh tests/python_perf.sh' > /dev/null || {
    cat tests/python_api.sh.log tests/python_perf.sh.log
    exit 1
}
grep -q '^:test-result: PASS' tests/python_api.sh.trs || {
    echo "70-python: tests/python_api.sh did not pass"
    cat tests/python_api.sh.log
    exit 1
}
# The perf test may skip only for want of perf, never for want of Python.
grep -q '^:test-result: PASS' tests/python_perf.sh.trs || grep -q '^SKIP: perf' tests/python_perf.sh.log || {
    echo "70-python: tests/python_perf.sh did not pass"
    cat tests/python_perf.sh.log
    exit 1
}
echo "70-python: $(python3 --version): module built, tests passed"
