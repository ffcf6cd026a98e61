# SPDX-License-Identifier: MIT
# shellcheck shell=sh
# What the tests that configure a second build of perftramp share (sh;
# tests/mem/ffi_static_tramp.sh, tests/musl/musl.sh):
#   clean_source SRC WORK
#       sets $bsrc to a source tree that an out-of-tree build can
#       configure: SRC itself, or, when SRC is configured in-tree (its
#       config.status makes configure refuse a second build), a copy in
#       WORK/src of git's tracked and new files, no ELF file among them (one
#       would stand in for the second build's target), and SRC's autotools
#       output (configure, Makefile.in, ...), times kept so that make does
#       not rerun automake.  Returns 1, saying why, when it cannot.
#   test_results BUILD TEST...
#       one line per test, its result in BUILD (NOT RUN without a .trs),
#       and the tail of the log of each that did not pass; sets $passed,
#       $total and $notpassed (the names of those that did not pass).
clean_source() {
    if [ ! -f "$1/config.status" ]; then
        bsrc=$1
        return 0
    fi
    if ! command -v git > /dev/null 2>&1 || ! git -C "$1" rev-parse --git-dir > /dev/null 2>&1; then
        echo "# $1 is configured in-tree and is not a git checkout: cannot make a clean copy"
        return 1
    fi
    mkdir -p "$2/src" || return 1
    (cd "$1" && {
        git ls-files -co --exclude-standard
        git ls-files -oi --exclude-standard -- configure aclocal.m4 config.h.in 'Makefile.in' 'build-aux/*' 'm4/*'
    } | while IFS= read -r f; do
        [ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d ' ')" != '177ELF' ] && printf '%s\0' "$f"
    done | xargs -0 cp -p --parents -t "$2/src") || { echo "# copying $1 failed"; return 1; }
    [ -x "$2/src/configure" ] || { echo "# $1 has no configure (autoreconf -fi first)"; return 1; }
    bsrc=$2/src
}

test_results() {
    _b=$1
    shift
    passed=0 total=0 notpassed=
    for _t; do
        total=$((total + 1))
        _res=$(sed -n 's/^:test-result: //p' "$_b/$_t.trs" 2> /dev/null)
        printf '   %-32s %s\n' "$_t" "${_res:-NOT RUN}"
        if [ "$_res" = PASS ]; then
            passed=$((passed + 1))
        else
            notpassed="$notpassed $_t"
            [ -f "$_b/$_t.log" ] && tail -n 25 "$_b/$_t.log" | sed 's/^/     | /'
        fi
    done
}
