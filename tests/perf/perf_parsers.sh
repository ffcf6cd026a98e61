#!/bin/sh
# SPDX-License-Identifier: MIT
# The tests' readers of `perf script` text and of gdb's bt, on recorded
# output in every layout perf 6.1 and gdb 13 print (tests/samples/perf-script-*.txt: recorded here,
# then edited into the other layouts):
#   - the time padded to 5 digits (" 539.864367:", a machine up < 10,000 s),
#     unpadded (6 digits), with --ns (9 digits after the point);
#   - pid/tid of 4 to 7 digits, padded; a comm with spaces, padded to 16;
#   - a dso path with spaces, a long C++ symbol, [unknown] frames.
# Each layout must give the counts of the recorded original.  A reader that
# took the padded header for a frame found 0 samples (issue 25).
# PROOF: tests.perf-parsers
set -u
S=${PT_SRCDIR:-.}/tests
D=$S/samples
PY=$(command -v python3) || { echo "PROOF: tests.perf-parsers not-run python3 is not installed"; echo "SKIP: python3 is not installed"; exit 77; }
n=0 ok=0
check() { # WHAT WANT GOT
    n=$((n + 1))
    if [ "$2" = "$3" ]; then ok=$((ok + 1)); else echo "FAIL: $1: want '$2', got '$3'"; fi
}

# python_stacks.py (tests/python/python_perf.sh), -F time,ip,sym,dso [--ns]
want="samples 4 named 4 complete 3 stuck 0 complete_pct 75.0"
w="/tmp/pt samples/w.py"
check "python_stacks, time padded" "$want" "$("$PY" "$S/python/python_stacks.py" "$D/perf-script-time.txt" "$w" 539863291653 540348946525)"
check "python_stacks, --ns" "$want" "$("$PY" "$S/python/python_stacks.py" "$D/perf-script-time-ns.txt" "$w" 539863291653 540348946525)"
check "python_stacks, 6-digit seconds" "$want" \
    "$("$PY" "$S/python/python_stacks.py" "$D/perf-script-time-wide.txt" "$w" 123539863291653 123540348946525)"

# chain_stats.awk (perf_e2e.sh, elf_perf.sh, tcc.sh), -F comm,ip,sym,symoff,dso
chain="pt_eval py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main"
for f in perf-script-chains:39 perf-script-chains-layouts:45; do
    frames=${f#*:} f=${f%:*}
    got=$(awk -v want="$chain" -v want_dso='perf-21755[.]map' -f "$S/lib/chain_stats.awk" "$D/$f.txt" | sort | tr '\n' ';')
    check "chain_stats, $f" "  +0x4c 1/2;  +0x53 1/1;3 2 0 0 0 $frames;" "$got"
    got=$(awk -v want="$chain" -v want_dso='jitted-' -v brief=1 -f "$S/lib/chain_stats.awk" "$D/$f.txt")
    check "chain_stats, $f, py:: frames in another dso" "3 0 0 0 0 $frames" "$got"
    got=$(awk -v want="$chain" -v edges='0x4c 0x50-0x60' -v brief=1 -f "$S/lib/chain_stats.awk" "$D/$f.txt")
    check "chain_stats, $f, an edge offset and an edge range" "3 2 0 3 2 $frames" "$got"
done

# perf_script.py itself: every header layout, every frame's symbol and dso
got=$("$PY" - "$S/lib" "$D/perf-script-chains-layouts.txt" << 'PY'
import sys
sys.path.insert(0, sys.argv[1])
import perf_script
for s in perf_script.samples(open(sys.argv[2])):
    print("%s|%s|%s|%s|%d|%s|%s" % (s.comm, s.pid, s.tid, s.time_ns, len(s.frames), s.frames[0][1], s.frames[-1][2]))
    for ip, sym, dso in s.frames:
        if sym.startswith("std::vector"):
            print("long %d %s" % (len(sym), dso))
PY
)
check "perf_script.py, headers and frames" "my comm|1234567|1234567|8528471249000|12|pt_eval+0x53|[unknown]
long 272 /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30
perf_workload|4321|4321|123000001000|12|pt_eval+0x4c|[unknown]
long 272 /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30
perf_workload|98765|98765|123456123456789|11|pt_eval+0x4c|[unknown]
long 272 /usr/lib/x86_64-linux-gnu/libstdc++.so.6.0.30
a b c|123456|123456|12345500000000|10|copy_mc_enhanced_fast_string+0x6|[unknown]" "$got"

# tiny_stats.awk (tiny_perf.sh), -F ip,sym: recorded (the header is an
# empty line), and edited into headers with a padded time, 7-digit pids, a
# comm with spaces, dsos with spaces, one chain cut below the evaluator
check "tiny_stats, -F ip,sym" "20 20" "$(awk -f "$S/lib/tiny_stats.awk" "$D/perf-script-tiny.txt")"
check "tiny_stats, headers and dsos" "20 19" "$(awk -f "$S/lib/tiny_stats.awk" "$D/perf-script-tiny-layouts.txt")"
# chain_stats.awk with keep= (tests/musl/musl.sh), on the same two: the C
# frames between tiny:: frames read as one "*"; the cut chain is a
# collatz_length one
tiny_chain() { # WANT FILE
    awk -v keep='^(tiny::|main$)' -v want="$1" -v checked='^tiny::' -v brief=1 -f "$S/lib/chain_stats.awk" "$D/$2.txt"
}
next_chain="* tiny::collatz_next * tiny::collatz_length * tiny::longest * tiny::<main> * main"
len_chain="* tiny::collatz_length * tiny::longest * tiny::<main> * main"
check "chain_stats keep=, tiny, collatz_next" "26 9 0 0 0 559" "$(tiny_chain "$next_chain" perf-script-tiny)"
check "chain_stats keep=, tiny, collatz_length" "26 13 0 0 0 559" "$(tiny_chain "$len_chain" perf-script-tiny)"
check "chain_stats keep=, tiny layouts, collatz_next" "26 9 0 0 0 539" "$(tiny_chain "$next_chain" perf-script-tiny-layouts)"
check "chain_stats keep=, tiny layouts, one collatz_length chain cut" "26 12 0 0 0 539" "$(tiny_chain "$len_chain" perf-script-tiny-layouts)"

# gdb_lib.sh's frame_names (gdb_bt, gdb_fresh, gdb_publish, gdb_foreign_jit):
# gdb 13's bt in batch mode, frames with and without an address, #10 and
# up, C++ names with spaces, "(anonymous namespace)::", a signal handler
# frame, "from LIB" with a space, ?? and py:: names whose path has spaces

# shellcheck source=tests/lib/gdb_lib.sh
. "$S/lib/gdb_lib.sh"
check "gdb_lib.sh frame_names, gdb bt" "$(cat "$D/gdb-bt.expected")" "$(frame_names < "$D/gdb-bt.txt")"

if [ "$ok" = "$n" ]; then
    echo "PROOF: tests.perf-parsers proven layouts $ok/$n (perf script: time padded, unpadded, --ns; pids of 4-7 digits; comm with spaces; dso paths with spaces; long symbols; [unknown]; -F ip,sym; gdb bt: names with spaces, #10+, signal frames, from LIB)"
    exit 0
fi
echo "PROOF: tests.perf-parsers failed layouts $ok/$n"
exit 1
