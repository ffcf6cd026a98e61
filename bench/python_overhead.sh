#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp's CPython module against CPython's own perf support (-X perf,
# -X perf_jit), on every supported CPython found here
# (examples/python/pythons.sh) with the module built (make python; `make
# bench` builds it for every interpreter found): bench/python_overhead.py
# once per version, each key prefixed py3X_.  Exits 77 with the reason
# when no version can run.
#   python_overhead.sh [ROUNDS [REPS [STACK_SECONDS]]]   (default 5 5 1;
#   `make bench`'s quick mode passes 1 1 0.3, and with BENCH_QUICK set only
#   the newest version runs: a smoke run of every path, -X perf_jit's
#   included, in about a third of the time)
set -u
srcdir=${PT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
pkgdir=$(cd "${PT_BUILDDIR:-.}" && pwd)/examples/python # absolute: the runs start in their own directories
rounds=${1:-5} reps=${2:-5} seconds=${3:-1}
ran=0 why=
while read -r ver exe reason; do
    tag=$(echo "$ver" | tr -d .)
    if [ "$exe" = - ]; then
        echo "py${tag}_version: n/a ($reason)"
        continue
    fi
    if ! ls "$pkgdir"/perftramp/_perftramp.cpython-"$tag"*.so > /dev/null 2>&1; then
        echo "py${tag}_version: n/a (module not built for $exe: make python PYTHON=$exe)"
        continue
    fi
    PYTHONPATH=$pkgdir${PYTHONPATH:+:$PYTHONPATH} "$exe" "$srcdir/bench/python_overhead.py" run \
        "$rounds" "$reps" "$seconds" "$srcdir" || why="$why; $ver failed"
    ran=$((ran + 1))
done << EOF2
$(sh "$srcdir/examples/python/pythons.sh" | if [ "${BENCH_QUICK:-0}" != 0 ]; then grep -v ' - ' | tail -n 1; else cat; fi)
EOF2
if [ $ran -eq 0 ]; then
    echo "python_overhead: skipped (no supported CPython with the module built)"
    exit 77
fi
[ -z "$why" ] || { echo "python_overhead: ${why#; }" >&2; exit 1; }
