#!/bin/sh
# SPDX-License-Identifier: MIT
# `make python PYTHON=...` refuses, with the reason, an interpreter the
# module cannot be built for: another version (3.10, 3.14), another
# implementation, a free-threaded build, missing internal headers, no such
# file.  Stand-in interpreters answer pyconfig.sh's one question the way
# such Pythons would.  Needs no real Python.
# PROOF: python.refusal.
set -u
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pt-pyrefuse.XXXXXX") || exit 99
trap 'rm -rf "$tmp"' EXIT
fails=0
# fake NAME IMPL VERSION INCLUDE NOGIL: a stand-in interpreter
fake() {
    printf '#!/bin/sh\nprintf "%%s\\n" %s %s %s %s .cpython-x.so %s\n' "$2" "$3" "$4" "$5" "$tmp/$1" > "$tmp/$1"
    chmod +x "$tmp/$1"
}
mkdir -p "$tmp/inc/internal" "$tmp/noinc"
touch "$tmp/inc/internal/pycore_frame.h"
fake py310 cpython 3.10 "$tmp/inc" 0
fake py314 cpython 3.14 "$tmp/inc" 0
fake pypy pypy 3.11 "$tmp/inc" 0
fake py313t cpython 3.13 "$tmp/inc" 1
fake py312noheaders cpython 3.12 "$tmp/noinc" 0
fake py312 cpython 3.12 "$tmp/inc" 0
# expect NAME REASON: make python refuses NAME, saying REASON
expect() {
    out=$(env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "${PT_BUILDDIR:-.}" python PYTHON="$tmp/$1" 2>&1)
    st=$?
    if [ $st -ne 0 ] && echo "$out" | grep -q "$2"; then
        echo "ok: $1 refused: $(echo "$out" | grep "$2" | head -n 1)"
    else
        echo "FAIL: $1: exit $st, expected '$2' in: $out"
        fails=$((fails + 1))
    fi
}
expect py310 "supports CPython 3.11, 3.12 and 3.13"
expect py314 "supports CPython 3.11, 3.12 and 3.13"
expect pypy "is pypy 3.11; perftramp's module supports CPython"
expect py313t "free-threaded build"
expect py312noheaders "internal headers"
expect nonexistent "not found"
# the stand-in that pyconfig.sh accepts: the refusals above are not blanket ones
got=$(PYTHON=$tmp/py312 sh "${PT_SRCDIR:-.}/examples/python/pyconfig.sh" version 2>&1)
[ "$got" = 3.12 ] || { echo "FAIL: pyconfig.sh refused a supported stand-in: $got"; fails=$((fails + 1)); }
if [ $fails -eq 0 ]; then
    echo "PROOF: python.refusal proven make python refuses 3.10, 3.14, PyPy, free-threaded 3.13t, missing internal headers, a missing interpreter, each with its reason"
    exit 0
fi
echo "PROOF: python.refusal failed $fails refusal(s) wrong"
exit 1
