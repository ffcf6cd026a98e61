#!/bin/sh
# SPDX-License-Identifier: MIT
# python3 -m perftramp under perf (jitdump, DWARF call graphs): samples in a
# recursive function show py::fib:<file> frames, innermost first, then the
# module's code py::<module>:<file> below them -- the profile 3.12 users get
# from `python -X perf`.
set -u
proof_id=python.perf
. "${PT_SRCDIR:-.}/tests/python_lib.sh"
command -v perf > /dev/null 2>&1 || skip "perf is not installed"
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
perf record -q -k 1 -e cpu-clock -o "$tmp/probe.data" true > /dev/null 2>&1 ||
    skip "perf record is not permitted here"

cat > "$tmp/fib.py" << 'PY'
def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

total = 0
for i in range(8000):
    total += fib(12)
print(total)
PY
HOME=$tmp perf --buildid-dir "$tmp/debug" record -q -k 1 -e cpu-clock -F 999 \
    --call-graph dwarf,32768 -o "$tmp/perf.data" \
    env $python_env "$PYTHON" -m perftramp --outputs jitdump --jitdump-dir "$tmp" "$tmp/fib.py" > "$tmp/out" || {
    echo "FAIL: python3 -m perftramp under perf record failed"
    exit 1
}
expected=$("$PYTHON" "$tmp/fib.py")
[ "$(cat "$tmp/out")" = "$expected" ] || { echo "FAIL: result $(cat "$tmp/out"), without perftramp $expected"; exit 1; }
ls "$tmp"/jit-*.dump > /dev/null 2>&1 || { echo "FAIL: no jit-<pid>.dump written"; exit 1; }
HOME=$tmp perf --buildid-dir "$tmp/debug" inject --jit -i "$tmp/perf.data" -o "$tmp/jit.data" || {
    echo "FAIL: perf inject --jit"
    exit 1
}
HOME=$tmp perf --buildid-dir "$tmp/debug" script -F ip,sym -i "$tmp/jit.data" > "$tmp/script.txt" 2> /dev/null || {
    echo "FAIL: perf script"
    exit 1
}
# Per sample, the py:: frames innermost first.  A good sample with fib in it
# reads: py::fib:F (one or more), then py::<module>:F, then only runpy's and
# perftramp's own frames (the callers of the script's module code).
awk -v F="$tmp/fib.py" '
    function flush(   i, s, nfib, good) {
        if (n == 0) return
        s = ""; nfib = 0; good = 1; state = 0
        for (i = 1; i <= n; i++) {
            if (f[i] !~ /^py::/) continue
            if (f[i] == "py::fib:" F) { if (state != 0) good = 0; nfib++ }
            else if (f[i] == "py::<module>:" F) { if (state != 0) good = 0; state = 1 }
            else if (state == 0) good = 0
        }
        if (nfib > 0) { with_fib++; if (good && state == 1) ordered++ }
        if (nfib > maxdepth && good && state == 1) maxdepth = nfib
        if (nfib > 0 && !(good && state == 1) && bad < 3) {
            bad++; printf "  sample not in order:"; for (i = 1; i <= n; i++) if (f[i] ~ /^py::/) printf " %s", f[i]; print ""
        }
        n = 0
    }
    /^[ \t]*$/ { flush(); next }
    { f[++n] = $2 }
    END {
        flush()
        printf "%d samples in fib; %d (%.1f%%) show py::fib frames then py::<module> in order; deepest %d py::fib frames\n", with_fib, ordered, with_fib ? 100 * ordered / with_fib : 0, maxdepth
        exit !(with_fib >= 50 && ordered * 10 >= with_fib * 9 && maxdepth >= 10)
    }' "$tmp/script.txt" > "$tmp/verdict"
rc=$?
cat "$tmp/verdict"
# the last line is the count (the lines before it show samples out of order)
if [ $rc -eq 0 ]; then
    echo "PROOF: $proof_id proven $(tail -n 1 "$tmp/verdict")"
else
    echo "PROOF: $proof_id failed $(tail -n 1 "$tmp/verdict")"
fi
exit $rc
