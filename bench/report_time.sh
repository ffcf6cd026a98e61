#!/bin/bash
# SPDX-License-Identifier: MIT
# What reading a profile costs on the jitdump path against the ELF path,
# for 10,000 trampolines (issue 15), both measured in this run:
#   inject_report_vs_elf_report_10k
#       (perf inject --jit + perf report) on a jitdump profile, divided by
#       perf report alone on a PERFTRAMP_ELF profile of the same workload.
# The workload (bench/report_prog.c) wraps 10,000 trampolines and calls
# each of them round-robin; both profiles use perf record -e cpu-clock -g
# (the jitdump one with -k 1, as jitdump needs).  Both reports must name
# the trampolines (bench::fn_*), or the line says n/a with the reason.
# BENCH_QUICK=1: 1,000 trampolines and a shorter run (the key then says so
# in its note; perf inject on 10,000 takes tens of seconds).
# Environment (bench/run.sh): PT_BUILDDIR, BENCH_QUICK, PERF (default perf).
set -u
LC_ALL=C
export LC_ALL
key=inject_report_vs_elf_report_10k
build=${PT_BUILDDIR:-$(cd "$(dirname "$0")/.." && pwd)}
prog=$build/bench/bench_report_prog
perf=${PERF:-perf}
quick=${BENCH_QUICK:-0}
[ "$quick" = 0 ] && quick=
n=$([ -n "$quick" ] && echo 1000 || echo 10000)
secs=$([ -n "$quick" ] && echo 0.5 || echo 2)

na() {
    echo "$key: n/a ($*)"
    exit 0
}
[ -x "$prog" ] || na "$prog is not built"
command -v "$perf" >/dev/null 2>&1 || na "perf is not installed"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-reportbench-XXXXXX") || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/home" "$tmp/debug" "$tmp/jit" "$tmp/elf"
# perf's build-id cache and $HOME files stay in the temporary directory
perf_cmd() { HOME=$tmp/home "$perf" --buildid-dir "$tmp/debug" "$@"; }
perf_cmd record -q -e cpu-clock -o "$tmp/probe.data" true >"$tmp/probe.err" 2>&1 ||
    na "perf record is not permitted here: $(head -n 1 "$tmp/probe.err")"

now() { date +%s.%N; }
# timed NAME CMD...: runs CMD, records its wall time in $tmp/NAME.s
timed() {
    local name=$1 t0 t1
    shift
    t0=$(now)
    "$@" || return 1
    t1=$(now)
    awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f\n", b - a }' >"$tmp/$name.s"
}
report() { # perf.data -> report text (children, by symbol, call chains folded)
    perf_cmd report -i "$1" --stdio --children --sort sym -g none 2>>"$tmp/report.err"
}

# 1. the jitdump path: record -k 1, inject --jit (one jitted-*.so per trampoline), report
JITDUMPDIR=$tmp/jit perf_cmd record -q -k 1 -e cpu-clock -g -o "$tmp/jit.data" \
    "$prog" jitdump "$n" "$secs" >"$tmp/jit.out" 2>&1 || na "the jitdump run failed: $(tail -n 1 "$tmp/jit.out")"
timed inject perf_cmd inject --jit -i "$tmp/jit.data" -o "$tmp/jit.inj.data" 2>"$tmp/inject.err" ||
    na "perf inject --jit failed: $(tail -n 1 "$tmp/inject.err")"
jitted=$(find "$tmp/jit" -name 'jitted-*.so' | wc -l)
timed jit_report report "$tmp/jit.inj.data" >"$tmp/jit.report" || na "perf report (jitdump) failed: $(tail -n 1 "$tmp/report.err")"

# 2. the ELF path: a plain record, then report
PERFTRAMP_ELF_DIR=$tmp/elf perf_cmd record -q -e cpu-clock -g -o "$tmp/elf.data" \
    "$prog" elf "$n" "$secs" >"$tmp/elf.out" 2>&1 || na "the ELF run failed: $(tail -n 1 "$tmp/elf.out")"
files=$(find "$tmp/elf" -name 'perftramp-*.so' | wc -l)
timed elf_report report "$tmp/elf.data" >"$tmp/elf.report" || na "perf report (ELF) failed: $(tail -n 1 "$tmp/report.err")"

# Honest only when both reports name the trampolines.
jit_names=$(grep -c 'bench::fn_' "$tmp/jit.report")
elf_names=$(grep -c 'bench::fn_' "$tmp/elf.report")
[ "$jit_names" -gt 0 ] || na "the jitdump report names no trampoline"
[ "$elf_names" -gt 0 ] || na "the ELF report names no trampoline"

inject=$(cat "$tmp/inject.s") jit_report=$(cat "$tmp/jit_report.s") elf_report=$(cat "$tmp/elf_report.s")
awk -v k="$key" -v i="$inject" -v j="$jit_report" -v e="$elf_report" 'BEGIN {
    if (e > 0) printf "%s: %.1f\n", k, (i + j) / e; else printf "%s: n/a (perf report took no time)\n", k }'
echo "# $key: $n trampolines$([ -n "$quick" ] && echo ' (BENCH_QUICK: not 10,000)'): perf inject --jit ${inject} s ($jitted jitted-*.so) + perf report ${jit_report} s ($jit_names trampoline rows) on the jitdump path; perf report ${elf_report} s ($elf_names trampoline rows, $files perftramp-*.so) on the ELF path ($("$perf" --version))"
