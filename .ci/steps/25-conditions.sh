#!/bin/bash
# SPDX-License-Identifier: MIT
# The suite in the conditions people build in, on a representative part
# (the perf readers, perf/gdb end to end, Python under perf, fork, the CLI),
# in one pass that has them all at once:
#   - as a normal user (ptuser, in a second group for env_secure) in a clone
#     they own, with kernel.perf_event_paranoid as the machine has it;
#   - with one CPU kept busy by a nice'd loop, a TMPDIR with a long path and
#     a space, under LANG=de_DE.UTF-8 if that locale exists (else C.UTF-8).
# Then the emulated machines' cached images, resolved as that user.
# About two minutes on 2 cores.  See docs/testing.md, "Conditions".
set -euo pipefail
cd "$(dirname "$0")/../.."
start=$(date +%s)
SUB='tests/perf/perf_parsers.sh tests/perf/perf_e2e.sh tests/python/python_perf.sh tests/perf/tiny_perf.sh tests/cli/cli_check.sh
tests/api/check_fork_lazy tests/outputs/check_perfmap tests/gdb/gdb_bt.sh tests/api/env_secure.sh'
SUB=$(echo $SUB)
# the check programs those tests are or run (their scripts and tests/lib
# name them), so the clone builds these and not all of them
# shellcheck disable=SC2016 # a make rule, written as is
all=$(printf 'include Makefile\np:\n\t@echo $(check_PROGRAMS)\n' | make -s -f - p 2> /dev/null || true)
progs=
for c in $(for t in $SUB; do
        case $t in *.sh) grep -ohE 'tests/[a-z_]+/[a-z_0-9]+' "$t" tests/lib/*.sh ;; *) echo "$t" ;; esac
    done | sort -u); do
    case " $all " in *" $c "*) progs="$progs $c" ;; esac
done
PROGS=
[ -z "$progs" ] || PROGS="check_PROGRAMS='${progs# }'"

loc=C.UTF-8
locale -a 2> /dev/null | grep -qi '^de_DE\.utf-\?8$' && loc=de_DE.UTF-8
top="/tmp/pt ci conditions"
tmp="$top/$(printf 'segment-%02d/' 1 2 3 4 5 6 7 8 9 10)with space"
id ptuser > /dev/null 2>&1 || useradd -m -s /bin/bash ptuser
usermod -aG users ptuser
su - ptuser -c 'git config --global --add safe.directory "*"'
rm -rf "$top"
mkdir -p "$tmp"
chown -R ptuser "$top"
nice -n 19 sh -c 'while :; do :; done' &
busy=$!
trap 'kill $busy 2> /dev/null || :; rm -rf "$top"' EXIT
src=$(pwd)
su - ptuser -c "rm -rf ~/pt && git clone -q '$src' ~/pt && cd ~/pt &&
    (autoreconf -fi && ./configure --enable-werror && make -j2) > ~/build.log 2>&1 &&
    env -u LC_ALL LANG=$loc TMPDIR='$tmp' CI=true make -j2 check TESTS='$SUB' $PROGS" ||
    { echo "25-conditions: FAIL as a normal user, busy CPU, TMPDIR='$tmp', LANG=$loc"; exit 1; }
kill $busy 2> /dev/null || :
echo "25-conditions: as ptuser, busy CPU, TMPDIR of ${#tmp} characters with spaces, LANG=$loc: pass ($(( $(date +%s) - start ))s)"
# the emulated machines' images, built as root by make check, serve a normal user too
for arch in aarch64 ppc64le s390x riscv64 arm i686; do
    su - ptuser -c "cd ~/pt && sh tools/guest image $arch" > /dev/null ||
        { echo "25-conditions: FAIL as a normal user: tools/guest image $arch"; exit 1; }
done
echo "25-conditions: $(( $(date +%s) - start ))s"
