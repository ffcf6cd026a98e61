#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check against perf on Erlang/OTP's BeamAsm JIT: erl +JPperf true
# writes /tmp/jit-<pid>.dump, a LOAD per module and stub (tens of thousands),
# no unwinding info: valid, its one repeated warning summarised with a count
# and the advice that such code needs frame pointers; perf agrees.
set -u
PROOF_ID=check.erlang
# shellcheck source=tests/lib/producers_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/producers_lib.sh"
command -v erl > /dev/null 2>&1 || not_run "erl is not installed (tools/deps/check.txt: erlang-base)"
record "$work/erl" erl +JPperf true -noshell -eval '
    io:format("~s~n", [os:getpid()]),
    F = fun Fib(N) when N < 2 -> N; Fib(N) -> Fib(N - 1) + Fib(N - 2) end,
    [F(24) || _ <- lists:seq(1, 12)],
    halt().' || failed "erl +JPperf true under perf record: $(head -3 "$work/erl/out.txt")"
pid=$(head -1 "$work/erl/out.txt")
dump=/tmp/jit-$pid.dump
cleanup_extra="$dump /tmp/jitted-$pid-*.so /tmp/perf-$pid.map"
[ -f "$dump" ] || failed "erl +JPperf true wrote no $dump ($(erl -noshell -eval 'io:format("OTP ~s", [erlang:system_info(otp_release)]), halt().'))"
judge "$dump"
inject "$work/erl" "$dump"
samples "$work/erl"
sed -n '1,12p' "$work/check.txt"
agree check.erlang || failed "the check and perf disagree on Erlang's dump"
[ "$check_rc" -eq 0 ] || failed "Erlang's dump is not valid"
[ "${s_expected:-0}" -ge 10 ] || failed "only ${s_expected:-0} samples in jitted code"
# the repeated warning: one entry with a count, not thousands of lines
n_lines=$(grep -c "LOAD without UNWINDING_INFO" "$work/check.txt")
grep -q "more like it (load.no_unwind)" "$work/check.txt" && [ "$n_lines" -eq 1 ] ||
    failed "LOADs without unwinding info are not summarised ($n_lines lines)"
grep -q "frame pointers" "$work/check.txt" || failed "the advice does not mention frame pointers"
echo "PROOF: check.erlang proven valid and perf agrees: $n_so .so for $n_load LOADs, $s_named of $s_expected samples in jitted code named right"
