#!/bin/bash
# SPDX-License-Identifier: MIT
# .ci/leftovers.sh COMMAND [ARGS...]: runs COMMAND with TMPDIR pointing at a
# fresh directory, and fails when it leaves a file behind, there or in /tmp.
# Every test must put its temporary files under $TMPDIR and remove them,
# even when it fails or execs; the perf maps perf requires in /tmp
# (/tmp/perf-<pid>.map) must be removed too.
#
# As root, with the build outside /tmp, COMMAND runs in a private mount
# namespace whose /tmp is a new empty tmpfs: whatever is left there is
# COMMAND's, whatever else runs on the machine, and it goes with the
# namespace.  Otherwise (or with PT_LEFTOVERS_NS=no) /tmp is compared before
# and after for the names our tests use (perftramp*, pt-*, perf-<pid>.map,
# jit-<pid>.dump, jitted-*): exact on a machine that runs nothing else.
set -euo pipefail
[ $# -gt 0 ] || { echo "usage: .ci/leftovers.sh COMMAND [ARGS...]" >&2; exit 2; }

ours() {
    find /tmp -mindepth 1 -maxdepth 1 \( -name 'perftramp*' -o -name 'pt-*' -o -name 'perf-*.map' \
        -o -name 'jit-*.dump' -o -name 'jitted-*' \) -print 2> /dev/null | sort
}

cmd="$*"
# report LEFT WHERE: prints the leftovers, if any; fails when there are some
report() {
    if [ -n "$1" ]; then
        echo "leftovers: '$cmd' left files behind ($2):"
        echo "$1" | head -n 40 | sed 's/^/  /'
        return 1
    fi
    echo "leftovers: '$cmd' left nothing in its TMPDIR or in /tmp"
}

if [ "${PT_LEFTOVERS_NS:-}" = inner ]; then
    mount -t tmpfs -o mode=1777 perftramp-leftovers /tmp
    scratch=/tmp/tmpdir
    mkdir -m 700 "$scratch"
    status=0
    TMPDIR=$scratch "$@" || status=$?
    left=$(find /tmp -mindepth 1 -path "$scratch" -prune -o -print; find "$scratch" -mindepth 1 -maxdepth 1 -print)
    report "$left" "its TMPDIR was $scratch, in a private /tmp" || [ "$status" -ne 0 ] || status=1
    exit "$status"
fi

ns=${PT_LEFTOVERS_NS:-yes}
case $PWD/ in /tmp/*) ns=no ;; esac
if [ "$ns" = yes ] && [ "$(id -u)" -eq 0 ] && unshare -m --propagation private true 2> /dev/null; then
    exec unshare -m --propagation private env PT_LEFTOVERS_NS=inner "$0" "$@"
fi

scratch=$(mktemp -d /tmp/ci-tmpdir.XXXXXX)
before=$(ours)
status=0
TMPDIR=$scratch "$@" || status=$?
left=$( (find "$scratch" -mindepth 1 -maxdepth 1 -print; comm -13 <(echo "$before") <(ours)) | sed '/^$/d')
if report "$left" "its TMPDIR was $scratch"; then
    rmdir "$scratch"
else
    [ "$status" -ne 0 ] || status=1
fi
exit "$status"
