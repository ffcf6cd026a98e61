# SPDX-License-Identifier: MIT
# Proof-line bookkeeping shared by the shell tests that prove several things
# at once.  Source it after setting PROOF_IDS (the ids this test owns):
#   prove ID proven|failed|not-run "detail"   record one outcome
#   print_proofs                              one PROOF line per id (call it
#                                             from the EXIT trap: an id the
#                                             test never reached: failed)
#   skip "reason"                             every unrecorded id not-run, exit 77
#   bad "what"                                a failed check; the others still run
# shellcheck shell=bash
declare -A proof=() why=()
prove() { proof[$1]=$2; why[$1]=$3; }
# shellcheck disable=SC2317 # called from the EXIT trap
print_proofs() {
    local id
    for id in $PROOF_IDS; do
        # an id the test never reached failed: only skip (a missing tool,
        # a property of the machine) says not-run, with its reason
        echo "PROOF: $id ${proof[$id]:-failed} ${why[$id]:-the test stopped before this part}"
    done
}
skip() {
    local id
    for id in $PROOF_IDS; do [ -n "${proof[$id]:-}" ] || prove "$id" not-run "$*"; done
    echo "SKIP: $*"
    exit 77
}
# shellcheck disable=SC2034 # read by the test that sources this file
failed=0
# shellcheck disable=SC2034 # read by the test that sources this file
bad() { echo "FAIL: $*"; failed=1; }
