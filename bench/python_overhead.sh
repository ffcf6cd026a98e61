#!/bin/sh
# SPDX-License-Identifier: MIT
# Overhead of perftramp's CPython 3.11 module (make python): enabled against
# disabled on CPU-bound workloads (bench/python_overhead.py).  Prints
# key: value lines; exits 77 with a reason when the module or python3.11
# is missing.  Usage: python_overhead.sh [ROUNDS [OUTPUTS]]
set -u
srcdir=${PT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
pkgdir=${PT_BUILDDIR:-.}/examples/python
PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2> /dev/null; then
    echo "python_overhead: skipped ($PYTHON is not CPython 3.11)"
    exit 77
fi
if ! ls "$pkgdir"/perftramp/_perftramp.cpython-311* > /dev/null 2>&1; then
    echo "python_overhead: skipped (module not built: make python)"
    exit 77
fi
PYTHONPATH=$pkgdir${PYTHONPATH:+:$PYTHONPATH} exec "$PYTHON" "$srcdir/bench/python_overhead.py" "$@"
