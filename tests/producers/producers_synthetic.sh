#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check against perf on dumps whose defects are made on purpose,
# by a real producer (tests/producers/jitdump_producer.py: x86-64 code in executable
# memory, run under perf record -k 1) and by editing its dump afterwards,
# before perf inject reads it.  For each case the check's verdict must be
# what perf does:
#   reuse       new code LOADed at a reused address: valid; perf names the
#               samples there after the newest LOAD
#   tail        a LOAD whose mapped .eh_frame area covers older live code:
#               a warning naming the range; perf names the samples there as
#               the newer LOAD's .so ([unknown]), exactly in that range
#   bun name    jit-<tid>-<pid>.dump: an error; perf inject ignores the file
#   arch ts     JITDUMP_FLAGS_ARCH_TIMESTAMP: an error; perf inject exits 255
#   header 48, 80: valid; 96: an error (perf refuses)
#   CLOSE short by one byte, 3 trailing bytes, the dump appended twice:
#               valid (warnings); perf writes every .so
#   a torn LOAD at the end, another dump appended: errors; perf loses .so
set -u
PROOF_ID=check.synthetic
# shellcheck source=tests/lib/producers_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/producers_lib.sh"
PRODUCER="$PT_SRCDIR/tests/producers/jitdump_producer.py"
[ "$(uname -m)" = x86_64 ] || not_run "tests/producers/jitdump_producer.py writes x86-64 code"
cases=0

# one_case LABEL DIR DUMP WANT_SO [CHECK ARGS]: judge, inject, compare
one_case() {
    oc_label=$1 oc_dir=$2 oc_dump=$3 oc_want=$4
    shift 4
    judge "$oc_dump" "$@"
    inject "$oc_dir" "$oc_dump"
    samples "$oc_dir"
    n_load_read=$n_load
    n_load=$oc_want # what the producer wrote: perf must make that many .so
    agree "$oc_label" && cases=$((cases + 1))
    n_load=$n_load_read
}

# --- reuse: a LOAD over live code replaces it -----------------------------
record "$work/reuse" python3 "$PRODUCER" reuse "$work/reuse" || failed "producer (reuse) under perf record"
dump=$(ls "$work"/reuse/jit-*.dump)
one_case "reused address" "$work/reuse" "$dump" 2
[ "$check_rc" -eq 0 ] || failed "reuse: not valid"
! has_kind overlap.tail_on_code || failed "reuse: an overlap reported for a replaced LOAD"
[ "${s_reused:-0}" -ge 20 ] || failed "reuse: only ${s_reused:-0} samples on the reused address"
[ "$s_reused_named" -eq "$s_reused" ] || failed "reuse: perf named $s_reused_named of $s_reused samples after the newest LOAD"
grep -q "1 replaced older code at the same addresses" "$work/check.txt" || failed "reuse: the summary does not count the replacement"

# --- tail: a LOAD's mapped area over older live code ----------------------
record "$work/tail" python3 "$PRODUCER" tail "$work/tail" || failed "producer (tail) under perf record"
dump=$(ls "$work"/tail/jit-*.dump)
judge "$dump"
inject "$work/tail" "$dump"
samples "$work/tail"
echo "tail: check exit $check_rc; perf mis-named $s_misnamed samples, $s_predicted in the range the check warned about"
[ "$check_rc" -eq 0 ] || failed "tail: a warning case rated invalid"
has_kind overlap.tail_on_code || failed "tail: the shadowed code is not reported"
[ "${s_misnamed:-0}" -ge 20 ] || failed "tail: perf mis-named only ${s_misnamed:-0} samples (workload too short?)"
[ "$s_predicted" -eq "$s_misnamed" ] || failed "tail: perf mis-named samples outside the range the check named"
cases=$((cases + 1))

# --- file-level variants of one plain recording -----------------------------
record "$work/plain" python3 "$PRODUCER" plain "$work/plain" --iters 60000000 || failed "producer (plain) under perf record"
dump=$(ls "$work"/plain/jit-*.dump)
cp "$dump" "$work/orig.dump"
one_case "plain" "$work/plain" "$dump" 2
[ "$check_rc" -eq 0 ] || failed "plain: not valid"

variant() { # LABEL WANT_SO WANT_RC: $dump was rewritten
    vlabel=$1 vwant=$2 vrc=$3
    one_case "$vlabel" "$work/plain" "$dump" "$vwant"
    [ "$check_rc" -eq "$vrc" ] || { echo "FAIL: $vlabel: check exit $check_rc, want $vrc"; head -20 "$work/check.txt"; fail=1; }
    cp "$work/orig.dump" "$dump"
}
# header total_size: perf reads records at 40 whatever it says, up to 80
for hs in 48 80 96; do
    printf "$(printf '\\%03o' $((hs)))" | dd of="$dump" bs=1 seek=8 conv=notrunc status=none
    if [ $hs -le 80 ]; then variant "header total_size $hs" 2 0; else variant "header total_size $hs" 2 1; fi
done
# arch timestamps: perf inject refuses without a TSC conversion
printf '\001' | dd of="$dump" bs=1 seek=32 conv=notrunc status=none
variant "JITDUMP_FLAGS_ARCH_TIMESTAMP" 2 1
[ "$inject_rc" -eq 255 ] || { echo "FAIL: arch timestamps: perf inject exit $inject_rc, not 255"; fail=1; }
grep -q "TSC ticks" "$work/check.txt" || { echo "FAIL: arch timestamps: timestamps not labelled TSC ticks"; fail=1; }
# torn ends
size=$(wc -c < "$dump")
head -c $((size - 1)) "$work/orig.dump" > "$dump"
variant "CLOSE short by one byte" 2 0
head -c 3 /dev/zero >> "$dump"
variant "3 trailing bytes" 2 0
cat "$work/orig.dump" "$work/orig.dump" > "$dump"
variant "the dump appended twice" 2 0
close_off=$((size - 16))
head -c $((close_off - 10)) "$work/orig.dump" > "$dump"
variant "a torn LOAD at the end" 2 1
grep -q "torn LOAD" "$work/check.txt" || { echo "FAIL: torn LOAD not named"; fail=1; }
# another process's dump appended: perf never reads it
cp "$work/orig.dump" "$work/other.dump"
printf '\377\377' | dd of="$work/other.dump" bs=1 seek=20 conv=notrunc status=none
cat "$work/orig.dump" "$work/other.dump" > "$dump"
variant "another dump appended" 4 1

# --- Bun's file name: jit-<tid>-<pid>.dump, perf never reads it ----------------
record "$work/bun" python3 "$PRODUCER" plain "$work/bun" --name bun --iters 30000000 || failed "producer (bun name) under perf record"
dump=$(ls "$work"/bun/jit-*.dump)
judge "$dump"
p inject --jit -i "$work/bun/perf.data" -o "$work/bun/jit.data" > "$work/bun/inject.txt" 2>&1
inject_rc=$?
n_so=$(find "$work/bun" -name 'jitted-*.so' | wc -l)
echo "bun name $(basename "$dump"): check exit $check_rc; perf inject exit $inject_rc, $n_so .so for $n_load LOADs"
[ "$check_rc" -eq 1 ] && [ "$n_so" -eq 0 ] && has_kind name.pattern && cases=$((cases + 1)) ||
    { echo "FAIL: bun name: check and perf disagree"; cat "$work/check.txt"; fail=1; }

if [ $fail -eq 0 ]; then
    echo "PROOF: $PROOF_ID proven $cases cases agree with perf (reused address, shadowing tail, file name, arch timestamps, header sizes, torn and appended dumps)"
else
    echo "PROOF: $PROOF_ID failed the check and perf disagree on a case"
fi
exit $fail
