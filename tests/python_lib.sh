# SPDX-License-Identifier: MIT
# Shared by tests/python_*.sh: find the built perftramp module and the
# python3.11 it was built for, or SKIP (exit 77) with the reason.  Defines
# run_python, which runs $PYTHON with the module importable -- and, when
# the module was built with sanitizers (the CI's ASan pass), with their
# runtimes preloaded, since python3 itself is not instrumented.
# A test sets proof_id before sourcing this: a skip prints its not-run line.
pkgdir=${PT_BUILDDIR:-.}/examples/python
PYTHON=${PYTHON:-python3}
skip() {
    [ -z "${proof_id:-}" ] || echo "PROOF: $proof_id not-run $*"
    echo "SKIP: $*"
    exit 77
}
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2> /dev/null ||
    skip "$PYTHON is not CPython 3.11 (the perftramp module is for 3.11 only)"
module=$(ls "$pkgdir"/perftramp/_perftramp.cpython-311*.so 2> /dev/null | head -1)
[ -n "$module" ] ||
    skip "the perftramp module is not built (make python; it needs python3.11 with internal headers)"
PYTHONPATH=$pkgdir${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
preload=
for lib in libasan libubsan; do
    path=$(ldd "$module" 2> /dev/null | awk -v l="$lib" 'index($1, l ".so") == 1 { print $3 }')
    [ -n "$path" ] && preload="$preload${preload:+:}$path"
done
# `env $python_env "$PYTHON" ...` (word splitting intended: no spaces inside).
# CPython's own allocations are not freed at exit: no leak report.
python_env="PYTHONPATH=$PYTHONPATH"
[ -n "$preload" ] &&
    python_env="$python_env LD_PRELOAD=$preload ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
run_python() {
    env $python_env "$PYTHON" "$@"
}
