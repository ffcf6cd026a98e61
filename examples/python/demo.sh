#!/bin/sh
# SPDX-License-Identifier: MIT
# make python-demo: `python3 -m perftramp examples/python/demo.py` under
# perf record -k 1 --call-graph dwarf, perf inject --jit, then the share of
# each py:: function and the stacks (like `python3.12 -X perf`).  Needs
# `make python`; perf files live in a temporary directory removed at exit.
set -u
LC_ALL=C
export LC_ALL
srcdir=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
builddir=${PT_BUILDDIR:-$srcdir}
PYTHON=${PYTHON:-python3}
script=$srcdir/examples/python/demo.py
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-pydemo.XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE # a closed stdout (make demo | head) must still clean up
perf_cmd() {
    HOME=$tmp perf --buildid-dir "$tmp/debug" "$@"
}
if ! perf_cmd record -q -k 1 -e cpu-clock -o "$tmp/probe.data" true > /dev/null 2>&1; then
    echo "python-demo: perf is missing or not permitted here"
    exit 0
fi
freq=999
max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2> /dev/null || echo 999)
[ "$max_rate" -ge 1 ] 2> /dev/null && [ "$max_rate" -lt $freq ] && freq=$max_rate
echo "=== python3 -m perftramp demo.py under perf record -k 1 --call-graph dwarf"
# Run a copy from the temporary directory: the source tree's perftramp/
# (without the built module) is not on sys.path.  Its code is named by its
# absolute path, as `python demo.py` names it; the listings below drop the
# directory.
cp "$script" "$tmp/demo.py" && cd "$tmp" || exit 1
PYTHONPATH=$builddir/examples/python perf_cmd record -q -k 1 -e cpu-clock -F $freq \
    --call-graph dwarf,32768 -o "$tmp/perf.data" \
    "$PYTHON" -m perftramp --outputs jitdump --jitdump-dir "$tmp" demo.py > "$tmp/out" || {
    echo "python-demo: the run failed" >&2
    exit 1
}
sed 's/^/  | /' "$tmp/out"
perf_cmd inject --jit -i "$tmp/perf.data" -o "$tmp/jit.data" || exit 1
echo
echo "  share of each Python function (perf report --children --sort sym):"
perf_cmd report -i "$tmp/jit.data" --stdio --children --sort sym -g none 2> /dev/null |
    grep -E 'py::[^ ]*:[^ ]*/demo\.py' | head -8 | sed "s/^ */    /; s|:$tmp/demo\.py|:demo.py|"
echo
echo "  stacks, root first, py:: frames of demo.py (perf script):"
perf_cmd script -i "$tmp/jit.data" -F ip,sym 2> /dev/null | awk '
    function flush(   i, s, prev, times) {
        if (n == 0) return
        s = ""; prev = ""; times = 0; below = 0
        for (i = n; i >= 0; i--) {
            if (i > 0 && f[i] !~ /^py::/) continue
            if (i > 0 && f[i] !~ /\/demo\.py$/) { if (s == "" && prev == "") below++; continue }
            if (i > 0 && f[i] == prev) { times++; continue }
            if (prev != "") s = (s == "" ? "" : s " > ") prev (times > 1 ? " x" times : "")
            prev = i > 0 ? f[i] : ""; times = 1
        }
        if (s ~ /demo\.py/) { count[(below ? "(python -m perftramp x" below ") > " : "") s]++; total++ }
        n = 0
    }
    /^[ \t]*$/ { flush(); next }
    { sub(/^[ \t]*[0-9a-f]+ /, ""); f[++n] = $0 }
    END {
        flush()
        for (s in count) printf "  %6.1f%%  %s\n", 100 * count[s] / total, s | "sort -rn | head -6"
    }' | sed "s|$tmp/||g"
