#!/bin/bash
# SPDX-License-Identifier: MIT
# Benchmark smoke run: `make bench` in quick mode (fewer iterations), only to
# prove the harness still builds and prints every key.  Nothing asserts a
# time: a slow machine must not fail CI.  Runs in the tree tools/quickstart
# configured and built.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=$(mktemp)
trap 'rm -f "$out"' EXIT
BENCH_QUICK=1 make bench | tee "$out"
missing=0
for k in wrap_vs_floor wrap_ns_none code_floor_ns wrap_vs_floor_noprefault wrap_ns_none_noprefault \
    wrap_ns_perfmap wrap_ns_jitdump wrap_ns_all write_floor_ns jitdump_vs_floor \
    naive_vs_perftramp call_extra_instructions call_ratio_empty call_ratio_100ns call_extra_instructions_near \
    call_ratio_empty_near call_ratio_100ns_near bytes_per_trampoline_none bytes_per_trampoline_forget_names \
    bytes_per_trampoline_jitdump dump_bytes_per_trampoline unwind_ratio_1M_vs_100 gdb_bt_s_10k \
    scaling_wrap_ns_1e2 scaling_wrap_ns_1e4 scaling_bytes_1e2 scaling_bytes_1e4 scaling_unwind_step_ns_1e2 \
    scaling_unwind_step_ns_1e4 gdb_vs_none all_vs_floor gdb_run_bt_s_10k; do
    grep -Eq "^$k: ([0-9.]+|n/a \(.+\))\$" "$out" || { echo "60-bench: no line for $k"; missing=1; }
done
test -s bench/results-quick.md || { echo "60-bench: bench/results-quick.md not written"; missing=1; }
grep -q '^- load average' bench/results-quick.md || { echo "60-bench: no load average in bench/results-quick.md"; missing=1; }
# the plot, from the smoke run's scaling data (gnuplot-nox: tools/deps/bench.txt)
make bench-plot || { echo "60-bench: make bench-plot failed"; missing=1; }
exit $missing
