#!/bin/bash
# SPDX-License-Identifier: MIT
# examples/tiny in its own pid and mount namespace (unshare --pid --mount
# --fork, a private tmpfs on /tmp), profiled by perf from outside
# (docs/perf.md, "Containers"):
#   perfmap          perf record -p <host pid> --call-graph fp: perf reads
#                    /tmp/perf-<namespace pid>.map through /proc/<pid>/root
#                    while the process lives
#   jitdump-live     perf record -k 1 -p, perf inject while it lives, the
#                    dump in the private /tmp: jit-<namespace pid>.dump
#   jitdump-exited   perf record -k 1 -- unshare ...: the process has exited
#                    when perf inject runs; the dump is in a directory both
#                    sides see at the same path and perf takes it by its
#                    second name, jit-<host pid>.dump
#   elf              PERFTRAMP=elf with PERFTRAMP_ELF_DIR shared at one path,
#                    perf record -p --call-graph dwarf, read after the exit
#                    (in a private /tmp perf 6.1 cannot open the arena file:
#                    printed as evidence)
# Each needs >= 90% of the evaluator's samples complete (a tiny:: frame and
# main), of >= 100 samples.
set -u
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
S=$(cd "${PT_SRCDIR:-.}" && pwd)
TINY=$B/examples/tiny/tiny
HOT=$S/examples/tiny/hot.tiny
RECORD_SECONDS=${PT_PERF_SECONDS:-2}
MIN_SAMPLES=100
PCT_OK=90

PROOF_IDS="container.perfmap container.jitdump-live container.jitdump-exited container.elf"
# shellcheck source=tests/lib/proof_lib.sh
. "$S/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/perf_lib.sh
. "$S/tests/lib/perf_lib.sh"

# The scratch directory lives in the build tree, not under $TMPDIR: the
# namespace hides the host's /tmp, and the exited-process case needs a
# directory both sides see at one path.  perf's HOME (its build-id cache)
# is there too, for the same reason.
tmp=$(mktemp -d "$B/tests/clients/containers-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
host_pid=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    stop_contained
    rm -rf "$tmp"
}
trap cleanup EXIT
export HOME=$tmp/home
mkdir "$HOME"
unset PERFTRAMP PERFTRAMP_SIGNAL JITDUMPDIR PERFTRAMP_ELF_DIR

[ -x "$TINY" ] || { echo "FAIL: $TINY not built"; exit 1; }
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
command -v unshare >/dev/null 2>&1 || skip "unshare is not installed (util-linux)"
perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1 ||
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"
# The container's private /tmp: a tmpfs over /tmp.  A build tree under
# /tmp (a clone there) would vanish under it, with tiny, its library and
# the scratch directory: the shell enters it first, and after the mount
# binds its working directory (still the old one) back at the same path
# (--no-canonicalize: "." is resolved from that directory, not by name).
# Nothing else of the host's /tmp is seen.
private_tmp="mount -t tmpfs tmpfs /tmp"
case "$B/" in
/tmp/*) private_tmp="cd '$B' && $private_tmp && mkdir -p '$B' && mount --no-canonicalize --bind . '$B'" ;;
esac
unshare --pid --mount --fork sh -c 'mount -t tmpfs tmpfs /tmp' >"$tmp/unshare.log" 2>&1 ||
    skip "cannot make a pid and mount namespace here (unshare: $(head -1 "$tmp/unshare.log"); needs root or user namespaces)"
unshare --pid --mount --fork sh -c "$private_tmp && test -x '$TINY' && test -d '$tmp'" >"$tmp/unshare.log" 2>&1 ||
    { echo "FAIL: the container does not see $TINY and $tmp behind its private /tmp: $(head -1 "$tmp/unshare.log")"; exit 1; }

cp "$HOT" "$tmp/hot.tiny"
cat >"$tmp/forever.tiny" <<'T'
fn leaf(n) { i = 0; s = 0; while (i < n) { s = s + i % 7; i = i + 1; } return s; }
fn middle(n) { return leaf(n); }
fn outer(k) { t = 0; j = 0; while (j < k) { t = t + middle(1000); j = j + 1; } return t; }
x = 0;
while (1) { x = x + outer(100); }
T
# contained ENV... SCRIPT: runs tiny as pid 1 of a new pid namespace with
# a private /tmp, in the background; sets host_pid (its pid out here)
contained() {
    local script=${*: -1}
    env "${@:1:$#-1}" unshare --pid --mount --fork sh -c \
        "$private_tmp && cd /tmp && exec '$TINY' '$script'" >"$tmp/contained.out" 2>&1 &
    local u=$!
    host_pid=
    for _ in $(seq 50); do
        host_pid=$(pgrep -P "$u" | head -1)
        [ -n "$host_pid" ] && grep -q 'tiny' "/proc/$host_pid/comm" 2>/dev/null && break
        sleep 0.1
    done
    unshare_pid=$u
    sleep 0.5 # its trampolines exist
}
# A pid namespace's init ignores every signal it has no handler for, from
# outside as well (pid_namespaces(7)), but SIGKILL.
stop_contained() {
    if [ -n "$host_pid" ]; then
        kill -KILL "$host_pid" 2>/dev/null
        wait "$unshare_pid" 2>/dev/null
        host_pid=
    fi
}
judge() { # ID SCRIPT-FILE WHAT
    local hot ok
    read -r hot ok < <(awk -f "$S/tests/lib/tiny_stats.awk" <"$2")
    if [ "$hot" -ge "$MIN_SAMPLES" ] && [ $((ok * 100)) -ge $((hot * PCT_OK)) ]; then
        prove "$1" proven "$3: complete stacks $(pct "$ok" "$hot")"
    else
        prove "$1" failed "$3: complete stacks $(pct "$ok" "$hot") (want >= $PCT_OK% of >= $MIN_SAMPLES)"
        bad "$1: $(pct "$ok" "$hot")"
    fi
}

# ---- perf map, attached, read while the process lives --------------------
contained PERFTRAMP=perfmap "$tmp/forever.tiny"
nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$host_pid/status")
perf record -q -F 999 -e cpu-clock --call-graph fp -o "$tmp/map.data" -p "$host_pid" -- sleep "$RECORD_SECONDS" \
    >"$tmp/map.log" 2>&1 || bad "perf record -p (map): $(tail -2 "$tmp/map.log")"
[ -e "/tmp/perf-$host_pid.map" ] && bad "the map went to the host's /tmp"
perf script -F ip,sym -i "$tmp/map.data" >"$tmp/map.script" 2>/dev/null
stop_contained
judge container.perfmap "$tmp/map.script" "pid $nspid in its namespace, perf record -p, /tmp/perf-$nspid.map in its private /tmp"

# ---- jitdump in the private /tmp, injected while the process lives --------
contained PERFTRAMP=jitdump "$tmp/forever.tiny"
nspid=$(awk '/^NSpid:/ {print $NF}' "/proc/$host_pid/status")
perf record -q -k 1 -F 499 -e cpu-clock --call-graph dwarf -o "$tmp/live.data" -p "$host_pid" -- sleep "$RECORD_SECONDS" \
    >"$tmp/live.log" 2>&1 || bad "perf record -k 1 -p: $(tail -2 "$tmp/live.log")"
ls "/proc/$host_pid/root/tmp" >"$tmp/live.files" 2>&1
perf inject --jit -i "$tmp/live.data" -o "$tmp/live.jit.data" >"$tmp/live.inject" 2>&1 ||
    bad "perf inject --jit (live): $(tail -2 "$tmp/live.inject")"
stop_contained
perf script -F ip,sym -i "$tmp/live.jit.data" >"$tmp/live.script" 2>/dev/null
judge container.jitdump-live "$tmp/live.script" \
    "perf inject while it lives, its /tmp holds $(grep -c '^jit-.*\.dump$' "$tmp/live.files") dump names ($(grep '^jit-' "$tmp/live.files" | tr '\n' ' '))"

# ---- jitdump in a shared directory, injected after the exit ---------------
mkdir "$tmp/jd"
(cd "$tmp" && JITDUMPDIR=$tmp/jd PERFTRAMP=jitdump perf record -q -k 1 -F 2000 -e cpu-clock --call-graph dwarf \
    -o exited.data -- unshare --pid --mount --fork sh -c "$private_tmp && exec '$TINY' '$tmp/hot.tiny'" \
    >exited.out 2>&1) || bad "perf record -k 1 -- unshare: $(tail -2 "$tmp/exited.out")"
perf inject --jit -i "$tmp/exited.data" -o "$tmp/exited.jit.data" >"$tmp/exited.inject" 2>&1 ||
    bad "perf inject --jit (exited): $(tail -2 "$tmp/exited.inject")"
perf script -F ip,sym -i "$tmp/exited.jit.data" >"$tmp/exited.script" 2>/dev/null
names=$(cd "$tmp/jd" && ls jit-*.dump 2>/dev/null | tr '\n' ' ')
judge container.jitdump-exited "$tmp/exited.script" "perf inject after the exit, dump names: $names"
# the dump under its outer name is valid by perftramp check
outer=$(cd "$tmp/jd" && ls jit-*.dump | grep -v '^jit-1\.dump$' | head -1)
if [ -z "$outer" ]; then
    bad "no jit-<host pid>.dump beside jit-1.dump: $names"
elif ! "$B/tools/perftramp" check "$tmp/jd/$outer" >"$tmp/check.out" 2>&1; then
    bad "perftramp check $outer: $(head -5 "$tmp/check.out")"
fi

# ---- ELF arenas, attached, read after the exit ----------------------------
# perf 6.1 opens an arena file by the path in the mapping, in its own mount
# namespace ("Failed to open /tmp/perftramp-0/perftramp-1-0.so" in a
# private /tmp, measured below and printed): the arenas go to a directory
# both sides see at one path (PERFTRAMP_ELF_DIR, a shared volume).
mkdir "$tmp/elf"
contained PERFTRAMP=elf "PERFTRAMP_ELF_DIR=$tmp/elf" "$tmp/forever.tiny"
perf record -q -F 499 -e cpu-clock --call-graph dwarf -o "$tmp/elf.data" -p "$host_pid" -- sleep "$RECORD_SECONDS" \
    >"$tmp/elf.log" 2>&1 || bad "perf record -p (ELF): $(tail -2 "$tmp/elf.log")"
stop_contained
perf script -F ip,sym -i "$tmp/elf.data" >"$tmp/elf.script" 2>/dev/null
judge container.elf "$tmp/elf.script" "arena files in a directory shared at one path ($(ls "$tmp/elf" | tr '\n' ' ')), perf record -p, read after the exit"
contained PERFTRAMP=elf "$tmp/forever.tiny"
perf record -q -F 499 -e cpu-clock --call-graph dwarf -o "$tmp/elfp.data" -p "$host_pid" -- sleep 1 >/dev/null 2>&1
stop_contained
read -r hot ok < <(perf script -F ip,sym -i "$tmp/elfp.data" 2>/dev/null | awk -f "$S/tests/lib/tiny_stats.awk")
echo "evidence: arenas in the private /tmp instead: complete stacks $(pct "$ok" "$hot");" \
    "$(perf script -v -F ip -i "$tmp/elfp.data" 2>&1 | grep -m1 'Failed to open')"
exit $failed
