#!/bin/bash
# SPDX-License-Identifier: MIT
# The CPython example (examples/python) on every supported CPython this
# machine has (examples/python/pythons.sh: pyenv's 3.11, 3.12, 3.13,
# python3.X on PATH; a fresh Debian 12 has its python3.11 with
# python3-dev, python3-venv and python3-pip from tools/deps/demo.txt).
# `make check` runs these tests only for the versions it can build; here
# every version found must have built and proven each test, pip install
# ./examples/python included (against a private install of the library).
# Only perf's absence may skip the perf test, and only a CPython without
# frame pointers may leave out its fp proof (an information line says so).
set -euo pipefail
cd "$(dirname "$0")/../.."
tests="tests/python/python_api.sh tests/python/python_perfmap.sh tests/python/python_jitdump.sh tests/python/python_perf.sh
tests/python/python_unwind.sh tests/python/python_install.sh tests/python/python_pip.sh tests/python/python_refuse.sh"
make -s python-if-possible
# The README's `make check` has just run these tests in this tree (CI): read
# its logs; otherwise (or when one is older than the library) run them.
fresh=yes
for t in $tests; do [ "$t.trs" -nt libperftramp_core.la ] || fresh=no; done
if [ $fresh = yes ]; then
    echo "70-python: reading the logs of this tree's make check (every test newer than the library)"
else
    # shellcheck disable=SC2086 # the list of tests
    make -s check TESTS="$(echo $tests)" > /dev/null || true
fi
fail=0
for t in $tests; do
    if ! grep -q '^:test-result: PASS' "$t.trs" 2> /dev/null; then
        if [ "$t" = tests/python/python_perf.sh ] && grep -q '^SKIP: perf' "$t.log"; then
            continue
        fi
        echo "70-python: $t did not pass"
        tail -n 40 "$t.log" 2> /dev/null
        fail=1
    fi
done
found=$(sh examples/python/pythons.sh | awk '$2 != "-" { print $1 }')
[ -n "$found" ] || { echo "70-python: no supported CPython found (pythons.sh: $(sh examples/python/pythons.sh | tr '\n' ';'))"; exit 1; }
for ver in $found; do
    for proof in api perfmap jitdump perf-dwarf unwind gdb install pip; do
        line=$(grep -h "^PROOF: python\.$ver\.$proof " tests/python/python_*.sh.log | tail -n 1)
        case $line in
        *" proven "*) ;;
        *)
            echo "70-python: CPython $ver: ${line:-no PROOF: python.$ver.$proof line}"
            fail=1
            ;;
        esac
    done
    line=$(grep -h "^PROOF: python\.$ver\.perf-fp \|^python\.$ver\.perf-fp: " tests/python/python_perf.sh.log | tail -n 1)
    case $line in
    *" proven "* | "python.$ver.perf-fp: does not apply here: CPython built without frame pointers"*) ;;
    *)
        echo "70-python: CPython $ver: ${line:-no PROOF: python.$ver.perf-fp line}"
        fail=1
        ;;
    esac
done
[ $fail -eq 0 ] || exit 1
echo "70-python: CPython $(echo $found | tr ' ' ','): module built, every test proven"
