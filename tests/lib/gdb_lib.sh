# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# What the gdb tests share.  Source it after `set -u`.
#   gdb_need ID...   without gdb: prints each proof ID as not-run, and skips
#                    (exit 77)
#   gdb_batch ARG... gdb in batch mode, no .gdbinit, debuginfod and paging
#                    off, stderr with stdout, under libtool --mode=execute (a
#                    program linked to the uninstalled library finds it)
#   frame_names      bt's frame lines on stdin -> "N name" per line (the
#                    name may hold spaces; tests/perf/perf_parsers.sh checks it on
#                    tests/samples/gdb-bt.txt)
# LeakSanitizer cannot run under ptrace: a sanitizer build's leak check is
# off in the programs these tests start under gdb.
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
export ASAN_OPTIONS

gdb_need() {
    command -v gdb >/dev/null 2>&1 && return 0
    local id
    for id in "$@"; do echo "PROOF: $id not-run gdb is not installed"; done
    echo "SKIP: gdb is not installed"
    exit 77
}

gdb_batch() {
    "${PT_BUILDDIR:-.}/libtool" --mode=execute gdb -nx -batch -ex 'set debuginfod enabled off' \
        -ex 'set pagination off' "$@" 2>&1
}

frame_names() {
    # gdb prints a frame as "#N  [0xADDR in ]NAME (ARGS)[ at FILE:LINE | from LIB]"
    # (batch mode: no width, no wrapping).  NAME may hold spaces (C++
    # templates, "(anonymous namespace)::f", py::f:/a dir/w.py) but never
    # " (": the args open at the first " (" past NAME's first character.
    # Lines without args ("#1  <signal handler called>") are no frame name.
    awk '/^#[0-9]+ / {
        n = substr($1, 2); s = $0
        sub(/^#[0-9]+ +/, "", s)
        sub(/^0x[0-9a-f]+ in /, "", s)
        i = index(substr(s, 2), " (")
        if (i > 0) print n, substr(s, 1, i)
    }'
}
