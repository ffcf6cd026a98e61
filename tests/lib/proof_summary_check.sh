#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lib/proof_summary.sh against made-up logs: each way a proof can go
# missing (a skipped test, a not-run line, a short count, a test that
# printed nothing, a test left out of TESTS, a SKIP: line, a NOTRUN: line,
# unit tests disabled) must fail strict mode and only be reported outside
# it; the opt-out must win over CI=true.  Also checks that
# tests/proofs.expected is well formed.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
summary=$src/tests/lib/proof_summary.sh
work=$(mktemp -d "${TMPDIR:-/tmp}/pt-proof-summary.XXXXXX") || exit 99
trap 'rm -rf "$work"' EXIT
fails=0 cases=0

# the real list: 4 fields, known "when", count specs LABEL>=N or -, unique ids
if ! awk '
    /^[ \t]*(#|$)/ { next }
    NF != 4 { print "proofs.expected:" NR ": want 4 fields: " $0; bad = 1 }
    $4 != "required" && $4 != "pending" && $4 != "target" { print "proofs.expected:" NR ": when \"" $4 "\"?"; bad = 1 }
    $3 != "-" && $3 !~ /^[a-z-]*>=[0-9]+$/ { print "proofs.expected:" NR ": count \"" $3 "\"?"; bad = 1 }
    $1 !~ /^[a-z0-9_]+(\.[a-z0-9_-]+)+$/ { print "proofs.expected:" NR ": id \"" $1 "\"?"; bad = 1 }
    seen[$1]++ { print "proofs.expected:" NR ": duplicate " $1; bad = 1 }
    END { exit bad }' "$src/tests/proofs.expected"; then
    echo "FAIL: tests/proofs.expected is malformed"
    fails=$((fails + 1))
fi

cat > "$work/expected" << 'EOF'
# id               test        count          when
demo.counted       t/a         contract>=25   required
demo.plain         t/a         -              required
demo.other         t/b         -              required
demo.later         t/c         -              pending
EOF

# mk TEST RESULT LINE...: a log and a .trs for TEST
mk() {
    mk_t=$1 mk_r=$2
    shift 2
    mkdir -p "$work/$(dirname "$mk_t")"
    : > "$work/$mk_t.log"
    for mk_l in "$@"; do printf '%s\n' "$mk_l" >> "$work/$mk_t.log"; done
    printf ':test-result: %s\n' "$mk_r" > "$work/$mk_t.trs"
}
good() {
    rm -rf "$work/t"
    mk t/a PASS "PROOF: demo.counted proven contract 25/25, lifecycle 11/11" "PROOF: demo.plain proven ok"
    mk t/b PASS "PROOF: demo.other proven ok"
}

# expect NAME STATUS ROW-REGEX [summary args...]: runs the summary (logs
# t/a t/b unless --logs-given), checks its exit status and that its output
# matches ROW-REGEX (an extended regex; "" = anything)
expect() {
    e_name=$1 e_status=$2 e_row=$3
    shift 3
    cases=$((cases + 1))
    (cd "$work" && sh "$summary" --expected expected "$@") > "$work/out" 2>&1
    e_rc=$?
    if [ "$e_rc" != "$e_status" ]; then
        echo "FAIL: $e_name: exit $e_rc, want $e_status"; sed 's/^/    /' "$work/out"; fails=$((fails + 1)); return
    fi
    if [ -n "$e_row" ] && ! grep -Eq "$e_row" "$work/out"; then
        echo "FAIL: $e_name: no line matching /$e_row/"; sed 's/^/    /' "$work/out"; fails=$((fails + 1)); return
    fi
    echo "ok: $e_name (exit $e_rc)"
}
logs="t/a.log t/b.log"

unset PERFTRAMP_ALL_PROOFS CI
good
# shellcheck disable=SC2086 # logs: words
{
expect "all proven, strict" 0 '^=== strict mode: every proof' --configured yes $logs
expect "all proven, not strict" 0 '^=== 3 proven, 0 failed, 0 not run, 0 missing, 1 pending' $logs
expect "pending row: its test is not in the tree" 0 'demo.later +pending' $logs

mk t/a PASS "PROOF: demo.counted proven contract 24/24" "PROOF: demo.plain proven ok"
expect "count below the expected number" 1 'demo.counted +FAILED +count 24/24: fewer checks' --configured yes $logs
expect "the same, reported only outside strict mode" 0 'demo.counted +FAILED' $logs
mk t/a PASS "PROOF: demo.counted proven contract 24/25" "PROOF: demo.plain proven ok"
expect "a count with a failed check" 1 'count 24/25: not every check passed' --configured yes $logs
mk t/a PASS "PROOF: demo.counted proven lifecycle 30/30" "PROOF: demo.plain proven ok"
expect "a count under another label falls back to the first N/M" 0 '' --configured yes $logs
mk t/a PASS "PROOF: demo.counted proven all good" "PROOF: demo.plain proven ok"
expect "a count missing from the detail" 1 'no count in the detail' --configured yes $logs

good; mk t/b PASS "PROOF: demo.other not-run gdb is not installed"
expect "a not-run line" 1 'demo.other +not run +gdb is not installed' --configured yes $logs
good; mk t/b SKIP "SKIP: perf record is not permitted here"
expect "a skipped test (exit 77)" 1 'demo.other +not run +t/b skipped: perf record is not permitted' --configured yes $logs
good; mk t/b PASS "nothing to say"
expect "a passing test that printed no PROOF line" 1 'demo.other +MISSING' --configured yes $logs
good; mk t/b FAIL "FAIL: broke"
expect "a failing test that printed no PROOF line" 1 'demo.other +FAILED +t/b FAIL' --configured yes $logs
good; mk t/b PASS "PROOF: demo.other maybe so"
expect "a malformed verdict" 1 'malformed PROOF line' --configured yes $logs
good; mk t/b PASS "PROOF: demo.other proven ok" "PROOF: demo.extra not-run no qemu"
expect "another proof, not run" 1 'demo.extra +not run +no qemu' --configured yes $logs
good; mk t/b PASS "PROOF: demo.other proven ok" "SKIP: reference aarch64: clang not installed"
expect "a SKIP: line in a passing test" 1 'parts of tests skipped' --configured yes $logs
good; mk t/b PASS "PROOF: demo.other proven ok" "NOTRUN: control: needs its own process"
expect "a NOTRUN: line" 1 'NOTRUN|control: needs its own process' --configured yes $logs
good
expect "a test left out of a full run" 1 'demo.other +MISSING +t/b is not in TESTS' --configured yes --full yes t/a.log
expect "a test left out of TESTS=..." 0 '2 outside this run' --configured yes --full no t/a.log
expect "unit tests disabled" 1 'configure --disable-tests' --configured yes --tests-enabled no $logs
mk t/c PASS "nothing"
expect "a pending row whose test is there is required" 1 'demo.later +MISSING' --configured yes $logs t/c.log

# a row of a test that only its own make target runs (make check-package)
cp "$work/expected" "$work/expected.all"
echo "demo.own           t/d         autopkgtest>=3 target" >> "$work/expected"
good
expect "a target row is outside a full run" 0 '^=== 3 proven, 0 failed, 0 not run, 0 missing, 1 pending, 1 outside' --configured yes $logs
mk t/d PASS "PROOF: demo.own proven autopkgtest 3/3"
expect "a target row whose test ran" 0 'demo.own +proven' --configured yes --full no t/d.log
mk t/d PASS "nothing"
expect "a target row whose test ran and printed nothing" 1 'demo.own +MISSING' --configured yes --full no t/d.log
mv "$work/expected.all" "$work/expected"

good; mk t/b SKIP "SKIP: gdb is not installed"
export CI=true
expect "CI=true turns strict mode on" 1 'strict mode on: CI=true' $logs
export PERFTRAMP_ALL_PROOFS=0
expect "PERFTRAMP_ALL_PROOFS=0 opts out under CI=true" 0 'strict mode off' $logs
unset PERFTRAMP_ALL_PROOFS
expect "configure --disable-all-proofs opts out under CI=true" 0 'strict mode off' --configured no $logs
export PERFTRAMP_ALL_PROOFS=1 CI=false
expect "PERFTRAMP_ALL_PROOFS=1 turns strict mode on" 1 'strict mode on' --configured no $logs
unset PERFTRAMP_ALL_PROOFS
expect "CI=false is not CI" 0 'strict mode off' $logs
export PERFTRAMP_ALL_PROOFS=maybe
expect "a bad PERFTRAMP_ALL_PROOFS value" 2 'want 1 \(strict\) or 0' $logs
unset PERFTRAMP_ALL_PROOFS CI
}

if [ $fails -eq 0 ]; then
    echo "PROOF: tests.proof-table proven cases $cases/$cases: every way a proof goes missing fails strict mode"
    exit 0
fi
echo "PROOF: tests.proof-table failed cases $((cases - fails))/$cases"
exit 1
