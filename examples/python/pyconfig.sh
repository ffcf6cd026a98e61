#!/bin/sh
# SPDX-License-Identifier: MIT
# Prints the compiler flags and extension suffix for building perftramp's
# CPython module against `${PYTHON:-python3}`, or refuses with a reason.
#   pyconfig.sh cppflags | suffix
set -u
py=${PYTHON:-python3}
command -v "$py" > /dev/null 2>&1 || { echo "make python: $py not found (CPython 3.11 needed)" >&2; exit 1; }
ver=$("$py" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null)
impl=$("$py" -c 'import sys; print(sys.implementation.name)' 2>/dev/null)
if [ "$impl" != cpython ] || [ "$ver" != 3.11 ]; then
    echo "make python: $py is ${impl:-?} ${ver:-?}; the perftramp module is for CPython 3.11 only" >&2
    echo "  (3.12+ has 'python -X perf' built in; set PYTHON=/path/to/python3.11)" >&2
    exit 1
fi
inc=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
if [ ! -f "$inc/internal/pycore_frame.h" ]; then
    echo "make python: $inc/internal/pycore_frame.h is missing; the module needs CPython's" >&2
    echo "  internal headers (python3.11-dev, or a from-source or pyenv build)" >&2
    exit 1
fi
case ${1:-} in
cppflags) echo "-isystem $inc" ;;
suffix) "$py" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))' ;;
*) echo "usage: pyconfig.sh cppflags|suffix" >&2; exit 2 ;;
esac
