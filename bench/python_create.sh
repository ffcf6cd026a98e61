#!/bin/sh
# SPDX-License-Identifier: MIT
# Trampoline creation, perftramp's CPython module against CPython's own
# (-X perf; -X perf_jit on 3.13+), on every supported CPython found here
# (examples/python/pythons.sh) with the module built: bench/python_create.py
# once per version, each key prefixed py3X_.  A version that cannot run
# prints its keys as "not run: <reason>".
#   python_create.sh [ROUNDS]   (default 15: one round's ratio moves by +-15% on a
#   shared 2-core VM: the same code gave 0.926 over 15 rounds, 1.011 over 5;
#   ~70 s; `make bench`'s quick mode passes 1)
set -u
srcdir=${PT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
pkgdir=$(cd "${PT_BUILDDIR:-.}" && pwd)/examples/python # absolute: the runs start in their own directories
rounds=${1:-15}
keys="create_vs_builtin rss_per_fn_vs_builtin create_vs_builtin_jit rss_per_fn_vs_builtin_jit"
not_run() { # tag reason
    for k in $keys; do echo "py$1_$k: not run: $2"; done
}
while read -r ver exe reason; do
    tag=$(echo "$ver" | tr -d .)
    [ "$tag" -lt 312 ] 2> /dev/null && continue
    if [ "$exe" = - ]; then
        not_run "$tag" "$reason"
        continue
    fi
    if ! ls "$pkgdir"/perftramp/_perftramp.cpython-"$tag"*.so > /dev/null 2>&1; then
        not_run "$tag" "module not built for $exe (make python PYTHON=$exe)"
        continue
    fi
    PYTHONPATH=$pkgdir${PYTHONPATH:+:$PYTHONPATH} "$exe" "$srcdir/bench/python_create.py" run "$rounds" |
        sed -e "s/^\([a-z_]*\): /py${tag}_\1: /" -e "s/^# /# py${tag}: /" ||
        not_run "$tag" "bench/python_create.py failed"
done << EOF2
$(sh "$srcdir/examples/python/pythons.sh")
EOF2
# no supported CPython at all: the 3.12 keys say why
sh "$srcdir/examples/python/pythons.sh" | grep -q '^3\.1[2-9] ' || not_run 312 "no CPython 3.12 here (examples/python/pythons.sh)"
exit 0
