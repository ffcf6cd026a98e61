#!/bin/bash
# SPDX-License-Identifier: MIT
# `make bench`: runs every benchmark, prints one `key: value` line per
# metric (or `key: n/a (reason)`), and writes a Markdown table with the
# machine, the date and the commit to bench/results.md in the build
# directory (bench/results-quick.md with BENCH_QUICK=1).
#
# Environment (set by mk/bench.am): PT_SRCDIR, PT_BUILDDIR, PT_CC,
# BENCH_CPPFLAGS, BENCH_CFLAGS, BENCH_LIBS (to build bench/unwind_cost.c,
# which the unwind work owns), BENCH_QUICK=1 for a smoke run.
set -u
src=${PT_SRCDIR:?} build=${PT_BUILDDIR:?}
quick=${BENCH_QUICK:-0}
[ "$quick" = 0 ] && quick=
bin=$build/bench
log=$(mktemp "${TMPDIR:-/tmp}/perftramp-bench-log.XXXXXX")
trap 'rm -f "$log" "$log".*' EXIT
export PT_SRCDIR PT_BUILDDIR PT_CC BENCH_QUICK

# The load: every target is a ratio to a floor measured in the same run,
# so a busy machine slows both sides, but not always alike.  Warn when the
# 1-minute load is above cores - 0.5: then at least one other runnable
# task shares every core most of the time, and preemptions land in batches.
loadavg() { cut -d' ' -f1-3 /proc/loadavg; }
load_before=$(loadavg)
cores=$(nproc)
load_warn() { # when label
    awk -v l="${2%% *}" -v c="$cores" 'BEGIN { exit !(l > c - 0.5) }' &&
        echo "bench: WARNING: load average $2 $1 is above $cores cores - 0.5: figures are noisy, ratios less so" >&2
    return 0
}
load_warn before "$load_before"

keys="wrap_vs_floor wrap_ns_none code_floor_ns wrap_vs_floor_noprefault wrap_ns_none_noprefault wrap_ns_perfmap wrap_ns_jitdump wrap_ns_all write_floor_ns jitdump_vs_floor
naive_vs_perftramp call_extra_instructions call_ratio_empty call_ratio_100ns call_extra_instructions_near
call_ratio_empty_near call_ratio_100ns_near call_ratio_empty_main_gen call_ratio_100ns_main_gen bytes_per_trampoline_none
bytes_per_trampoline_forget_names bytes_per_trampoline_unwind bytes_per_trampoline_jitdump dump_bytes_per_trampoline unwind_ratio_1M_vs_100 gdb_bt_s_10k
wrap_ns_elf bytes_per_trampoline_elf inject_report_vs_elf_report_10k
scaling_wrap_ns_1e2 scaling_wrap_ns_1e4 scaling_bytes_1e2 scaling_bytes_1e4 scaling_unwind_step_ns_1e2 scaling_unwind_step_ns_1e4"
[ -n "$quick" ] || keys="$keys scaling_wrap_ns_1e6 scaling_wrap_ns_1e7 scaling_bytes_1e6 scaling_bytes_1e7
scaling_unwind_step_ns_1e6 scaling_unwind_step_ns_1e7"
# issue 19, items 3 and 4 (bench/wrap.c, bench/gdb_bt_time.sh)
keys="$keys gdb_vs_none all_vs_floor gdb_run_bt_s_10k"
# trampoline creation against CPython's own (bench/python_create.sh)
keys="$keys py312_create_vs_builtin py312_rss_per_fn_vs_builtin py313_create_vs_builtin py313_rss_per_fn_vs_builtin
py313_create_vs_builtin_jit py313_rss_per_fn_vs_builtin_jit"

# stage NAME TIMEOUT CMD...: runs one benchmark, keeps its `key: value` and
# `# note` lines; a crash or timeout is recorded as a note.
stage() {
    local name=$1 limit=$2
    shift 2
    echo "bench: $name" >&2
    local t0=$SECONDS
    timeout "$limit" "$@" >"$log.out" 2>"$log.err"
    local rc=$?
    grep -E '^(# |[A-Za-z0-9_]+: )' "$log.out" >>"$log"
    if [ $rc = 77 ]; then # automake's SKIP: the script says why on stdout
        echo "# $name: skipped: $(grep -v '^#' "$log.out" | head -n 1)" >>"$log"
    elif [ $rc -ne 0 ]; then
        echo "# $name: exit $rc$( [ $rc = 124 ] && echo ' (timeout)'): $(tail -n 3 "$log.err" | tr '\n' ' ')" >>"$log"
    fi
    echo "# $name: $((SECONDS - t0)) s" >>"$log"
}

value() { # the numeric value of a key, empty when n/a or missing
    sed -n "s/^$1: \([0-9.eE+-]*\)\$/\1/p" "$log" | tail -n 1
}

ratio() { [ -n "$1" ] && [ -n "$2" ] && awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b }'; }

stage wrap 600 "$bin/bench_wrap"
stage naive 300 "$bin/bench_naive"
stage call 300 "$bin/bench_call" wall

# call_extra_instructions: callgrind's Ir with collection on only inside
# loop_tramp, minus only inside loop_direct, per call.
n_calls=$([ -n "$quick" ] && echo 10000 || echo 1000000)
if command -v valgrind >/dev/null 2>&1; then
    echo "bench: callgrind" >&2
    ir() { # function mode
        valgrind --tool=callgrind --toggle-collect="$1" --callgrind-out-file="$log.cg" \
            "$bin/bench_call" "$2" "$n_calls" >/dev/null 2>"$log.err" || return 1
        sed -n 's/^totals: *\([0-9]*\).*/\1/p;s/^summary: *\([0-9]*\).*/\1/p' "$log.cg" | head -n 1
    }
    # count: the main table; count-near: the direct-call table
    for mode in count count-near; do
        key=call_extra_instructions$([ $mode = count-near ] && echo _near)
        d=$(ir loop_direct $mode) t=$(ir loop_tramp $mode)
        if [ -n "$d" ] && [ -n "$t" ]; then
            awk -v d="$d" -v t="$t" -v n="$n_calls" -v k="$key" 'BEGIN {
                printf "%s: %.2f\n", k, (t - d) / n
                printf "# %s: Ir %d through the trampoline, %d direct, %d calls each\n", k, t, d, n }' >>"$log"
        else
            echo "$key: n/a (callgrind failed: $(tail -n 1 "$log.err"))" >>"$log"
        fi
    done
else
    echo "call_extra_instructions: n/a (valgrind not installed)" >>"$log"
    echo "call_extra_instructions_near: n/a (valgrind not installed)" >>"$log"
fi

stage memory 600 "$bin/bench_memory"
# 10^2 .. 10^7 live trampolines (BENCH_QUICK: 10^2, 10^4)
stage scaling 900 "$bin/bench_scaling"

# Benchmarks other areas own: run them when they exist.
if [ -f "$src/bench/unwind_cost.c" ]; then
    echo "bench: building unwind_cost" >&2
    # shellcheck disable=SC2086
    if ${PT_CC:-cc} $BENCH_CPPFLAGS $BENCH_CFLAGS -o "$bin/unwind_cost" "$src/bench/unwind_cost.c" \
        $BENCH_LIBS 2>"$log.err"; then
        stage unwind_cost 600 "$bin/unwind_cost"
    else
        echo "unwind_ratio_1M_vs_100: n/a (bench/unwind_cost.c does not build: $(head -n 1 "$log.err"))" >>"$log"
    fi
else
    echo "unwind_ratio_1M_vs_100: n/a (bench/unwind_cost.c not written yet)" >>"$log"
fi
if [ -f "$src/bench/gdb_bt_time.sh" ]; then
    stage gdb_bt 600 bash "$src/bench/gdb_bt_time.sh"
else
    echo "gdb_bt_s_10k: n/a (bench/gdb_bt_time.sh not written yet)" >>"$log"
fi
# perf inject --jit + perf report (jitdump) vs perf report (PERFTRAMP_ELF)
stage report_time 900 bash "$src/bench/report_time.sh"
if [ -f "$src/bench/python_overhead.sh" ]; then
    # shellcheck disable=SC2046
    stage python_overhead 600 bash "$src/bench/python_overhead.sh" $([ -n "$quick" ] && echo 1 1 0.3)
fi
# the Lua 5.4 port (examples/lua): patched vs unpatched, same run
keys="$keys lua_off_vs_unpatched lua_perfmap_vs_off"
# shellcheck disable=SC2046
PT_SRCDIR=$src PT_BUILDDIR=$build stage lua_overhead 600 bash "$src/bench/lua_overhead.sh" $([ -n "$quick" ] && echo 3)
# shellcheck disable=SC2046
stage python_create 900 sh "$src/bench/python_create.sh" $([ -n "$quick" ] && echo 1)
# CPython 3.13.5 on perftramp against stock, same source and flags (examples/cpython)
keys="$keys cpython_fib_perf_vs_stock cpython_fib_perfjit_vs_stock cpython_create_vs_stock cpython_rss_vs_stock cpython_off_vs_stock"
# shellcheck disable=SC2046
PT_SRCDIR=$src PT_BUILDDIR=$build stage cpython_vs_stock 2400 sh "$src/bench/cpython_vs_stock.sh" $([ -n "$quick" ] && echo 3)
keys="$keys enable_ms_100k"; make -s -C "$build" tests/api/check_dynamic >/dev/null 2>&1 && stage enable_100k 300 env CK_RUN_CASE=enable100k "$build/tests/api/check_dynamic" || echo "enable_ms_100k: n/a (tests/api/check_dynamic does not build here: it needs Check)" >>"$log"

# Derived ratios.
r=$(ratio "$(value wrap_ns_jitdump)" "$(value write_floor_ns)")
echo "jitdump_vs_floor: ${r:-n/a (needs wrap_ns_jitdump and write_floor_ns)}" >>"$log"
r=$(ratio "$(value naive_ns)" "$(value wrap_ns_perfmap)")
echo "naive_vs_perftramp: ${r:-n/a (needs wrap_ns_perfmap)}" >>"$log"

# Targets from the bench issue (x86-64 for the instruction count).
target() {
    case $1 in
    call_extra_instructions) echo "<= 6" ;; call_ratio_100ns) echo "<= 1.03" ;; call_ratio_100ns_near) echo "<= 1.03" ;;
    jitdump_vs_floor) echo "<= 1.5" ;; wrap_vs_floor) echo "<= 1.5" ;;
    bytes_per_trampoline_forget_names) echo "<= 48" ;; unwind_ratio_1M_vs_100) echo "<= 1.3" ;;
    bytes_per_trampoline_unwind) echo "<= 80" ;; scaling_bytes_1e7) echo "<= 64" ;;
    py31[2-9]_create_vs_builtin* | py31[2-9]_rss_per_fn_vs_builtin*) echo "<= 1.0" ;;
    naive_vs_perftramp) echo ">= 3" ;;
    cpython_fib_perf_vs_stock | cpython_fib_perfjit_vs_stock | cpython_create_vs_stock) echo "<= 1.0" ;;
    cpython_rss_vs_stock) echo "<= 1.05" ;; cpython_off_vs_stock) echo "<= 1.01" ;;
    gdb_vs_none) echo "<= 3" ;; all_vs_floor) echo "<= 1.5" ;; gdb_run_bt_s_10k) echo "<= 2" ;;
    *) echo "" ;;
    esac
}
met() { # key value -> yes/no/-
    local t
    t=$(target "$1")
    if [ -z "$t" ] || [ -z "$2" ]; then echo "-"; return; fi
    awk -v v="$2" -v op="${t% *}" -v lim="${t#* }" 'BEGIN {
        ok = (op == "<=") ? (v <= lim) : (v >= lim); print ok ? "yes" : "**no**" }'
}

# What each target's ratio divides by, measured in the same run.
floor_of() {
    case $1 in
    wrap_vs_floor) echo "code_floor_ns $(value code_floor_ns) ns" ;;
    wrap_vs_floor_noprefault) echo "code_floor_ns_noprefault $(value code_floor_ns_noprefault) ns" ;;
    jitdump_vs_floor) echo "write_floor_ns $(value write_floor_ns) ns" ;;
    call_ratio_100ns) echo "direct call $(value call_direct_ns_100ns) ns" ;;
    call_ratio_empty) echo "direct call $(value call_direct_ns_empty) ns" ;;
    call_ratio_*_near | call_ratio_*_main_gen) echo "direct call of the same generated target" ;;
    call_extra_instructions) echo "direct call (callgrind Ir)" ;;
    naive_vs_perftramp) echo "wrap_ns_perfmap $(value wrap_ns_perfmap) ns" ;;
    unwind_ratio_1M_vs_100) echo "step with 100 live $(value unwind_step_ns_100) ns" ;;
    bytes_per_trampoline_unwind) echo "slot 32 B (x86-64) + FDE 28 B + search entry 8 B (no name copy)" ;;
    bytes_per_trampoline_none) echo "slot 32 B (x86-64) + name copy (8 B pointer + its malloc chunk)" ;;
    bytes_per_trampoline_*) echo "slot 32 B (x86-64)" ;;
    scaling_bytes_1e7) echo "slot 32 B + FDE 28 B (x86-64)" ;;
    py31*_vs_builtin*) echo "CPython's own trampoline, same interpreter" ;;
    cpython_*_vs_stock) echo "stock CPython 3.13.5, same source and flags" ;;
    *) echo "" ;;
    esac
}

line_of() { grep -E "^$1: " "$log" | tail -n 1; }
for k in $keys; do
    l=$(line_of "$k")
    echo "${l:-$k: n/a (benchmark did not report it)}"
done

load_after=$(loadavg)
load_warn after "$load_after"
for k in $keys; do # the targets, met or missed, with their floor
    t=$(target "$k")
    [ -n "$t" ] || continue
    echo "bench: target $k $t: $(met "$k" "$(value "$k")" | tr -d '*') (value $(value "$k"), floor $(floor_of "$k"))" >&2
done

out=$build/bench/results$([ -n "$quick" ] && echo -quick).md
commit=${BENCH_COMMIT:-$(git -C "$src" rev-parse --short HEAD 2>/dev/null || echo unknown)}
dirty=$(git -C "$src" status --porcelain -- src include bench 2>/dev/null | grep -q . && echo " (+ uncommitted changes)")
{
    echo "# perftramp benchmarks"
    echo
    echo "- machine: $(uname -srm), $cores cores"
    echo "- CPU model: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')"
    echo "- load average (1, 5, 15 min): $load_before before, $load_after after$(awk -v a="${load_before%% *}" -v b="${load_after%% *}" -v c="$cores" 'BEGIN { if (a > c - 0.5 || b > c - 0.5) printf " (**above %s cores - 0.5: a busy machine**)", c }')"
    echo "- date: $(date -u '+%Y-%m-%d %H:%M UTC')"
    echo "- commit: $commit$dirty"
    echo "- mode: $([ -n "$quick" ] && echo 'quick (BENCH_QUICK=1: fewer iterations, figures are NOT meaningful)' || echo full)"
    echo "- reproduce: \`make bench\` in a build directory"
    echo
    echo "Targets are ratios to a floor measured in the same run (bench/PERFORMANCE.md);"
    echo "absolute times are information only.  A slow machine never fails a benchmark."
    echo
    echo "| metric | value | target | floor | met |"
    echo "|---|---|---|---|---|"
    for k in $keys; do
        l=$(line_of "$k")
        v=${l#*: }
        echo "| \`$k\` | ${v:-n/a} | $(target "$k") | $(floor_of "$k") | $(met "$k" "$(value "$k")") |"
    done
    echo
    echo "Scaling (bench_scaling, PERFTRAMP_UNWIND on, each count in its own process; \`make bench-plot\` draws bench/scaling.svg):"
    echo
    echo "| live trampolines | ns per wrap (fill) | ns per wrap (at that count) | resident B per trampoline | ns per unwind step |"
    echo "|---|---|---|---|---|"
    for c in 1e2 1e4 1e6 1e7; do
        [ -n "$(value scaling_wrap_ns_$c)" ] || continue
        echo "| $c | $(value scaling_wrap_ns_$c) | $(value scaling_wrap_at_ns_$c) | $(value scaling_bytes_$c) | $(value scaling_unwind_step_ns_$c) |"
    done
    echo
    echo "Details:"
    echo
    grep -E '^# ' "$log" | sed 's/^# /- /'
    grep -E '^[A-Za-z0-9_]+: ' "$log" | grep -vE "^($(echo $keys | tr ' ' '|')): " | sed 's/^/- /'
} >"$out"
echo "bench: wrote $out" >&2
# the data make bench-plot draws: count, fill ns, at-count ns, bytes, unwind ns
dat=$build/bench/scaling$([ -n "$quick" ] && echo -quick).dat
for c in 1e2 1e4 1e6 1e7; do
    [ -n "$(value scaling_wrap_ns_$c)" ] || continue
    echo "$(awk -v c="$c" 'BEGIN { printf "%d", c }') $(value scaling_wrap_ns_$c) $(value scaling_wrap_at_ns_$c) $(value scaling_bytes_$c) $(value scaling_unwind_step_ns_$c)"
done >"$dat"
echo "bench: wrote $dat" >&2
