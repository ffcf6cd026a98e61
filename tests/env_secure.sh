#!/bin/sh
# SPDX-License-Identifier: MIT
# $PERFTRAMP and $JITDUMPDIR are read with secure_getenv: a setgid (or
# setuid) program ignores them, so whoever runs it cannot choose where it
# writes.  tests/env_secure_prog runs once plainly (both honoured) and once
# setgid as nobody (both ignored: no outputs, the default directory).
: "${PT_BUILDDIR:=.}"
prog=$PT_BUILDDIR/tests/env_secure_prog
[ -x "$prog" ] || { echo "FAIL: $prog not built"; exit 1; }
skip() {
    echo "PROOF: env.secure not-run $1"
    echo "SKIP: $1"
    exit 77
}
[ "$(id -u)" -eq 0 ] || skip "needs root to make a setgid copy and run it as nobody"
command -v setpriv >/dev/null 2>&1 || skip "setpriv (util-linux) is not installed"
id nobody >/dev/null 2>&1 || skip "no user nobody"
nogroup=$(id -gn nobody)
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
chown root:root "$work/prog"
chmod 2755 "$work/prog"
out=$(cd / && PERFTRAMP=yes JITDUMPDIR=/some/where setpriv --reuid=nobody --regid="$nogroup" --clear-groups \
    "$work/prog" 2>&1)
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
