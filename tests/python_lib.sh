# Shared by tests/python_*.sh: find the built perftramp module and the
# python3.11 it was built for, or SKIP (exit 77) with the reason.
pkgdir=${PT_BUILDDIR:-.}/examples/python
PYTHON=${PYTHON:-python3}
skip() {
    echo "SKIP: $*"
    exit 77
}
"$PYTHON" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))' 2> /dev/null ||
    skip "$PYTHON is not CPython 3.11 (the perftramp module is for 3.11 only)"
ls "$pkgdir"/perftramp/_perftramp.cpython-311* > /dev/null 2>&1 ||
    skip "the perftramp module is not built (make python; it needs python3.11 with internal headers)"
PYTHONPATH=$pkgdir${PYTHONPATH:+:$PYTHONPATH}
export PYTHONPATH
