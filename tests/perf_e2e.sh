#!/bin/bash
# SPDX-License-Identifier: MIT
# End to end with the real perf: the workload nests four trampolines that
# wrap the SAME evaluator (as CPython does) and spins in the innermost.
#  (a) jitdump: perf record -k 1 --call-graph dwarf, perf inject --jit
#  (b) perf map: perf record --call-graph fp
# In both, >= 90% of the samples in the evaluator's hot loop must show
#   pt_eval <- py::inner <- pt_eval <- py::middle <- pt_eval <- py::outer
#   <- pt_eval <- py::main <- main
# and the never-called trampoline's name must never appear.
set -u
skip() { echo "SKIP: $*"; exit 77; }
fail() { echo "FAIL: $*"; exit 1; }

B=${PT_BUILDDIR:-.}
W=$B/tests/perf_workload
SECONDS_OF_WORK=${PT_PERF_SECONDS:-1.5}
MIN_HOT=100
[ -x "$W" ] || fail "$W not built"
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-e2e-XXXXXX") || fail "mktemp"
maps=()
cleanup() {
    rm -rf "$tmp" # the dump and perf inject's jitted-*.so files live here
    for m in "${maps[@]}"; do rm -f "$m"; done
}
trap cleanup EXIT
# perf record/inject write a build-id cache under ~/.debug: keep it private
export HOME=$tmp
unset PERFTRAMP

if ! perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1; then
    sed 's/^/  /' "$tmp/probe.log" | head -5
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"
fi

# Reads `perf script -F comm,ip,sym,dso` on stdin; prints
# "hot complete bad_dso never" counts.  A sample is in the hot loop when
# its leaf frame is pt_eval.  want_dso: regex the py:: frames' dso must match.
chain_stats() {
    awk -v want_dso="$1" '
        function finish() {
            if (n > 0 && sym[1] == "pt_eval") {
                hot++
                ok = n >= 9
                split("pt_eval py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main", w, " ")
                for (i = 1; ok && i <= 9; i++)
                    if (sym[i] != w[i] || (w[i] ~ /^py::/ && dso[i] !~ want_dso))
                        ok = 0
                complete += ok
            }
            n = 0
        }
        /py::never/ { never++ }
        /^[^ \t]/ { finish(); next }
        /^$/ { finish(); next }
        /^[ \t]/ { n++; sym[n] = $2; dso[n] = $NF }
        END { finish(); printf "%d %d %d\n", hot, complete, never + 0 }'
}

check_mode() { # name hot complete never
    local name=$1 hot=$2 complete=$3 never=$4
    [ "$never" -eq 0 ] || fail "$name: the never-called trampoline py::never appears $never times"
    [ "$hot" -ge "$MIN_HOT" ] || fail "$name: only $hot samples in the hot loop (need $MIN_HOT)"
    local pct=$((complete * 1000 / hot))
    printf '%s: complete-chain ratio %d/%d = %d.%d%%\n' "$name" "$complete" "$hot" $((pct / 10)) $((pct % 10))
    [ $((complete * 10)) -ge $((hot * 9)) ] || fail "$name: fewer than 90% of hot samples show the full chain"
}

# ---- (a) jitdump + dwarf ------------------------------------------------
mkdir "$tmp/jit"
JITDUMPDIR=$tmp/jit perf record -q -k 1 -e cpu-clock -F 1000 --call-graph dwarf -o "$tmp/a.data" \
    -- "$W" jitdump "$SECONDS_OF_WORK" >"$tmp/a.out" 2>"$tmp/a.err" ||
    { cat "$tmp/a.err"; fail "(a) perf record"; }
pid=$(awk '/^pid /{print $2}' "$tmp/a.out")
[ -n "$pid" ] || fail "(a) workload printed no pid"
[ -s "$tmp/jit/jit-$pid.dump" ] || fail "(a) no $tmp/jit/jit-$pid.dump"
perf inject --jit -i "$tmp/a.data" -o "$tmp/a.jit.data" 2>"$tmp/inject.err" ||
    { cat "$tmp/inject.err"; fail "(a) perf inject --jit"; }
n_so=$(ls "$tmp/jit" | grep -c "^jitted-$pid-.*\.so$")
echo "(a) perf inject --jit wrote $n_so jitted-$pid-*.so files (one per trampoline)"
[ "$n_so" -eq 5 ] || fail "(a) expected 5 jitted .so files, got $n_so"
perf script -i "$tmp/a.jit.data" -F comm,ip,sym,dso >"$tmp/a.script" 2>"$tmp/a.script.err" ||
    { cat "$tmp/a.script.err"; fail "(a) perf script"; }
read -r hot complete never < <(chain_stats "jitted-$pid-[0-9]+\\.so" <"$tmp/a.script")
check_mode "(a) jitdump, perf record -k 1 --call-graph dwarf + inject --jit" "$hot" "$complete" "$never"

# ---- (b) perf map + frame pointers --------------------------------------
perf record -q -e cpu-clock -F 1000 --call-graph fp -o "$tmp/b.data" \
    -- "$W" perfmap "$SECONDS_OF_WORK" >"$tmp/b.out" 2>"$tmp/b.err" ||
    { cat "$tmp/b.err"; fail "(b) perf record"; }
pid=$(awk '/^pid /{print $2}' "$tmp/b.out")
[ -n "$pid" ] || fail "(b) workload printed no pid"
maps+=("/tmp/perf-$pid.map")
[ -s "/tmp/perf-$pid.map" ] || fail "(b) no /tmp/perf-$pid.map"
perf script -i "$tmp/b.data" -F comm,ip,sym,dso >"$tmp/b.script" 2>"$tmp/b.script.err" ||
    { cat "$tmp/b.script.err"; fail "(b) perf script"; }
read -r hot complete never < <(chain_stats "perf-$pid\\.map" <"$tmp/b.script")
check_mode "(b) perf map, perf record --call-graph fp" "$hot" "$complete" "$never"
exit 0
