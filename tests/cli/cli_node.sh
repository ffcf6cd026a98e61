#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check against a real peer: node (V8) writes a jitdump with
# unwinding info for a small script.  check must accept it (exit 0) and
# reject truncated and corrupted copies (exit 1, a message, no crash).
# PROOF: check.node-jitdump (docs/testing.md).
set -u
: "${PT_BUILDDIR:=.}" "${PT_SRCDIR:=.}"
PT="$PT_BUILDDIR/tools/perftramp"
command -v node >/dev/null 2>&1 || { echo "PROOF: check.node-jitdump not-run node not installed"; echo "SKIP: node not installed"; exit 77; }
[ -x "$PT" ] || { echo "FAIL: $PT not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cli_node.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
. "$PT_SRCDIR/tests/lib/cli_lib.sh"

cat > "$work/fib.js" <<'JS'
function fib(n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }
let s = 0;
for (let i = 0; i < 30; i++) s += fib(18);
console.log(s);
JS
# node writes jit-<pid>.dump into its working directory
(cd "$work" && node --perf-prof --perf-prof-unwinding-info --interpreted-frames-native-stack fib.js) \
    > "$work/node.out" 2>&1 || { echo "FAIL: node failed"; cat "$work/node.out"; exit 1; }
dump=$(ls "$work"/jit-*.dump 2>/dev/null | head -1)
[ -n "$dump" ] || { echo "FAIL: node $(node --version) wrote no jit-*.dump with --perf-prof"; exit 1; }
echo "node $(node --version) wrote $(wc -c < "$dump") bytes"

check_expect 0 "$dump" "node dump"
"$PT" check "$dump" | head -8
"$PT" check --json "$dump" > "$work/node.json"
# the JSON must parse (node is here anyway) and agree with the exit status
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
const f = r.files[0];
if (!r.valid || !f.valid || f.errors !== 0) throw new Error("json says invalid");
if (f.records.LOAD < 1 || f.records.UNWINDING_INFO < 1) throw new Error("json counts no LOAD/UNWINDING_INFO");
if (f.header.arch !== "x86_64" && f.header.elf_mach === 62) throw new Error("arch name");
const kinds = {};
for (const i of f.issues) kinds[i.message.replace(/[0-9]+/g, "N")] = (kinds[i.message.replace(/[0-9]+/g, "N")] || 0) + 1;
console.log("json ok: " + f.records.total + " records, " + f.warnings + " warnings; kinds listed:", kinds);
' "$work/node.json" || { echo "FAIL: --json output"; head -c 2000 "$work/node.json"; fail=1; }

corrupt_all "$dump" node
if [ "$fail" = 0 ]; then
    echo "PROOF: check.node-jitdump proven perftramp check accepts node $(node --version)'s dump and rejects every corrupted copy"
else
    echo "PROOF: check.node-jitdump failed (see above)"
fi
exit $fail
