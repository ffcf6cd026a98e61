#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check against perf on LLVM's jitdump: lli-14 -jit-kind=mcjit
# runs an IR program; LLVM 14's PerfJITEventListener (built in Debian's LLVM,
# LLVM_USE_PERF) writes $JITDUMPDIR/.debug/jit/llvm-IR-jit-<date>-<rand>/
# jit-<pid>.dump, no unwinding info.  The check must find it valid (with a
# warning: frame pointers needed) and perf must agree.
set -u
PROOF_ID=check.lli
# shellcheck source=tests/lib/producers_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/producers_lib.sh"
LLI=$(command -v lli-14 || command -v lli) || not_run "lli-14 is not installed (tools/deps/check.txt: llvm-14)"

mkdir -p "$work/lli"
cat > "$work/lli/fib.ll" << 'LL'
define i32 @fib(i32 %n) {
entry:
  %c = icmp slt i32 %n, 2
  br i1 %c, label %ret, label %rec
ret:
  ret i32 %n
rec:
  %a = sub i32 %n, 1
  %b = sub i32 %n, 2
  %x = call i32 @fib(i32 %a)
  %y = call i32 @fib(i32 %b)
  %s = add i32 %x, %y
  ret i32 %s
}
define i32 @main() {
  %r = call i32 @fib(i32 33)
  %m = and i32 %r, 0
  ret i32 %m
}
LL
record "$work/lli" env JITDUMPDIR="$work/lli" "$LLI" -jit-kind=mcjit "$work/lli/fib.ll" ||
    failed "$LLI -jit-kind=mcjit under perf record: $(head -3 "$work/lli/out.txt")"
dump=$(find "$work/lli/.debug" -name 'jit-*.dump' 2> /dev/null | head -1)
[ -n "$dump" ] || failed "$LLI wrote no jit-<pid>.dump under \$JITDUMPDIR/.debug/jit (LLVM built without LLVM_USE_PERF?)"
judge "$dump"
inject "$work/lli" "$dump"
samples "$work/lli"
sed -n '1,10p' "$work/check.txt"
agree check.lli || failed "the check and perf disagree on lli's dump"
[ "$check_rc" -eq 0 ] || failed "lli's dump is not valid"
[ "${s_expected:-0}" -ge 10 ] || failed "only ${s_expected:-0} samples in jitted code"
has_kind load.no_unwind || failed "LOADs without UNWINDING_INFO not reported"
grep -q "frame pointers" "$work/check.txt" || failed "the advice does not mention frame pointers"
echo "PROOF: check.lli proven valid and perf agrees: $n_so .so for $n_load LOADs, $s_named of $s_expected samples in jitted code named right"
