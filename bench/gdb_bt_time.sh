#!/bin/bash
# SPDX-License-Identifier: MIT
# gdb's time from start to a finished `bt` with 10,000 live trampolines
# published through the GDB JIT interface (PERFTRAMP_GDB).
#   gdb_bt_s_10k      gdb -p attaches to a process that already holds the
#                     10,000 trampolines (gdb reads every JIT entry at
#                     attach), prints bt, detaches.
#   gdb_run_bt_s_10k  gdb runs the program from its start: the 10,000
#                     trampolines are created under gdb (the first 128
#                     tell gdb at once, the rest at their first call:
#                     docs/unwinding.md, "The publication rule"); then
#                     breaks in the target and prints bt.  Target <= 2 s.
#                     Skipped with BENCH_QUICK=1.
# Both check that bt really shows the trampoline's name.  Environment:
# PT_SRCDIR, PT_CC, BENCH_CPPFLAGS, BENCH_CFLAGS, BENCH_LIBS (bench/run.sh).
set -u
n=10000
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
if ! command -v gdb >/dev/null 2>&1; then
    echo "gdb_bt_s_10k: n/a (gdb not installed)"
    exit 0
fi
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-gdbbench-XXXXXX") || exit 1
pid=
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
prog=$tmp/gdb_bt_prog
# shellcheck disable=SC2086
if ! ${PT_CC:-cc} ${BENCH_CPPFLAGS:--I$src/include -I$src/src} ${BENCH_CFLAGS:-} -g -O1 -fno-omit-frame-pointer \
    -o "$prog" "$src/tests/gdb/gdb_bt_prog.c" "$src/tests/perf/hidden_rbp.S" ${BENCH_LIBS:-} 2>"$tmp/cc.err"; then
    echo "gdb_bt_s_10k: n/a (tests/gdb/gdb_bt_prog.c does not build: $(head -n 1 "$tmp/cc.err"))"
    exit 0
fi
now() { date +%s.%N; }
gdb_args=(-nx -batch -ex 'set debuginfod enabled off' -ex 'set pagination off')

# 1. attach to a process that already has them
"$prog" "$n" wait >"$tmp/out" 2>&1 &
pid=$!
for _ in $(seq 1 600); do
    grep -q '^ready' "$tmp/out" && break
    sleep 0.1
done
if ! grep -q '^ready' "$tmp/out"; then
    echo "gdb_bt_s_10k: n/a (the program did not get ready: $(head -n 1 "$tmp/out"))"
    exit 0
fi
t0=$(now)
gdb "${gdb_args[@]}" -p "$pid" -ex bt -ex 'set var gdb_go = 1' -ex detach >"$tmp/attach" 2>&1
t1=$(now)
wait "$pid" 2>/dev/null
pid=
if grep -q 'in py::chosen' "$tmp/attach" && grep -q 'gdb_caller' "$tmp/attach"; then
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "gdb_bt_s_10k: %.2f\n", b - a }'
    echo "# gdb_bt_s_10k: gdb -p, bt, detach on a process with $n live trampolines ($(gdb --version | head -n 1))"
else
    echo "gdb_bt_s_10k: n/a (bt did not show the trampoline: $(grep -m1 -E '^#|rror' "$tmp/attach"))"
fi

# 2. gdb runs it from the start
if [ -n "${BENCH_QUICK:-}" ] && [ "${BENCH_QUICK}" != 0 ]; then
    echo "gdb_run_bt_s_10k: n/a (BENCH_QUICK)"
    exit 0
fi
t0=$(now)
gdb "${gdb_args[@]}" -ex 'break gdb_target' -ex run -ex bt -ex kill --args "$prog" "$n" >"$tmp/run" 2>&1
t1=$(now)
if grep -q 'in py::chosen' "$tmp/run"; then
    awk -v a="$t0" -v b="$t1" -v n="$n" 'BEGIN { printf "gdb_run_bt_s_10k: %.2f\n", b - a
        printf "# gdb_run_bt_s_10k: %.2f ms of gdb per trampoline created under gdb\n", (b - a) * 1000 / n }'
else
    echo "gdb_run_bt_s_10k: n/a (bt did not show the trampoline: $(grep -m1 -E '^#|rror' "$tmp/run"))"
fi
