#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp's CPython 3.11 module: enable/disable, fork, exceptions,
# generators, coroutines and threads through trampolines (tests/python_api.py).
set -u
. "${PT_SRCDIR:-.}/tests/python_lib.sh"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
# A copy outside the source tree: its path is what the trampolines are named after.
cp "${PT_SRCDIR:-.}/tests/python_api.py" "$tmp/api.py"
run_python "$tmp/api.py"
