#!/bin/sh
# SPDX-License-Identifier: MIT
# make install-python: the perftramp package goes into the chosen Python's
# site-packages, and `python3 -m perftramp script.py` then works from
# outside the tree without PYTHONPATH.  The chosen Python is a private venv
# made here (python3 -m venv --without-pip), so the machine's Python is
# left alone; uninstall-python must take the package out again.
# PROOF: python.install (proven, failed, or not-run when the module cannot
# be built here).
set -u
trap '[ $? -ne 77 ] || echo "PROOF: python.install not-run (the SKIP line above says why)"' EXIT
. "${PT_SRCDIR:-.}/tests/python_lib.sh"
fail() {
    echo "FAIL: $*"
    echo "PROOF: python.install failed $*"
    exit 1
}
unset PYTHONPATH # python_lib.sh set it: the installed copy must be found without it
tmp=$(mktemp -d) || exit 99
pid=
cleanup() {
    st=$?
    rm -rf "$tmp"
    [ -z "$pid" ] || rm -f "/tmp/perf-$pid.map"
    [ $st -ne 77 ] || echo "PROOF: python.install not-run (the SKIP line above says why)"
}
trap cleanup EXIT
"$PYTHON" -m venv --without-pip "$tmp/venv" > "$tmp/venv.log" 2>&1 ||
    skip "$PYTHON -m venv cannot make a venv: $(tail -n 1 "$tmp/venv.log")"
py=$tmp/venv/bin/python3
site=$("$py" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')

# A sub-make of the build tree, not of this make check: its job server and
# command-line variables stay out.
pt_make() {
    env -u MAKEFLAGS -u MFLAGS -u MAKELEVEL make -s -C "${PT_BUILDDIR:-.}" "$@" PYTHON="$py"
}
pt_make install-python > "$tmp/install.log" 2>&1 || { cat "$tmp/install.log"; fail "make install-python"; }
cat "$tmp/install.log"
[ -f "$site/perftramp/__main__.py" ] || fail "nothing installed in $site/perftramp"
ls "$site"/perftramp/_perftramp.cpython-311*.so > /dev/null 2>&1 || fail "no extension module in $site/perftramp"

# The ASan build's module needs the sanitizer runtimes preloaded (python_lib.sh).
run() {
    if [ -n "$preload" ]; then
        env LD_PRELOAD="$preload" ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" "$py" "$@"
    else
        "$py" "$@"
    fi
}
cat > "$tmp/script.py" << 'EOF'
import os, sys
import perftramp
print("pid", os.getpid(), flush=True)
print("module", perftramp.__file__)
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)
print("fib", fib(15))
with open("/tmp/perf-%d.map" % os.getpid()) as f:
    names = [line.split(" ", 2)[2].strip() for line in f]
print("fib in the perf map:", any(n.startswith("py::fib:") for n in names))
EOF
# from outside the build and source trees
(cd "$tmp" && run -m perftramp --outputs perfmap script.py) > "$tmp/out" 2>&1
status=$?
cat "$tmp/out"
pid=$(sed -n 's/^pid //p' "$tmp/out")
[ "$status" -eq 0 ] || fail "python3 -m perftramp script.py exited $status"
grep -q "^module $site/perftramp/__init__.py\$" "$tmp/out" || fail "perftramp was not imported from $site"
grep -q '^fib 610$' "$tmp/out" || fail "the script did not run"
grep -q '^fib in the perf map: True$' "$tmp/out" || fail "no py::fib trampoline in /tmp/perf-$pid.map"

pt_make uninstall-python > "$tmp/uninstall.log" 2>&1 || { cat "$tmp/uninstall.log"; fail "make uninstall-python"; }
[ ! -e "$site/perftramp" ] || fail "make uninstall-python left $site/perftramp"
(cd "$tmp" && run -c 'import perftramp' > /dev/null 2>&1) && fail "perftramp still importable after uninstall-python"
echo "make install-python: $py -m perftramp ran script.py from $tmp with the module from $site; uninstall-python removed it"
echo "PROOF: python.install proven (make install-python into a venv; python3 -m perftramp from outside the tree, no PYTHONPATH; py::fib in the perf map)"
