#!/bin/sh
# SPDX-License-Identifier: MIT
# The CPython interpreters perftramp's module can be built for on this
# machine: one line per supported version,
#   3.11 /path/to/python3.11
#   3.12 - <why there is none>
# `make python-if-possible`, the tests (tests/lib/python_lib.sh) and the
# benchmark (bench/python_overhead.sh) all take their list from here.
# Candidates: $PT_PYTHONS (interpreter paths separated by spaces) when set,
# nothing else; otherwise pyenv's builds ($PYENV_ROOT, default ~/.pyenv;
# the newest patch release of each version), python3.X and python3 on PATH.
# The first candidate of a version that pyconfig.sh accepts wins.
set -u
here=$(cd "$(dirname "$0")" && pwd)
versions="3.11 3.12 3.13"
found=     # "3.11=/path 3.12=/path"
refused=   # "3.12=reason..." (first refusal per version), one per line
# consider PATH VERSION: one candidate (VERSION: what its name says, or
# empty), unless its version is found already.  Runs it once.
consider() {
    case " $found" in *" $2="*) return ;; esac
    msg=$(PYTHON=$1 sh "$here/pyconfig.sh" describe 2>&1)
    if [ $? -eq 0 ]; then
        found="$found ${msg%% *}=${msg#* }"
    elif [ -n "$2" ]; then
        refused="$refused
$2=$(echo "$msg" | head -n 1 | sed 's/^make python: //')"
    fi
}
all_found() {
    for v in $versions; do
        case " $found" in *" $v="*) ;; *) return 1 ;; esac
    done
}
if [ -n "${PT_PYTHONS:-}" ]; then
    for p in $PT_PYTHONS; do
        v=$(basename "$p" | sed -n 's/^python\(3\.1[0-9]\).*/\1/p') # the version its name says
        consider "$p" "$v"
    done
else
    root=${PYENV_ROOT:-${HOME:-/root}/.pyenv}
    for v in $versions; do
        # newest patch release first: 3.12.10 before 3.12.9
        for d in $(ls -d "$root"/versions/"$v".* 2> /dev/null | sort -rV); do
            [ -x "$d/bin/python$v" ] && consider "$d/bin/python$v" "$v"
        done
        p=$(command -v "python$v" 2> /dev/null) && consider "$p" "$v"
    done
    all_found || { p=$(command -v python3 2> /dev/null) && consider "$p" ""; }
fi
for v in $versions; do
    exe=$(echo "$found" | tr ' ' '\n' | sed -n "s/^$v=//p" | head -n 1)
    why=$(echo "$refused" | sed -n "s/^$v=//p" | head -n 1)
    if [ -n "$exe" ]; then
        echo "$v $exe"
    else
        echo "$v - ${why:-no CPython $v found (PT_PYTHONS, pyenv, python$v on PATH)}"
    fi
done
