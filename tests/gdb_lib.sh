# SPDX-License-Identifier: MIT
# shellcheck shell=bash
# What the gdb tests share.  Source it after `set -u`.
#   gdb_need ID...   without gdb: prints each proof ID as not-run, and skips
#                    (exit 77)
#   gdb_batch ARG... gdb in batch mode, no .gdbinit, debuginfod and paging
#                    off, stderr with stdout, under libtool --mode=execute (a
#                    program linked to the uninstalled library finds it)
#   frame_names      bt's frame lines on stdin -> "N name" per line
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
    sed -n 's/^#\([0-9]*\) .* in \([^ ]*\) (.*/\1 \2/p; s/^#\([0-9]*\)  *\([^ ]*\) (.*/\1 \2/p'
}
