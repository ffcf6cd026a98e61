#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp's CPython 3.11 module: enable/disable, fork, exceptions,
# generators, coroutines and threads through trampolines (tests/python_api.py).
set -u
proof_id=python.api
. "${PT_SRCDIR:-.}/tests/python_lib.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# A copy outside the source tree: its path is what the trampolines are named after.
cp "${PT_SRCDIR:-.}/tests/python_api.py" "$tmp/api.py"
if run_python "$tmp/api.py"; then
    echo "PROOF: $proof_id proven the CPython 3.11 module: enable/disable, fork, exceptions, generators, coroutines, threads"
else
    echo "PROOF: $proof_id failed tests/python_api.py (see above)"
    exit 1
fi
