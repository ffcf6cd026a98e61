#!/bin/sh
# SPDX-License-Identifier: MIT
# pip install ./examples/python (pyproject.toml, build_backend/): the module
# built against an installed libperftramp found with pkg-config, offline
# (pip --no-index), on every supported CPython found here.  The library is
# installed once into a private root (make install DESTDIR=...) and found
# through PKG_CONFIG_PATH + PKG_CONFIG_SYSROOT_DIR; each CPython gets a
# private venv (--without-pip: the interpreter's own pip installs into it
# with --python).  Then `python -m perftramp` runs from the venv with the
# module linked to that libperftramp, pip uninstall removes it, and
# without perftramp.pc the build stops with the reason.
# PROOF: python.<ver>.pip per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"

pt_make() { # a sub-make of the build tree, outside this make check's
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "${PT_BUILDDIR:-.}" "$@"
}
root=$pt_top/root
pt_make install DESTDIR="$root" > "$pt_top/install.log" 2>&1 || { cat "$pt_top/install.log"; echo "FAIL: make install DESTDIR=..."; exit 1; }
pc=$(find "$root" -name perftramp.pc | head -n 1)
[ -n "$pc" ] || { echo "FAIL: make install put no perftramp.pc under $root"; exit 1; }
PKG_CONFIG_PATH=$(dirname "$pc") PKG_CONFIG_SYSROOT_DIR=$root
export PKG_CONFIG_PATH PKG_CONFIG_SYSROOT_DIR
libdir=$(dirname "$(dirname "$pc")")
# the project directory, copied: pip builds in it, and the source tree may be read-only
cp -R "${PT_SRCDIR:-.}/examples/python" "$pt_top/project"

pip_test() {
    unset PYTHONPATH # the installed copy must be found without it
    "$PYTHON" -m pip --version > pip.log 2>&1 || not_run "$PYTHON has no pip: $(tail -n 1 pip.log)"
    "$PYTHON" -m venv --without-pip venv > venv.log 2>&1 || not_run "$PYTHON -m venv: $(tail -n 1 venv.log)"
    py=$PWD/venv/bin/python3
    "$PYTHON" -m pip --python "$py" install --no-index --no-cache-dir "$pt_top/project" > install.log 2>&1 ||
        { cat install.log; fail "pip install --no-index ./examples/python"; }
    grep -E 'perftramp_build|Successfully' install.log
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    so=$(ls "$site"/perftramp/_perftramp.cpython-"$(echo "$PYVER" | tr -d .)"*.so 2> /dev/null)
    [ -n "$so" ] || fail "no extension module for $PYVER in $site/perftramp"
    linked=$(ldd "$so" | awk '$1 ~ /^libperftramp\.so/ { print $3 }')
    case $linked in "$libdir"/*) ;; *) fail "the module links '$linked', not $libdir's libperftramp" ;; esac
    cat > script.py << 'PY'
import os
import perftramp
print("pid", os.getpid(), flush=True)
print("module", perftramp.__file__)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
fib(12)
with open("/tmp/perf-%d.map" % os.getpid()) as f:
    print("fib in the perf map:", any(" py::fib:" in line for line in f))
PY
    # the ASan build's library needs the sanitizer runtimes preloaded (python_lib.sh)
    env ${preload:+LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0} "$py" -m perftramp --outputs perfmap script.py > out 2>&1
    st=$?
    cat out
    pid=$(sed -n 's/^pid //p' out)
    [ -n "$pid" ] && forget_pid "$pid"
    [ $st -eq 0 ] || fail "venv/bin/python -m perftramp script.py exited $st"
    grep -q "^module $site/perftramp/__init__.py\$" out || fail "perftramp was not imported from the venv"
    grep -q '^fib in the perf map: True$' out || fail "no py::fib trampoline in the perf map"
    "$PYTHON" -m pip --python "$py" uninstall -y perftramp > uninstall.log 2>&1 || { cat uninstall.log; fail "pip uninstall"; }
    "$py" -c 'import perftramp' > /dev/null 2>&1 && fail "perftramp still importable after pip uninstall"
    # without perftramp.pc: the build says why
    PKG_CONFIG_LIBDIR=$PWD/none PKG_CONFIG_PATH= "$PYTHON" -m pip --python "$py" install --no-index --no-cache-dir \
        "$pt_top/project" > nopc.log 2>&1 && fail "pip install succeeded without perftramp.pc"
    grep -q "pkg-config cannot find libperftramp" nopc.log || { tail -n 20 nopc.log; fail "no reason given without perftramp.pc"; }
    proven "pip install --no-index ./examples/python into a venv, built against make install's libperftramp (pkg-config), python -m perftramp ran; pip uninstall; without perftramp.pc it stops with the reason"
}
each_python pip pip_test
python_exit
