#!/bin/sh
# SPDX-License-Identifier: MIT
# The "attach later" demo: a tiny program starts with no perf output at
# all, `kill -USR2` turns the perf map on in the running process (every
# trampoline made so far is replayed into it), `perf record -p` attaches
# for a few seconds, and the profile shows each interpreted function as
# tiny::<name> with its callers.  A second kill -USR2 turns it off again.
#
# Meant to be called by examples/demo.sh (make demo) as its last part, or
# alone:  sh examples/tiny/demo-signal.sh
# Environment: PT_SRCDIR, PT_BUILDDIR (set by make), PERF (default perf),
# DEMO_SIGNAL_SECONDS (how long perf records, default 2).
# Exits 0 with a message when perf cannot record here (nothing to show).
set -u
LC_ALL=C
export LC_ALL

srcdir=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${PT_BUILDDIR:-$srcdir}
tiny=$builddir/examples/tiny/tiny
perf=${PERF:-perf}
seconds=${DEMO_SIGNAL_SECONDS:-2}

die() {
    echo "demo-signal: $*" >&2
    exit 1
}
[ -x "$tiny" ] || die "$tiny is not built (run make first)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-demo-signal.XXXXXX") || die "mktemp failed"
pid=
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2> /dev/null
        wait "$pid" 2> /dev/null
        rm -f "/tmp/perf-$pid.map"
    fi
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

if ! command -v "$perf" > /dev/null 2>&1 ||
    ! HOME=$tmp "$perf" record -q -e cpu-clock -o "$tmp/probe.data" -- true > /dev/null 2>&1; then
    echo "demo-signal: perf cannot record here; skipping the attach-later demo"
    exit 0
fi

# A program that runs until stopped; most of its time is in leaf().
cat > "$tmp/server.tiny" << 'T'
fn leaf(n) { i = 0; s = 0; while (i < n) { s = s + i % 7; i = i + 1; } return s; }
fn handle(n) { return leaf(n); }
fn serve(k) { t = 0; j = 0; while (j < k) { t = t + handle(1000); j = j + 1; } return t; }
x = 0;
while (1) { x = x + serve(100); }
T

echo "== 1. start tiny with PERFTRAMP_SIGNAL=USR2 PERFTRAMP=perfmap: no output yet"
PERFTRAMP_SIGNAL=USR2 PERFTRAMP=perfmap "$tiny" "$tmp/server.tiny" > /dev/null 2> "$tmp/tiny.err" &
pid=$!
sleep 0.5
if [ -e "/tmp/perf-$pid.map" ]; then
    echo "   /tmp/perf-$pid.map exists already (unexpected)"
else
    echo "   pid $pid running, /tmp/perf-$pid.map does not exist"
fi

echo "== 2. kill -USR2 $pid: the perf map is turned on, its trampolines replayed"
kill -USR2 "$pid"
for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do
    [ -s "/tmp/perf-$pid.map" ] && break
    sleep 0.1
done
[ -s "/tmp/perf-$pid.map" ] || die "no /tmp/perf-$pid.map after the signal: $(cat "$tmp/tiny.err")"
sed 's/^/   /' "/tmp/perf-$pid.map"

echo "== 3. perf record --call-graph fp -p $pid for $seconds s"
HOME=$tmp "$perf" record -q -F 999 -e cpu-clock --call-graph fp -o "$tmp/perf.data" -p "$pid" -- sleep "$seconds" \
    > "$tmp/record.log" 2>&1 || die "perf record -p: $(tail -n 3 "$tmp/record.log")"

echo "== 4. the profile: interpreted functions (tiny::*) with their callers"
HOME=$tmp "$perf" report -i "$tmp/perf.data" --children --sort sym --stdio -g none 2> /dev/null |
    grep -E 'tiny::|eval_function' | head -n 8 | sed 's/^/   /'

echo "== 5. kill -USR2 $pid again: outputs off (the map stays for perf report)"
kill -USR2 "$pid"
