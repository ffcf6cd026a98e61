#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check against perf on node's own dumps (V8's perf support),
# generated here: node --perf-prof for a plain workload, and with code
# garbage-collected and its addresses reused (--expose-gc --always-sparkplug,
# gc() in a loop).  Both must be valid, and perf must agree: perf inject
# writes a .so per LOAD and names every sample in jitted code after the code
# that ran there -- on reused addresses, after the newest LOAD.
set -u
PROOF_ID="check.node check.node-gc"
# shellcheck source=tests/lib/producers_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/producers_lib.sh"
command -v node > /dev/null 2>&1 || not_run "node is not installed (tools/deps/check.txt: nodejs)"

mkdir -p "$work/plain" "$work/gc"
cat > "$work/plain/fib.js" << 'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 40; i++) s += fib(24);
console.log(s);
JS
# fresh functions each round, compiled by Sparkplug, dropped and collected:
# later code lands on the addresses of collected code
cat > "$work/gc/gc.js" << 'JS'
let sink = 0;
for (let round = 0; round < 60; round++) {
  const fns = [];
  for (let k = 0; k < 20; k++)
    fns.push(new Function("n", `let s = ${round * 100 + k}; for (let i = 0; i < n; i++) s = (s * 31 + i) | 0; return s;`));
  for (const f of fns) sink += f(20000);
  gc();
}
console.log(sink);
JS

run_node() { # DIR ID SCRIPT FLAGS...
    rn_dir=$1 rn_id=$2 rn_js=$3
    shift 3
    (cd "$rn_dir" && record "$rn_dir" node "$@" "$rn_js") || { echo "FAIL: node $* $rn_js"; cat "$rn_dir/out.txt"; return 1; }
    rn_dump=$(ls "$rn_dir"/jit-*.dump 2> /dev/null | head -1)
    [ -n "$rn_dump" ] || { echo "FAIL: node $(node --version) wrote no jit-<pid>.dump"; return 1; }
    judge "$rn_dump"
    inject "$rn_dir" "$rn_dump"
    samples "$rn_dir"
    sed -n '1,12p' "$work/check.txt"
    if agree "$rn_id" && [ "$check_rc" -eq 0 ] && [ "${s_expected:-0}" -ge 10 ]; then
        echo "PROOF: $rn_id proven valid and perf agrees: $n_so .so for $n_load LOADs, $s_named of $s_expected samples in jitted code named right${4:+}"
        return 0
    fi
    [ "${s_expected:-0}" -ge 10 ] || echo "FAIL: $rn_id: only ${s_expected:-0} samples in jitted code"
    echo "PROOF: $rn_id failed check exit $check_rc, perf inject exit $inject_rc, $n_so .so for $n_load LOADs, ${s_misnamed:-?} samples mis-named"
    fail=1
    return 1
}

echo "node $(node --version)"
run_node "$work/plain" check.node fib.js --perf-prof --perf-prof-unwinding-info
if run_node "$work/gc" check.node-gc gc.js --perf-prof --expose-gc --always-sparkplug; then
    reused=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["files"][0]["loads"]["reused_addresses"])' "$work/check.json")
    echo "node-gc: $reused LOADs replaced older code at the same addresses; $s_reused samples on reused addresses, $s_reused_named named after the newest LOAD"
    [ "$reused" -gt 0 ] || { echo "FAIL: node-gc: no address reused (gc() did not collect code?)"; fail=1; }
    [ "$s_reused_named" -eq "$s_reused" ] || { echo "FAIL: node-gc: samples on reused addresses mis-named"; fail=1; }
fi
exit $fail
