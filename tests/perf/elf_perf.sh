#!/bin/bash
# SPDX-License-Identifier: MIT
# PERFTRAMP_ELF with the real perf: trampolines in file-backed ELF arenas,
# and NO -k 1, NO jitdump, NO perf inject, NO perf map.  The workload is
# tests/perf/perf_workload.c with output elf (x86-64: tests/perf/hidden_rbp.S):
#   (a) hidden, --call-graph dwarf: py::inner wraps pt_hidden_spin, which
#       spins with garbage in %rbp.  >= 95% of its samples show the whole
#       chain down to main, every py:: frame in perftramp-<pid>-<n>.so;
#       then `perf report` (the process is gone by then) names py::inner.
#   (b) edges, --call-graph dwarf: samples on the trampoline's own entry and
#       `ret`, where only its FDE (the file's .eh_frame, found through its
#       .eh_frame_hdr) unwinds it: >= 90% complete.  perf's libunwind falls
#       back to frame pointers where it finds no FDE, so (a) alone would not
#       prove the unwind info is read; this part does.
#   (c) eval, --call-graph fp: >= 95% complete.
#   (d) perf record -p PID, attached after the trampolines were made and
#       running: >= 95% complete in dwarf mode (hidden).
#   (e) PT_WORKLOAD_LATE=1: py::late is wrapped halfway through, after perf
#       started recording: its samples are named and >= 95% complete.
#   (f) readelf -a and eu-elflint --gnu-ld accept every file written.
# Prints PROOF lines for output.elf-dwarf, output.elf-fdes, output.elf-fp,
# output.elf-attach, output.elf-late-name, output.elf-lint.
set -u

B=${PT_BUILDDIR:-.}
W=$B/tests/perf/perf_workload
PT=$B/tools/perftramp
SECONDS_OF_WORK=${PT_PERF_SECONDS:-1}
MIN_HOT=100
MIN_EDGE=20

PROOF_IDS="output.elf-dwarf output.elf-fdes output.elf-fp output.elf-attach output.elf-late-name output.elf-lint"
# shellcheck source=tests/lib/proof_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/perf_lib.sh
. "${PT_SRCDIR:-.}/tests/lib/perf_lib.sh"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-elf-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
bg=
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    [ -z "$bg" ] || kill "$bg" 2>/dev/null
    rm -rf "$tmp"
}
trap cleanup EXIT
export HOME=$tmp/home # perf's build-id cache (~/.debug) stays private
mkdir "$HOME"
unset PERFTRAMP JITDUMPDIR
export PERFTRAMP_ELF_DIR=$tmp/elf
mkdir -m 700 "$PERFTRAMP_ELF_DIR"

for f in "$W" "$PT"; do [ -x "$f" ] || { echo "FAIL: $f not built"; exit 1; }; done
[ "$(uname -m)" = x86_64 ] || skip "the garbage-rbp workload (tests/perf/hidden_rbp.S) is x86-64 only"
command -v perf >/dev/null 2>&1 || skip "perf is not installed (Debian: linux-perf)"
perf record -q -o "$tmp/probe.data" -e cpu-clock -- true >"$tmp/probe.log" 2>&1 ||
    skip "perf record cannot open a cpu-clock event here (perf_event_open not permitted?)"

at_least() { [ "$3" -gt 0 ] && [ $(($2 * 100)) -ge $(($3 * $1)) ]; } # PCT n d

# record NAME MODE CALLGRAPH: the workload under perf record, no -k 1; sets pid.
record() {
    local name=$1 mode=$2 cg=$3
    perf record -q -e cpu-clock -F 1000 --call-graph "$cg" -o "$tmp/$name.data" \
        -- "$W" elf "$SECONDS_OF_WORK" "$mode" >"$tmp/$name.out" 2>"$tmp/$name.err" ||
        { cat "$tmp/$name.err"; bad "($name) perf record"; return 1; }
    pid=$(awk '/^pid /{print $2}' "$tmp/$name.out")
    [ -n "$pid" ] || { bad "($name) workload printed no pid"; return 1; }
    no_other_outputs "$name" && lint "$name"
}
# lint NAME: readelf -a and eu-elflint --gnu-ld on this run's files (the
# next perftramp_open removes them: their process is gone).
linted=0 lint_bad=0
lint() {
    command -v readelf >/dev/null && command -v eu-elflint >/dev/null || return 0
    local f
    for f in "$PERFTRAMP_ELF_DIR"/perftramp-"$pid"-*.so; do
        [ -e "$f" ] || continue
        linted=$((linted + 1))
        if ! readelf -a "$f" >/dev/null 2>"$tmp/readelf.err" || [ -s "$tmp/readelf.err" ]; then
            cat "$tmp/readelf.err"; bad "($1) readelf -a $f"; lint_bad=$((lint_bad + 1))
        elif ! eu-elflint --gnu-ld "$f" >"$tmp/elflint.out" 2>&1; then
            cat "$tmp/elflint.out"; bad "($1) eu-elflint --gnu-ld $f"; lint_bad=$((lint_bad + 1))
        fi
    done
}
# Nothing but the ELF files: no perf map, no jitdump.
no_other_outputs() {
    [ ! -e "/tmp/perf-$pid.map" ] || { bad "($1) /tmp/perf-$pid.map was written"; return 1; }
    [ ! -e "/tmp/jit-$pid.dump" ] || { bad "($1) /tmp/jit-$pid.dump was written"; return 1; }
    ls "$PERFTRAMP_ELF_DIR"/perftramp-"$pid"-*.so >/dev/null 2>&1 || { bad "($1) no perftramp-$pid-*.so"; return 1; }
}
script() { # NAME
    perf script -i "$tmp/$1.data" -F comm,ip,sym,symoff,dso >"$tmp/$1.script" 2>"$tmp/$1.script.err" ||
        { cat "$tmp/$1.script.err"; bad "($1) perf script"; return 1; }
}

HIDDEN_CHAIN="pt_hidden_spin py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main"
EVAL_CHAIN="pt_eval py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main"
LEAF_CHAIN="py::leaf pt_hidden_loop pt_eval py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main"
ELF_DSO="perftramp-[0-9]+-[0-9]+\\.so"

part_a() {
    record a hidden dwarf || return 1
    script a || return 1
    local hot ok never
    read -r hot ok never _ < <(chain_stats pt_hidden_spin "$HIDDEN_CHAIN" "$ELF_DSO" "" <"$tmp/a.script")
    echo "(a) ELF arenas, perf record --call-graph dwarf (no -k 1, no inject), garbage %rbp in the target: complete $(pct "$ok" "$hot")"
    [ "$never" -eq 0 ] || { bad "(a) py::never appears $never times"; return 1; }
    [ "$hot" -ge $MIN_HOT ] || { bad "(a) only $hot samples in pt_hidden_spin (need $MIN_HOT)"; return 1; }
    at_least 95 "$ok" "$hot" || { bad "(a) fewer than 95% complete"; return 1; }
    # perf report, long after the workload exited, reads names from the file
    perf report -i "$tmp/a.data" --stdio --children -g none --sort dso,sym 2>/dev/null >"$tmp/a.report"
    grep -Eq "perftramp-$pid-[0-9]+\\.so +\\[\\.\\] py::inner" "$tmp/a.report" ||
        { head -30 "$tmp/a.report"; bad "(a) perf report after exit does not name py::inner in the ELF file"; return 1; }
    prove output.elf-dwarf proven "no -k 1/inject/jitdump: dwarf chains $(pct "$ok" "$hot") through garbage %rbp; perf report after exit names py::inner"
}

part_b() {
    local edges
    edges=$("$PT" arch x86_64 | awk '/^Rules at every instruction offset/ { on = 1; next }
        on && /^  \(/ { on = 0 } on && /^  0x/ && $2 !~ /^rbp/ { o = $1; sub(/^0x0*/, "", o); if (o == "") o = "0"; printf "0x%s ", o }')
    edges=${edges% }
    [ -n "$edges" ] || { bad "(b) perftramp arch x86_64 lists no offset with an rsp-based CFA"; return 1; }
    record b edges dwarf || return 1
    script b || return 1
    local hot ok never e_hot e_ok
    read -r hot ok never e_hot e_ok _ < <(chain_stats py::leaf "$LEAF_CHAIN" "$ELF_DSO" "$edges" <"$tmp/b.script")
    echo "(b) samples inside py::leaf $(pct "$ok" "$hot"); at offsets $edges (only the FDE unwinds): $(pct "$e_ok" "$e_hot")"
    [ "$e_hot" -ge $MIN_EDGE ] || { bad "(b) only $e_hot samples at $edges (need $MIN_EDGE)"; return 1; }
    at_least 90 "$e_ok" "$e_hot" || { bad "(b) fewer than 90% complete where only the FDE unwinds"; return 1; }
    prove output.elf-fdes proven "the file's .eh_frame via .eh_frame_hdr: at trampoline offsets $edges $(pct "$e_ok" "$e_hot") complete"
}

part_c() {
    record c eval fp || return 1
    script c || return 1
    local hot ok
    read -r hot ok _ < <(chain_stats pt_eval "$EVAL_CHAIN" "$ELF_DSO" "" <"$tmp/c.script")
    echo "(c) ELF arenas, --call-graph fp: complete $(pct "$ok" "$hot")"
    [ "$hot" -ge $MIN_HOT ] || { bad "(c) only $hot samples (need $MIN_HOT)"; return 1; }
    at_least 95 "$ok" "$hot" || { bad "(c) fewer than 95% complete"; return 1; }
    prove output.elf-fp proven "--call-graph fp, names from the file: $(pct "$ok" "$hot")"
}

part_d() {
    "$W" elf $((SECONDS_OF_WORK * 4)) hidden >"$tmp/d.out" 2>"$tmp/d.err" &
    bg=$!
    local i=0
    while ! grep -q '^pid ' "$tmp/d.out" && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
    pid=$(awk '/^pid /{print $2}' "$tmp/d.out")
    [ "$pid" = "$bg" ] || { bad "(d) workload printed no pid"; return 1; }
    sleep 0.2 # the trampolines exist and run before perf attaches
    perf record -q -e cpu-clock -F 1000 --call-graph dwarf -p "$pid" -o "$tmp/d.data" -- sleep "$SECONDS_OF_WORK" \
        >/dev/null 2>"$tmp/d.rec.err" || { cat "$tmp/d.rec.err"; bad "(d) perf record -p"; return 1; }
    wait "$bg" || { cat "$tmp/d.err"; bad "(d) workload failed"; bg=; return 1; }
    bg=
    lint d
    script d || return 1
    local hot ok
    read -r hot ok _ < <(chain_stats pt_hidden_spin "$HIDDEN_CHAIN" "$ELF_DSO" "" <"$tmp/d.script")
    echo "(d) perf record -p $pid attached later, dwarf: complete $(pct "$ok" "$hot")"
    [ "$hot" -ge $MIN_HOT ] || { bad "(d) only $hot samples (need $MIN_HOT)"; return 1; }
    at_least 95 "$ok" "$hot" || { bad "(d) fewer than 95% complete"; return 1; }
    prove output.elf-attach proven "perf record -p after the trampolines ran: dwarf $(pct "$ok" "$hot")"
}

part_e() {
    PT_WORKLOAD_LATE=1 record e hidden dwarf || return 1
    grep -q '^late ' "$tmp/e.out" || { bad "(e) the workload made no late trampoline"; return 1; }
    script e || return 1
    local all inner hot ok
    # samples before halfway run under py::inner: the rest are py::late's
    read -r all inner _ < <(chain_stats pt_hidden_spin "$HIDDEN_CHAIN" "$ELF_DSO" "" <"$tmp/e.script")
    read -r _ ok _ < <(chain_stats pt_hidden_spin "${HIDDEN_CHAIN/py::inner/py::late}" "$ELF_DSO" "" <"$tmp/e.script")
    hot=$((all - inner))
    echo "(e) py::late, named in the file after perf started recording: complete $(pct "$ok" "$hot") (py::inner before it: $inner)"
    [ "$hot" -ge $((MIN_HOT / 2)) ] || { bad "(e) only $hot samples under py::late"; return 1; }
    at_least 95 "$ok" "$hot" || { bad "(e) fewer than 95% complete"; return 1; }
    prove output.elf-late-name proven "a name written after the first calls resolves: $(pct "$ok" "$hot")"
}

part_f() {
    command -v readelf >/dev/null && command -v eu-elflint >/dev/null ||
        { prove output.elf-lint not-run "readelf or eu-elflint missing (Debian: binutils, elfutils)"; return 0; }
    echo "(f) readelf -a and eu-elflint --gnu-ld: $((linted - lint_bad))/$linted files clean"
    [ $linted -ge 5 ] || { bad "(f) only $linted ELF files were written"; return 1; }
    [ $lint_bad -eq 0 ] || return 1
    prove output.elf-lint proven "readelf -a and eu-elflint --gnu-ld clean on $linted/$linted files"
}

part_a || prove output.elf-dwarf failed "see elf_perf.sh.log, part (a)"
part_b || prove output.elf-fdes failed "see elf_perf.sh.log, part (b)"
part_c || prove output.elf-fp failed "see elf_perf.sh.log, part (c)"
part_d || prove output.elf-attach failed "see elf_perf.sh.log, part (d)"
part_e || prove output.elf-late-name failed "see elf_perf.sh.log, part (e)"
part_f || prove output.elf-lint failed "see elf_perf.sh.log, part (f)"
exit $failed
