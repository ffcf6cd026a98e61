#!/bin/bash
# SPDX-License-Identifier: MIT
# The profilers and debuggers people already use, reading what perftramp
# writes for examples/tiny (README, "Read by"):
#   lldb        launched with plugin.jit-loader.gdb.enable: `bt` names the
#               tiny:: frames, and the JIT module's symtab holds the named
#               slots only (no ___lldb_unnamed_symbol: an unused slot's FDE
#               must not start where no symbol does)
#   perfparser  hotspot's parser, on a perf map (fp) recording and on an ELF
#               arena (dwarf) recording: its output stream defines the
#               tiny:: symbols it resolved the samples' frames to; on an
#               injected jitdump it must treat perftramp as it treats LLVM's
#               own JIT (lli-14, the control): perf report names both
#   bpftrace    `ustack` in a profile probe, through the perf map
#   perf top    attached to a live process (-p), through the perf map
# PROOF ids: see PROOF_IDS.  Parsers of each tool's text are checked first,
# on recorded samples (tests/samples/consumers-*).
set -u
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
S=$(cd "${PT_SRCDIR:-.}" && pwd)
TINY=$B/examples/tiny/tiny
HOT=$S/examples/tiny/hot.tiny
SAMPLES=$S/tests/samples
FUNCS="tiny::<main> tiny::longest tiny::collatz_length tiny::collatz_next"
PERFPARSER=${PT_PERFPARSER:-/usr/lib/$(gcc -print-multiarch 2>/dev/null)/libexec/hotspot-perfparser}

PROOF_IDS="consumer.parsers consumer.lldb consumer.perfparser-perfmap consumer.perfparser-elf
 consumer.perfparser-jitdump-parity consumer.bpftrace consumer.perf-top"
# shellcheck source=tests/lib/proof_lib.sh
. "$S/tests/lib/proof_lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-consumers-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
bg=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    stop_bg
    rm -f /tmp/perf-"${tiny_pid:-x}".map
    rm -rf "$tmp"
}
stop_bg() {
    if [ -n "$bg" ]; then
        kill "$bg" 2>/dev/null
        wait "$bg" 2>/dev/null
        rm -f "/tmp/perf-$bg.map"
        bg=
    fi
}
trap cleanup EXIT
export HOME=$tmp/home # perf's build-id cache (~/.debug) and lldb's settings stay private
mkdir "$HOME"
unset PERFTRAMP PERFTRAMP_SIGNAL
export JITDUMPDIR=$tmp

# ---- parsers, each on recorded samples of its tool's output ---------------
# lldb_frames FILE: the tiny:: names in `bt` frames, one per line, in order.
# A frame reads "  frame #N: 0xADDR MODULE`SYMBOL + OFF [at FILE:LINE]"; a
# JIT frame's module is "JIT(0x...)"; the selected frame starts with "* ".
lldb_frames() {
    sed -n 's/^[ *]*frame #[0-9]*: 0x[0-9a-f]* [^`]*`\(tiny::[^ ]*\).*/\1/p' "$1"
}
# lldb_jit_symtab FILE: "NAMED UNNAMED" of the symtab sections that hold a
# tiny:: symbol.  `image dump symtab` opens each module's section with
# "Symtab, file = PATH, num_symbols = N:", or, for an in-memory JIT
# object, "Symtab, num_symbols = N:"; the symbol's name is the last field.
lldb_jit_symtab() {
    awk '
        function flush() { if (named > 0) { tn += named; tu += unnamed } named = 0; unnamed = 0 }
        /^Symtab, / { flush(); next }
        /^\[ *[0-9]+\]/ {
            if ($NF ~ /^tiny::/) named++
            else if ($NF ~ /^___lldb_unnamed_symbol/) unnamed++
        }
        END { flush(); printf "%d %d\n", tn, tu + 0 }' "$1"
}
# top_children FILE: "SYMBOL CHILDREN%" of each tiny:: row of `perf top
# -g --children --stdio --sort sym`, highest first.  A row reads
# "  100.00%     0.00%  [.] tiny::leaf" (children, self), its percentages
# coloured by ANSI escapes, each line ended by CR LF; the screen is redrawn
# every -d seconds, and the call graphs under each row are skipped.
top_children() {
    sed 's/\x1b\[[0-9;]*[a-zA-Z]//g; s/\r$//' "$1" |
        awk '$3 == "[.]" && $4 ~ /^tiny::/ && $1 ~ /%$/ && $2 ~ /%$/ {
                 c = $1; sub(/%/, "", c)
                 if (!($4 in best) || c + 0 > best[$4]) best[$4] = c + 0
             }
             END { for (s in best) printf "%s %.2f\n", s, best[s] }' | sort -k2,2nr -k1,1
}
# ustack_frames FILE: the tiny:: frames of bpftrace's @[ustack] map: each
# frame is an indented "SYMBOL+OFFSET" line; a stack's count follows "]: ".
ustack_frames() {
    sed -n 's/^[ \t]*\(tiny::[^+ ]*\)+[0-9]*$/\1/p' "$1"
}
parsers_ok=1
check_parser() { # NAME GOT WANT
    if [ "$2" != "$3" ]; then
        parsers_ok=0
        bad "parser $1 on its recorded sample: got '$2', want '$3'"
    fi
}
check_parser lldb-bt "$(lldb_frames "$SAMPLES/consumers-lldb-bt.txt" | tr '\n' ' ')" \
    "tiny::collatz_next tiny::collatz_length tiny::longest tiny::<main> "
check_parser lldb-bt-selected "$(lldb_frames "$SAMPLES/consumers-lldb-bt-selected.txt" | tr '\n' ' ')" \
    "tiny::leaf tiny::middle "
check_parser lldb-symtab "$(lldb_jit_symtab "$SAMPLES/consumers-lldb-symtab.txt")" "4 0"
check_parser lldb-symtab-unnamed "$(lldb_jit_symtab "$SAMPLES/consumers-lldb-symtab-unnamed.txt")" "4 60"
check_parser perf-top "$(top_children "$SAMPLES/consumers-perf-top.txt" | tr '\n' ' ')" \
    "tiny::<main> 100.00 tiny::outer 100.00 tiny::leaf 99.59 tiny::middle 99.59 "
check_parser bpftrace "$(ustack_frames "$SAMPLES/consumers-bpftrace.txt" | sort -u | tr '\n' ' ')" \
    "tiny::<main> tiny::leaf tiny::middle tiny::outer "
if [ "$parsers_ok" = 1 ]; then
    prove consumer.parsers proven "lldb bt (plain, selected frame), lldb symtab (JIT module, file modules, unnamed), perf top (redrawn screen), bpftrace ustack: 6 recorded layouts"
else
    prove consumer.parsers failed "a parser misread its recorded sample (above)"
fi

[ -x "$TINY" ] || { echo "FAIL: $TINY not built"; exit 1; }
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1 ||
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"

count_in() { grep -c -F -x -f <(tr ' ' '\n' <<<"$FUNCS") "$1"; } # how many of FUNCS FILE lists
names_in_stream() { # FILE.pp: the FUNCS among the strings of perfparser's stream
    strings -n 6 "$1" | grep -o 'tiny::[A-Za-z_<>]*' | sort -u >"$1.names"
    count_in "$1.names"
}

# ---- lldb, launched, through the GDB JIT interface ------------------------
if command -v lldb >/dev/null 2>&1; then
    PERFTRAMP=gdb timeout 300 lldb -b -o 'settings set plugin.jit-loader.gdb.enable on' \
        -o 'breakpoint set -n eval_function -i 3000' -o run -o bt -o 'image dump symtab' -o 'process kill' \
        -- "$TINY" "$HOT" >"$tmp/lldb.out" 2>&1
    lldb_frames "$tmp/lldb.out" | sort -u >"$tmp/lldb.frames"
    read -r named unnamed < <(lldb_jit_symtab "$tmp/lldb.out")
    n=$(count_in "$tmp/lldb.frames")
    if [ "$n" = 4 ] && [ "$named" = 4 ] && [ "$unnamed" = 0 ]; then
        prove consumer.lldb proven "lldb bt names $n of 4 tiny:: frames; JIT symtab: $named named, $unnamed unnamed symbols"
    else
        prove consumer.lldb failed "bt names $n of 4 tiny:: functions; JIT symtab: $named named, $unnamed ___lldb_unnamed_symbol (want 4, 0)"
        bad "lldb: $(grep -E 'frame #|error' "$tmp/lldb.out" | head -8)"
    fi
else
    prove consumer.lldb not-run "lldb is not installed (tools/deps/consumers.txt)"
fi

# ---- perfparser on perf map, ELF arena and jitdump recordings -------------
# perfparser looks for perf-<pid>.map in Qt's temporary directory, which is
# $TMPDIR when set; perf, and so perftramp, always write it to /tmp.  With
# the TMPDIR of make check (.ci/leftovers.sh) it would find no map at all.
perfparse() { # DATA OUT: perfparser's stream of DATA
    TMPDIR=/tmp "$PERFPARSER" --input "$1" --output "$2" >"$2.log" 2>&1 || bad "perfparser $1: $(tail -2 "$2.log")"
}
report_names() { # DATA: how many FUNCS `perf report` names
    perf report -i "$1" --no-children --sort sym --stdio 2>/dev/null |
        grep -o 'tiny::[A-Za-z_<>]*' | sort -u >"$1.names"
    count_in "$1.names"
}
if [ -x "$PERFPARSER" ]; then
    (cd "$tmp" && PERFTRAMP=perfmap perf record -q -e cpu-clock --call-graph fp -o map.data -- "$TINY" "$HOT" \
        >map.out 2>&1) || bad "perf record (perf map): $(tail -2 "$tmp/map.out")"
    perfparse "$tmp/map.data" "$tmp/map.pp"
    n=$(names_in_stream "$tmp/map.pp")
    tiny_pid=$(perf script -F pid -i "$tmp/map.data" 2>/dev/null | awk '{print $1; exit}')
    rm -f "/tmp/perf-${tiny_pid:-x}.map" # the map outlives its process: it is for perf
    if [ "$n" = 4 ]; then
        prove consumer.perfparser-perfmap proven "perfparser resolves the samples of a perf map (fp) recording to all 4 tiny:: functions"
    else
        prove consumer.perfparser-perfmap failed "perfparser named $n of 4 tiny:: functions ($(tr '\n' ' ' <"$tmp/map.pp.names"))"
    fi
    mkdir "$tmp/elf"
    (cd "$tmp/elf" && PERFTRAMP=elf PERFTRAMP_ELF_DIR=$tmp/elf perf record -q -e cpu-clock --call-graph dwarf \
        -o ../elf.data -- "$TINY" "$HOT" >../elf.out 2>&1) || bad "perf record (ELF): $(tail -2 "$tmp/elf.out")"
    perfparse "$tmp/elf.data" "$tmp/elf.pp"
    n=$(names_in_stream "$tmp/elf.pp")
    if [ "$n" = 4 ]; then
        prove consumer.perfparser-elf proven "perfparser resolves the samples of an ELF arena (dwarf) recording to all 4 tiny:: functions"
    else
        prove consumer.perfparser-elf failed "perfparser named $n of 4 tiny:: functions ($(tr '\n' ' ' <"$tmp/elf.pp.names"))"
    fi
    # jitdump: perftramp's, then the control, LLVM's MCJIT (lli-14)
    (cd "$tmp" && PERFTRAMP=jitdump perf record -q -k 1 -e cpu-clock --call-graph dwarf -o jd.data -- "$TINY" "$HOT" \
        >jd.out 2>&1) || bad "perf record (jitdump): $(tail -2 "$tmp/jd.out")"
    perf inject --jit -i "$tmp/jd.data" -o "$tmp/jd.jit.data" >"$tmp/jd.inject" 2>&1 || bad "perf inject --jit"
    perfparse "$tmp/jd.jit.data" "$tmp/jd.pp"
    ours_pp=$(names_in_stream "$tmp/jd.pp")
    ours_perf=$(report_names "$tmp/jd.jit.data")
    LLI=$(command -v lli-14 || command -v lli)
    if [ -n "$LLI" ]; then
        mkdir "$tmp/lli"
        cat >"$tmp/lli/fib.ll" <<'LL'
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
  %r = call i32 @fib(i32 32)
  %m = and i32 %r, 0
  ret i32 %m
}
LL
        (cd "$tmp/lli" && JITDUMPDIR=$tmp/lli perf record -q -k 1 -e cpu-clock --call-graph dwarf -o lli.data \
            -- "$LLI" -jit-kind=mcjit fib.ll >lli.out 2>&1) || bad "perf record lli: $(tail -2 "$tmp/lli/lli.out")"
        perf inject --jit -i "$tmp/lli/lli.data" -o "$tmp/lli/lli.jit.data" >"$tmp/lli/inject" 2>&1 || bad "perf inject lli"
        "$PERFPARSER" --input "$tmp/lli/lli.jit.data" --output "$tmp/lli/lli.pp" >"$tmp/lli/pp.log" 2>&1
        lli_pp=$(strings -n 3 "$tmp/lli/lli.pp" | grep -cx 'fib')
        lli_perf=$(perf report -i "$tmp/lli/lli.jit.data" --no-children --sort sym --stdio 2>/dev/null | grep -c '\] fib$')
        detail="perftramp: perfparser $ours_pp, perf report $ours_perf of 4 tiny:: names; lli-14 (control): perfparser $lli_pp, perf report $lli_perf fib rows"
        if [ "$ours_pp" = 4 ]; then
            prove consumer.perfparser-jitdump-parity proven "perfparser names perftramp's injected jitdump code: $detail"
        elif [ "$ours_pp" = 0 ] && [ "$lli_pp" = 0 ] && [ "$ours_perf" = 4 ] && [ "$lli_perf" -ge 1 ]; then
            prove consumer.perfparser-jitdump-parity proven "perfparser names no injected jitdump code, LLVM's neither, while perf report names both: $detail"
        else
            prove consumer.perfparser-jitdump-parity failed "$detail"
        fi
    else
        prove consumer.perfparser-jitdump-parity not-run "lli-14 is not installed (tools/deps/check.txt: llvm-14): no control"
    fi
else
    for id in consumer.perfparser-perfmap consumer.perfparser-elf consumer.perfparser-jitdump-parity; do
        prove "$id" not-run "hotspot's perfparser is not installed at $PERFPARSER (tools/deps/consumers.txt: hotspot)"
    done
fi

# ---- live process: bpftrace ustack and perf top -p ------------------------
cat >"$tmp/forever.tiny" <<'T'
fn leaf(n) { i = 0; s = 0; while (i < n) { s = s + i % 7; i = i + 1; } return s; }
fn middle(n) { return leaf(n); }
fn outer(k) { t = 0; j = 0; while (j < k) { t = t + middle(1000); j = j + 1; } return t; }
x = 0;
while (1) { x = x + outer(100); }
T
PERFTRAMP=perfmap "$TINY" "$tmp/forever.tiny" >"$tmp/forever.out" 2>&1 &
bg=$!
for _ in $(seq 50); do [ -s "/tmp/perf-$bg.map" ] && break; sleep 0.1; done
live="tiny::leaf tiny::middle tiny::outer"
if ! command -v bpftrace >/dev/null 2>&1; then
    prove consumer.bpftrace not-run "bpftrace is not installed (tools/deps/consumers.txt)"
elif ! timeout 60 bpftrace -e 'BEGIN { exit(); }' >"$tmp/bpf.probe" 2>&1; then
    prove consumer.bpftrace not-run "eBPF is not allowed here: bpftrace -e 'BEGIN { exit(); }' says: $(grep -v '^Attaching' "$tmp/bpf.probe" | head -2 | tr '\n' ' ')"
else
    timeout 120 bpftrace -e "profile:hz:99 /pid == $bg/ { @[ustack] = count(); } interval:s:2 { exit(); }" \
        >"$tmp/bpf.out" 2>"$tmp/bpf.err"
    ustack_frames "$tmp/bpf.out" | sort -u >"$tmp/bpf.names"
    n=$(grep -c -F -x -f <(tr ' ' '\n' <<<"$live") "$tmp/bpf.names")
    frames=$(ustack_frames "$tmp/bpf.out" | wc -l)
    if [ "$n" = 3 ]; then
        prove consumer.bpftrace proven "bpftrace ustack names tiny::leaf, tiny::middle, tiny::outer ($frames tiny:: frames in 2 s)"
    else
        prove consumer.bpftrace failed "bpftrace ustack named $n of 3 ($frames tiny:: frames): $(head -c 300 "$tmp/bpf.err")"
    fi
fi
# perf top draws its --stdio screen only on a terminal: script(1) gives it
# one.  A 'q' typed on that terminal after a few refreshes ends it the
# way a user does: a perf top stopped by a signal (SIGINT to script, then
# SIGHUP when the terminal goes) leaves its copy of the vdso behind,
# /tmp/perf-vdso.so-XXXXXX, a path it does not take from TMPDIR; timeout
# is only the backstop.  -g --children: each
# trampoline's row counts the samples under it (its own few instructions
# alone would be a fraction of a percent, too few to see in seconds).
if command -v script >/dev/null 2>&1; then
    timeout -s INT 20 script -qfec "perf top -p $bg --stdio -d 2 -F 999 -e cpu-clock -g --children --sort sym" \
        /dev/null >"$tmp/top.out" 2>&1 < <(sleep 7; printf q; sleep 8)
    top_children "$tmp/top.out" >"$tmp/top.rows"
    n=$(awk '$2 >= 50' "$tmp/top.rows" | cut -d' ' -f1 | grep -c -F -x -f <(tr ' ' '\n' <<<"$live"))
    if [ "$n" = 3 ]; then
        prove consumer.perf-top proven "perf top -p -g --children, live: $(awk '{printf "%s %s%%; ", $1, $2}' "$tmp/top.rows")"
    else
        prove consumer.perf-top failed "perf top -p: $n of 3 tiny:: rows with >= 50% children: $(tr '\n' ' ' <"$tmp/top.rows")"
    fi
else
    prove consumer.perf-top not-run "script(1) is not installed (util-linux's bsdutils): perf top needs a terminal"
fi
stop_bg
exit $failed
