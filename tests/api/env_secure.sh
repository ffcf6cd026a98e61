#!/bin/sh
# SPDX-License-Identifier: MIT
# $PERFTRAMP and $JITDUMPDIR are read with secure_getenv: a setgid (or
# setuid) program ignores them, so whoever runs it cannot choose where it
# writes.  tests/api/env_secure_prog runs once plainly (both honoured) and once
# setgid (both ignored: no outputs, the default directory): as root, setgid
# root and run as nobody; as another user, setgid to a second group of theirs.
: "${PT_BUILDDIR:=.}"
prog=$PT_BUILDDIR/tests/api/env_secure_prog
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
skip() {
    echo "PROOF: env.secure not-run $1"
    echo "SKIP: $1"
    exit 77
}
# root: a copy setgid root, run as nobody.  Another user: a copy setgid to
# one of their other groups, run with their own primary group (egid !=
# gid: the kernel marks it secure just the same).
second=
if [ "$(id -u)" -eq 0 ]; then
    command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
    id nobody >/dev/null 2>&1 || skip "no user nobody"
    nogroup=$(id -gn nobody)
else
    for g in $(id -G); do [ "$g" = "$(id -g)" ] || { second=$g; break; }; done
    [ -n "$second" ] || skip "not root, and $(id -un) is in no group besides $(id -gn): no setgid copy can differ from the caller's group (root or a user in a second group can run this)"
fi
fail=0

out=$(PERFTRAMP=yes JITDUMPDIR=/some/where "$prog" 2>&1)
case $out in
"secure 0 outputs 1 jitdump_dir /some/where") echo "ok: plain run: $out" ;;
*) echo "FAIL: plain run: $out"; fail=1 ;;
esac

# a setgid copy in a directory nobody can enter and execute from (not
# /tmp: it may be mounted nosuid)
work=$(mktemp -d "$PT_BUILDDIR/tests/env-secure.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
chmod 755 "$work"
cp "$prog" "$work/prog"
if [ -z "$second" ]; then
    chown root:root "$work/prog"
    chmod 2755 "$work/prog"
    out=$(cd / && PERFTRAMP=yes JITDUMPDIR=/some/where setpriv --reuid=nobody --regid="$nogroup" --clear-groups \
        "$work/prog" 2>&1)
else
    chgrp "$second" "$work/prog" && chmod 2755 "$work/prog" || { echo "FAIL: chgrp $second / chmod g+s"; exit 1; }
    out=$(cd / && PERFTRAMP=yes JITDUMPDIR=/some/where "$work/prog" 2>&1)
fi
case $out in
"secure 1 outputs 0 jitdump_dir (default)") echo "ok: setgid run: $out" ;;
"secure 0 "*)
    # only a nosuid mount, read from the mount table apart from this run,
    # excuses it; a setgid run that is not secure elsewhere is a failure
    opts=$(findmnt -n -o OPTIONS --target "$work" 2>/dev/null)
    case ,$opts, in
    *,nosuid,*) skip "$work is on a nosuid mount ($opts): the setgid copy runs as a plain one: $out" ;;
    *) echo "FAIL: setgid run not secure on a mount without nosuid (${opts:-findmnt gave no options}): $out"; fail=1 ;;
    esac ;;
*) echo "FAIL: setgid run: $out"; fail=1 ;;
esac
if [ $fail -eq 0 ]; then
    echo "PROOF: env.secure proven \$PERFTRAMP and \$JITDUMPDIR honoured by a plain run, ignored by a setgid one (AT_SECURE)"
else
    echo "PROOF: env.secure failed see above"
fi
exit $fail
