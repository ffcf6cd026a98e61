#!/bin/sh
# SPDX-License-Identifier: MIT
# What building perftramp's CPython module against `${PYTHON:-python3}`
# needs, or a refusal with the reason (exit 1, message on stderr).
#   pyconfig.sh version    3.11, 3.12 or 3.13
#   pyconfig.sh cppflags   the compiler flags for its headers
#   pyconfig.sh suffix     the extension module suffix (.cpython-312-x86_64-linux-gnu.so)
#   pyconfig.sh describe   the version and the interpreter's real path (sys.executable)
# Supported: CPython 3.11, 3.12 and 3.13 with their internal headers
# (examples/python/pyversion.h), built with the GIL.
set -u
py=${PYTHON:-python3}
command -v "$py" > /dev/null 2>&1 || {
    echo "make python: $py not found (CPython 3.11, 3.12 or 3.13 needed; set PYTHON=/path/to/python3.X)" >&2
    exit 1
}
# One call, one value per line: implementation, version, include directory,
# free-threading, extension suffix, the interpreter's real path.
info=$("$py" -c 'import sys, sysconfig
print(sys.implementation.name, "%d.%d" % sys.version_info[:2], sysconfig.get_paths()["include"],
      sysconfig.get_config_var("Py_GIL_DISABLED") or 0, sysconfig.get_config_var("EXT_SUFFIX"),
      sys.executable, sep="\n")' 2> /dev/null)
line() { echo "$info" | sed -n "$1p"; }
what=${1:-} impl=$(line 1) ver=$(line 2) inc=$(line 3) nogil=$(line 4) suffix=$(line 5) exe=$(line 6)
case $impl:$ver in
cpython:3.11 | cpython:3.12 | cpython:3.13) ;;
*)
    echo "make python: $py is ${impl:-?} ${ver:-?}; perftramp's module supports CPython 3.11, 3.12 and 3.13" >&2
    echo "  (set PYTHON=/path/to/python3.X)" >&2
    exit 1
    ;;
esac
if [ "$nogil" != 0 ]; then
    echo "make python: $py is a free-threaded build (Py_GIL_DISABLED); perftramp's module needs the GIL" >&2
    exit 1
fi
if [ ! -f "$inc/internal/pycore_frame.h" ]; then
    echo "make python: $inc/internal/pycore_frame.h is missing; the module needs CPython's" >&2
    echo "  internal headers (python$ver-dev, or a from-source or pyenv build)" >&2
    exit 1
fi
case $what in
version) echo "$ver" ;;
describe) echo "$ver $exe" ;; # pyenv shims and `python3` resolve to a real path
cppflags) echo "-isystem $inc" ;;
suffix) echo "$suffix" ;;
*)
    echo "usage: pyconfig.sh version|cppflags|suffix|describe" >&2
    exit 2
    ;;
esac
