#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp check on perftramp's own jitdump (examples/hello with
# PERFTRAMP=jitdump): valid with no warning, its rows equal to the host
# table's at every instruction; every corrupted copy rejected, including
# copies whose FDEs tests/outputs/jitdump_edit rewrote (CFA offset 16 -> 24, FDEs
# moved away); node 20's dump from the fuzz corpus valid with its trailing
# nop a warning; usage and I/O errors are exit 2; --json is well formed for
# hostile names.
set -u
: "${PT_BUILDDIR:=.}" "${PT_SRCDIR:=.}"
PT="$PT_BUILDDIR/tools/perftramp"
HELLO="$PT_BUILDDIR/examples/hello"
EDIT="$PT_BUILDDIR/tests/outputs/jitdump_edit"
[ -x "$PT" ] || { echo "FAIL: $PT not built"; exit 1; }
[ -x "$EDIT" ] || { echo "FAIL: $EDIT not built"; exit 1; }
[ -x "$HELLO" ] || { echo "FAIL: $HELLO not built"; exit 1; }
work=$(mktemp -d "${TMPDIR:-/tmp}/cli_check.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
. "$PT_SRCDIR/tests/lib/cli_lib.sh"

mkdir "$work/dumps"
PERFTRAMP=jitdump JITDUMPDIR="$work/dumps" "$HELLO" > "$work/hello.out" 2>&1 ||
    { echo "FAIL: examples/hello failed"; cat "$work/hello.out"; exit 1; }
dump=$(ls "$work"/dumps/jit-*.dump 2>/dev/null | head -1)
[ -n "$dump" ] || { echo "FAIL: PERFTRAMP=jitdump examples/hello wrote no jit-*.dump"; exit 1; }

check_expect 0 "$dump" "perftramp dump"
"$PT" check --records "$dump"
# a perf here that unwinds with libdw warns about any dump outside /tmp
# (tests/cli/cli_check_libdw.sh): the one warning allowed then
if grep -q "judged for: .*unwinding with libdw" "$work/out.txt"; then
    grep -q "valid (0 errors, 1 warning)" "$work/out.txt" && grep -q "not /tmp: this perf unwinds with libdw" "$work/out.txt"
else
    grep -q "valid (0 errors, 0 warnings)" "$work/out.txt"
fi || { echo "FAIL: perftramp's own dump is not warning-free"; cat "$work/out.txt"; fail=1; }
grep -q "LOADs: 1, .*unwinding info: 1 with .eh_frame, 0 without UNWINDING_INFO" "$work/out.txt" ||
    { echo "FAIL: the LOAD has no unwinding info"; fail=1; }
n_insns=$("$PT" arch "${PT_HOST_ARCH:-x86_64}" | awk '/^Rules at every instruction offset/ { on = 1; next }
    on && /^  \(/ { on = 0 } on && /^  0x/ { n++ } END { print n + 0 }')
grep -q "rows: 1 LOAD checked pc by pc, .* 1 LOAD is the ${PT_HOST_ARCH:-x86_64} trampoline, $n_insns instruction boundaries compared" \
    "$work/out.txt" || { echo "FAIL: the rows of the LOAD were not compared with the table's $n_insns boundaries"; grep rows "$work/out.txt"; fail=1; }

# rows: the dump's FDEs rewritten after the fact (tests/outputs/jitdump_edit)
if "$EDIT" "$dump" "$work/cfa24.dump" cfa-offset 16 24 > /dev/null; then
    check_expect 1 "$work/cfa24.dump" "perftramp dump with CFA offset 16 changed to 24"
    grep -q "rules differ from the table's" "$work/out.txt" ||
        { echo "FAIL: CFA offset 24: not reported as a row that differs from the table"; cat "$work/out.txt"; fail=1; }
    if [ "${PT_HOST_ARCH:-x86_64}" = x86_64 ]; then
        grep -q "found CFA=rsp+24 rbp=c-16 rip=c-8, the table's: CFA=rsp+16 rbp=c-16 rip=c-8" "$work/out.txt" ||
            { echo "FAIL: CFA offset 24: the message does not name the rules found and expected"; cat "$work/out.txt"; fail=1; }
        grep -q "first at pc 0x[0-9a-f]* (+0x5, mov %rsp,%rbp)" "$work/out.txt" ||
            { echo "FAIL: CFA offset 24: the message does not name the pc"; cat "$work/out.txt"; fail=1; }
    fi
else
    echo "note: the ${PT_HOST_ARCH:-?} table's FDE has no DW_CFA_def_cfa_offset 16: that case not run"
fi
"$EDIT" "$dump" "$work/moved.dump" pc-begin 4096 > /dev/null || { echo "FAIL: jitdump_edit pc-begin"; fail=1; }
check_expect 1 "$work/moved.dump" "perftramp dump with its FDE moved 4 KiB away"

# node 20's dump (fuzz corpus): valid; its FDE ends before a 2-byte nop
node_dump="$PT_SRCDIR/tests/fuzz/corpus_jitdump/node20-snippet.dump"
check_expect 0 "$node_dump" "node 20 dump from the corpus"
grep -q "its last 2 of 384 code bytes (padding: nops) are covered by no FDE" "$work/out.txt" ||
    { echo "FAIL: node's trailing nop is not graded as a warning"; cat "$work/out.txt"; fail=1; }

corrupt_all "$dump" perftramp

# a second LOAD with the same code_index: perf would overwrite its .so
set -- $(record_of "$dump" LOAD)
if [ $# -eq 2 ]; then
    # duplicate the [UNWINDING_INFO][LOAD] group: same bytes, same code_index
    head -c 40 "$dump" > "$work/twice.dump"
    tail -c +41 "$dump" | head -c $(($1 + $2 - 40)) > "$work/group"
    cat "$work/group" "$work/group" >> "$work/twice.dump"
    check_expect 1 "$work/twice.dump" "perftramp group written twice (code_index reused)"
fi

# input: standard input (a file, a pipe), a FIFO with and without a writer
# and devices refused, a 2 GiB sparse file read only as far as perf reads it
"$PT" check - < "$dump" > "$work/out.txt" 2>&1; rc=$?
[ $rc -eq 0 ] && grep -q "^-: valid" "$work/out.txt" || { echo "FAIL: check - < dump: exit $rc"; cat "$work/out.txt"; fail=1; }
cat "$dump" | "$PT" check - > "$work/out.txt" 2>&1; rc=$?
[ $rc -eq 0 ] || { echo "FAIL: cat dump | check -: exit $rc"; cat "$work/out.txt"; fail=1; }
# a named FIFO is refused at once, with or without a writer (opening one
# without a writer would block): its data goes through `check -`
mkfifo "$work/fifo"
timeout 30 "$PT" check "$work/fifo" > "$work/out.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "fifo: a FIFO, not a regular file: refused" "$work/out.txt" ||
    { echo "FAIL: a FIFO without a writer: exit $rc"; cat "$work/out.txt"; fail=1; }
cat "$dump" > "$work/fifo" &
writer=$!
timeout 30 "$PT" check "$work/fifo" > "$work/out.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "a FIFO, not a regular file: refused" "$work/out.txt" ||
    { echo "FAIL: a FIFO with a writer: exit $rc"; cat "$work/out.txt"; fail=1; }
cat "$work/fifo" | "$PT" check - > "$work/out.txt" 2>&1; rc=$?
wait "$writer"
[ $rc -eq 0 ] || { echo "FAIL: cat FIFO | check -: exit $rc"; cat "$work/out.txt"; fail=1; }
"$PT" check /dev/zero > "$work/out.txt" 2>&1; rc=$?
[ $rc -eq 2 ] && grep -q "character device, not a regular file" "$work/out.txt" ||
    { echo "FAIL: /dev/zero: exit $rc"; cat "$work/out.txt"; fail=1; }
head -c 40 "$dump" > "$work/sparse.dump" && truncate -s 2G "$work/sparse.dump"
if [ -x /usr/bin/time ]; then
    /usr/bin/time -f "%e s, %M KB" -o "$work/time.txt" "$PT" check "$work/sparse.dump" > "$work/out.txt" 2>&1; rc=$?
    rss=$(sed -n 's/.*, \([0-9]*\) KB/\1/p' "$work/time.txt")
    echo "2 GiB sparse dump: exit $rc, $(cat "$work/time.txt") (the time is not asserted)"
    [ $rc -eq 1 ] && [ "${rss:-999999}" -lt 65536 ] && grep -q "never read by perf: 2147483608 bytes" "$work/out.txt" ||
        { echo "FAIL: 2 GiB sparse dump: exit $rc, RSS ${rss:-?} KB"; cat "$work/out.txt"; fail=1; }
else
    echo "note: /usr/bin/time missing: the 2 GiB sparse dump's RSS not measured"
fi
rm -f "$work/sparse.dump"

# zeros after the last record: the room a writer that maps its dump's end
# leaves when it ends without closing (src/outputs/file_window.c); perf stops
# at the first and loses nothing.  Up to 128 KiB it is a note, or a warning
# when bytes other than zeros lie in it (the record a killed writer was
# copying in, its total_size still 0: src/outputs/jitdump.c stores it last);
# longer, it is the total_size 0 error it always was.
zeros_case() { # bytes want-exit grep-pattern [junk]
    cp "$dump" "$work/z.dump"
    head -c "$1" /dev/zero >> "$work/z.dump"
    [ -n "${4:-}" ] && printf '%s' "$4" >> "$work/z.dump"
    "$PT" check "$work/z.dump" > "$work/out.txt" 2>&1; rc=$?
    [ $rc -eq "$2" ] && grep -q "$3" "$work/out.txt" ||
        { echo "FAIL: dump + $1 zeros${4:+ + junk}: exit $rc, want $2 and '$3'"; cat "$work/out.txt"; fail=1; }
}
zeros_case 60000 0 "reserved: 60000 zero bytes from offset"
zeros_case 60000 0 "room the writer mapped ahead"
zeros_case 8 0 "reserved: 8 zero bytes"
zeros_case 131072 0 "reserved: 131072 zero bytes"
zeros_case 131073 1 "record total_size 0 is smaller than its 16-byte prefix"
zeros_case 1000 0 "the last record is uncommitted: total_size 0, with 1001 bytes of it written" x
zeros_case 131072 1 "record total_size 0 is smaller than its 16-byte prefix" x
cp "$dump" "$work/z.dump" && head -c 4096 /dev/zero >> "$work/z.dump"
"$PT" check --json "$work/z.dump" 2> /dev/null | grep -q '"trailing_bytes":0,"reserved_bytes":4096' ||
    { echo "FAIL: --json has no reserved_bytes 4096"; "$PT" check --json "$work/z.dump"; fail=1; }
echo "zeros after the last record: up to 128 KiB a note (reserved), a warning with junk in it (uncommitted), past it an error"
rm -f "$work/z.dump"

# not a jitdump: a perf map passed by mistake is named for what it is
printf '7f0000001000 20 py::main:/tmp/a.py\n7f0000001040 20 py::f:/tmp/a.py\n' > "$work/perf-1.map"
check_expect 1 "$work/perf-1.map" "a perf map"
grep -q "looks like a perf map" "$work/out.txt" || { echo "FAIL: a perf map is not named"; cat "$work/out.txt"; fail=1; }

# the file name perf requires: jit-<pid>.dump, pid of the header
pid=$(basename "$dump" | sed 's/^jit-\([0-9]*\)\.dump$/\1/')
cp "$dump" "$work/jit-$pid-$pid.dump"
check_expect 1 "$work/jit-$pid-$pid.dump" "Bun's jit-<tid>-<pid>.dump name"
grep -q "perf inject never reads it" "$work/out.txt" || { echo "FAIL: the Bun name: no reason given"; fail=1; }
cp "$dump" "$work/jit-$((pid + 1)).dump"
check_expect 1 "$work/jit-$((pid + 1)).dump" "a dump named after another pid"

# --all lists every finding; the default summarises repeats of a kind
for i in 1 2 3 4 5; do cat "$work/group"; done > "$work/body" 2> /dev/null
if [ -s "$work/body" ]; then
    head -c 40 "$dump" > "$work/jit-$pid.dump" && cat "$work/body" >> "$work/jit-$pid.dump"
    "$PT" check "$work/jit-$pid.dump" > "$work/out.txt" 2>&1
    "$PT" check --all "$work/jit-$pid.dump" > "$work/all.txt" 2>&1
    n_err=$(sed -n 's/.*INVALID (\([0-9]*\) error.*/\1/p' "$work/out.txt")
    n_all=$(grep -c "^  error " "$work/all.txt")
    grep -q "more like it (load.code_index)" "$work/out.txt" && [ "$n_all" = "$n_err" ] ||
        { echo "FAIL: --all lists $n_all of $n_err errors, or the default does not summarise"; cat "$work/out.txt"; fail=1; }
fi

# usage and I/O errors: exit 2
"$PT" check > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: check without FILE: exit $rc, want 2"; fail=1; }
"$PT" check --bogus "$dump" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: check --bogus: exit $rc, want 2"; fail=1; }
"$PT" check "$work/no-such.dump" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: check of a missing file: exit $rc, want 2"; fail=1; }
"$PT" check "$work" > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: check of a directory: exit $rc, want 2"; fail=1; }
"$PT" check "$dump" "$work/magic.dump" > /dev/null 2>&1; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: a valid and an invalid file: exit $rc, want 1"; fail=1; }
"$PT" bogus > /dev/null 2>&1; rc=$?
[ $rc -eq 2 ] || { echo "FAIL: unknown command: exit $rc, want 2"; fail=1; }

# --json: a file name with a quote, a backslash and a newline stays one
# JSON string; a LOAD name with control bytes is escaped
odd="$work/we\"ird\\na
me.dump"
cp "$dump" "$odd"
"$PT" check --json "$odd" "$work/magic.dump" > "$work/out.json"; rc=$?
[ $rc -eq 1 ] || { echo "FAIL: --json valid+invalid: exit $rc, want 1"; fail=1; }
[ "$(wc -l < "$work/out.json")" -eq 1 ] || { echo "FAIL: --json output spans lines"; cat "$work/out.json"; fail=1; }
grep -q 'we\\"ird\\\\na\\nme.dump' "$work/out.json" || { echo "FAIL: --json file name not escaped"; cat "$work/out.json"; fail=1; }
grep -q '"valid":false}$' "$work/out.json" || { echo "FAIL: --json overall verdict"; fail=1; }
if command -v node > /dev/null 2>&1; then
    node -e 'JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"))' "$work/out.json" ||
        { echo "FAIL: --json does not parse"; cat "$work/out.json"; fail=1; }
    # UTF-8 names come back as they are (not byte by byte as \u00XX)
    cp "$dump" "$work/café.dump"
    "$PT" check --json "$work/café.dump" > "$work/cafe.json"
    node -e 'const f = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).files[0];
        if (!f.file.endsWith("/café.dump")) throw new Error("file name came back as " + f.file);' "$work/cafe.json" ||
        { echo "FAIL: --json mangles a UTF-8 file name"; cat "$work/cafe.json"; fail=1; }
fi
[ $fail -eq 0 ] && echo "ok: usage, I/O errors and --json"
exit $fail
