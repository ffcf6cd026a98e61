#!/bin/sh
# SPDX-License-Identifier: MIT
# make install-python: the perftramp package goes into the chosen Python's
# site-packages, and `python -m perftramp script.py` then works from
# outside the tree without PYTHONPATH -- on every supported CPython found
# here.  The chosen Python is a private venv of it (python -m venv
# --without-pip), so the machine's Pythons are left alone; `make install
# PYTHON=...` must install the package too (into a DESTDIR, so nothing of
# the library lands on the machine); uninstall-python must take the package
# out again.
# PROOF: python.<ver>.install per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"

# A sub-make of the build tree, not of this make check: its job server and
# command-line variables stay out.
pt_make() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "${PT_BUILDDIR:-.}" "$@"
}

install() {
    unset PYTHONPATH # the installed copy must be found without it
    "$PYTHON" -m venv --without-pip venv > venv.log 2>&1 ||
        not_run "$PYTHON -m venv cannot make a venv: $(tail -n 1 venv.log)"
    py=$PWD/venv/bin/python3
    site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    pt_make install-python PYTHON="$py" > install.log 2>&1 || { cat install.log; fail "make install-python"; }
    cat install.log
    [ -f "$site/perftramp/__main__.py" ] || fail "nothing installed in $site/perftramp"
    ls "$site"/perftramp/_perftramp.cpython-"$(echo "$PYVER" | tr -d .)"*.so > /dev/null 2>&1 ||
        fail "no extension module for $PYVER in $site/perftramp"
    cat > script.py << 'PY'
import os, sys
import perftramp
print("pid", os.getpid(), flush=True)
print("module", perftramp.__file__)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print("fib", fib(15))
with open("/tmp/perf-%d.map" % os.getpid()) as f:
    names = [line.split(" ", 2)[2].strip() for line in f if line != "\n"]  # "\n": padding (src/outputs/perfmap.c)
print("fib in the perf map:", any(n.startswith("py::fib:") for n in names))
PY
    # the ASan build's module needs the sanitizer runtimes preloaded (python_lib.sh)
    env ${preload:+LD_PRELOAD=$preload ASAN_OPTIONS=detect_leaks=0} "$py" -m perftramp --outputs perfmap script.py > out 2>&1
    status=$?
    cat out
    pid=$(sed -n 's/^pid //p' out)
    [ -n "$pid" ] && forget_pid "$pid"
    [ "$status" -eq 0 ] || fail "python -m perftramp script.py exited $status"
    grep -q "^module $site/perftramp/__init__.py\$" out || fail "perftramp was not imported from $site"
    grep -q '^fib 610$' out || fail "the script did not run"
    grep -q '^fib in the perf map: True$' out || fail "no py::fib trampoline in /tmp/perf-$pid.map"
    pt_make uninstall-python PYTHON="$py" > uninstall.log 2>&1 || { cat uninstall.log; fail "make uninstall-python"; }
    [ ! -e "$site/perftramp" ] || fail "make uninstall-python left $site/perftramp"
    "$py" -c 'import perftramp' > /dev/null 2>&1 && fail "perftramp still importable after uninstall-python"

    # make install PYTHON=...: the library and the module, both under DESTDIR
    pt_make install PYTHON="$py" DESTDIR="$PWD/root" > make-install.log 2>&1 ||
        { cat make-install.log; fail "make install PYTHON=$py DESTDIR=..."; }
    [ -f "$PWD/root$site/perftramp/__main__.py" ] || fail "make install PYTHON=... did not install the module"
    # the prefix depends on how the tree was configured (distcheck nests it deep)
    [ -n "$(find "$PWD/root" -name libperftramp.so -print -quit)" ] ||
        fail "make install PYTHON=... did not install the library"
    pt_make uninstall PYTHON="$py" DESTDIR="$PWD/root" > make-uninstall.log 2>&1 ||
        { cat make-uninstall.log; fail "make uninstall PYTHON=..."; }
    [ ! -e "$PWD/root$site/perftramp" ] || fail "make uninstall PYTHON=... left the module"
    proven "make install-python into a venv; python -m perftramp from outside the tree without PYTHONPATH (py::fib in the perf map); uninstall-python; make install/uninstall PYTHON=... with the library"
}
each_python install install
python_exit
