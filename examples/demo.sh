#!/bin/sh
# SPDX-License-Identifier: MIT
# make demo: a real perf profile of an interpreted program.
#
# Runs a tiny script (examples/tiny) under perf three times:
#   1. jitdump + DWARF:  perf record -k 1 --call-graph dwarf, perf inject --jit
#   2. perf map + frame pointers:  perf record --call-graph fp
#   3. ELF arenas (PERFTRAMP_ELF): a plain perf record --call-graph dwarf,
#      no -k 1, no perf inject
# and prints the part of each profile worth reading: the share of every
# interpreted function (tiny::<name>, one trampoline each) and its callers.
# Without a usable perf it says why and shows the perf map, the jitdump
# summary and the ELF arena's symbols instead.  Everything it writes lives in
# one temporary directory (perf data, jit dump, jitted-*.so, the
# perftramp-<pid>-<n>.so ELF arenas, perf's build-id cache), removed at exit;
# the /tmp/perf-<pid>.map files it causes are removed too.
#
# Environment: PT_SRCDIR, PT_BUILDDIR (set by make), DEMO_SCRIPT (a .tiny
# file, default examples/tiny/hot.tiny), PERF (default perf).
set -u
LC_ALL=C # perf's and awk's number formats
export LC_ALL

srcdir=${PT_SRCDIR:-$(cd "$(dirname "$0")/.." && pwd)}
builddir=${PT_BUILDDIR:-$srcdir}
tiny=$builddir/examples/tiny/tiny
script=${DEMO_SCRIPT:-$srcdir/examples/tiny/hot.tiny}
perf=${PERF:-perf}
# Sampling rate: 999 Hz, or less when the kernel has lowered its ceiling
# (it does so on slow or busy machines; perf record refuses -F above it).
freq=999
max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate 2> /dev/null || echo 999)
[ "$max_rate" -ge 1 ] 2> /dev/null && [ "$max_rate" -lt $freq ] && freq=$max_rate

die() {
    echo "demo: $*" >&2
    exit 1
}

[ -x "$tiny" ] || die "$tiny is not built (run make first)"
[ -r "$script" ] || die "cannot read $script"

tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-demo.XXXXXX") || die "mktemp failed"
maps=
cleanup() {
    for m in $maps; do rm -f "$m"; done
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
trap 'exit 129' HUP
trap 'exit 141' PIPE # a closed stdout (make demo | head) must still clean up

# perf's own files go to the temporary directory: its build-id cache
# (--buildid-dir) and anything it keeps under $HOME.
mkdir -p "$tmp/home" "$tmp/debug"
perf_cmd() {
    HOME=$tmp/home "$perf" --buildid-dir "$tmp/debug" "$@"
}

# Runs the script with pid written to $tmp/$1.pid; the rest of the
# arguments prefix the command (perf record ...).  The interpreter's own
# output goes to $tmp/$1.out.
run_tiny() {
    tag=$1
    shift
    "$@" sh -c 'echo $$ > "$0"; exec "$1" "$2"' "$tmp/$tag.pid" "$tiny" "$script" \
        > "$tmp/$tag.out" 2> "$tmp/$tag.err"
    rc=$?
    pid=$(cat "$tmp/$tag.pid" 2>/dev/null)
    [ -n "$pid" ] && maps="$maps /tmp/perf-$pid.map"
    if [ $rc -ne 0 ]; then
        cat "$tmp/$tag.err" >&2
        die "the run ($tag) failed with status $rc"
    fi
    grep -v '^\[ perf record' "$tmp/$tag.err" >&2
    return 0
}

# A profile's views.  $1: perf.data to read.
#  share:  inclusive share of every tiny:: function (perf report --children)
#  stacks: each sample's stack reduced to main() and the tiny:: frames,
#          root first, counted (from perf script); shows who calls whom
#  sample: one full raw call chain, as perf unwound it
show_profile() {
    data=$1
    perf_cmd report -i "$data" --stdio --children --sort sym -g none --percent-limit 0.5 \
        2> "$tmp/report.err" > "$tmp/report.txt" || {
        cat "$tmp/report.err" >&2
        die "perf report failed"
    }
    echo "  share of each interpreted function (perf report --children --sort sym):"
    echo "    Children      Self  Symbol"
    grep -E 'tiny::|\] main$' "$tmp/report.txt" | sed 's/^ */    /'
    perf_cmd script -i "$data" -F ip,sym,dso 2> "$tmp/script.err" > "$tmp/script.txt" || {
        cat "$tmp/script.err" >&2
        die "perf script failed"
    }
    echo
    echo "  stacks, root first, keeping main() and tiny:: frames (from perf script):"
    awk '
        function flush(   i, s) {
            if (n == 0) return
            total++
            # root first; a run of the same function (recursion) as "name xN"
            s = ""; prev = ""; times = 0
            for (i = n; i >= 0; i--) {
                if (i > 0 && f[i] != "main" && f[i] !~ /^tiny::/) continue
                if (i > 0 && f[i] == prev) { times++; continue }
                if (prev != "") s = (s == "" ? "" : s " > ") prev (times > 1 ? " x" times : "")
                prev = i > 0 ? f[i] : ""; times = 1
            }
            if (seen_main) reached++
            if (s == "" || s == "main") s = "(other: no interpreted frame)"
            if (in_tiny) { interp++; if (seen_main) interp_reached++ }
            count[s]++
            n = 0; seen_main = 0; in_tiny = 0
        }
        /^[ \t]*$/ { flush(); next }
        {
            sym = $2; sub(/\+0x[0-9a-f]+$/, "", sym); f[++n] = sym
            if (sym == "main") seen_main = 1
            # a frame of the interpreter binary or a trampoline: a sample of interpreted code
            if (sym ~ /^tiny::/ || $NF ~ /\/tiny\)$/) in_tiny = 1
        }
        END {
            flush()
            for (s in count) printf "  %6.1f%%  %s\n", 100 * count[s] / total, s | "sort -rn | head -8"
            close("sort -rn | head -8")
            printf "  %d samples; %d (%.1f%%) unwound all the way down to main()\n", total, reached, total ? 100 * reached / total : 0
            printf "  %d samples with a frame in tiny or a trampoline; %d (%.1f%%) of them reach main()\n", interp, interp_reached, interp ? 100 * interp_reached / interp : 0
        }' "$tmp/script.txt"
    echo
    echo "  one sample's whole call chain, innermost first, \"a < b\" = a called by b (perf script):"
    awk '
        function flush(   i) {
            if (n > 0 && leaf !~ /^tiny::/ && k > best) {
                best = k; m = n
                for (i = 1; i <= n; i++) keep[i] = line[i]
            }
            n = 0; k = 0
        }
        function out(name, times) { return times > 1 ? name " x" times : name }
        /^[ \t]*$/ { flush(); next }
        { line[++n] = $2; if (n == 1) leaf = $2; if ($2 ~ /^tiny::/) k++ }
        END {
            flush()
            row = ""; prev = ""; times = 0
            for (i = 1; i <= m + 1; i++) {
                if (i <= m && keep[i] == prev) { times++; continue }
                if (prev != "") row = row (row == "" ? "" : " < ") out(prev, times)
                if (prev ~ /^tiny::/ || i > m) { print "    " row (i <= m ? " <" : ""); row = "" }
                prev = keep[i]; times = 1
            }
        }' "$tmp/script.txt"
}

# Why the ELF arena directory $1 got no perftramp-*.so: PERFTRAMP_ELF turns
# itself off (trampolines keep running from ordinary memory) when the
# directory refuses exec or the file cannot be written.
elf_missing_reason() {
    opts=$(findmnt -no OPTIONS --target "$1" 2> /dev/null)
    case ",$opts," in
    *,noexec,*) echo "$1 is on a noexec mount (set TMPDIR to a directory that allows exec)" ;;
    *) echo "tiny wrote no perftramp-*.so in $1 (is PERFTRAMP_ELF built? is the disk full?)" ;;
    esac
}

# The ELF arenas tiny wrote in $1, one line each with its symbols' names.
list_elf_arenas() {
    for f in "$1"/perftramp-*.so; do
        [ -e "$f" ] || continue
        if command -v readelf > /dev/null 2>&1; then
            names=$(readelf -W --syms "$f" 2> /dev/null | awk '$4 == "FUNC" { printf "%s%s", sep, $8; sep = ", " }')
            echo "  $(basename "$f"): $(wc -c < "$f") bytes; .symtab: $names"
        else
            echo "  $(basename "$f"): $(wc -c < "$f") bytes"
        fi
    done
}

echo "=== perftramp demo: profiling $(basename "$script") (examples/tiny), one trampoline per interpreted function"
echo

if ! command -v "$perf" > /dev/null 2>&1; then
    reason="perf is not installed (Debian: apt-get install linux-perf)"
elif ! perf_cmd record -q -k 1 -e cpu-clock --call-graph dwarf -o "$tmp/probe.data" true \
        > "$tmp/probe.err" 2>&1; then
    reason="perf record is not permitted here: $(grep -v '^$' "$tmp/probe.err" | head -3 | tr '\n' ' ')
(as root, or lower /proc/sys/kernel/perf_event_paranoid)"
else
    reason=
fi

if [ -n "$reason" ]; then
    echo "perf cannot profile here: $reason"
    echo "Showing what perftramp wrote instead (PERFTRAMP=perfmap,jitdump):"
    echo
    run_tiny plain env PERFTRAMP=perfmap,jitdump JITDUMPDIR="$tmp"
    sed 's/^/  | /' "$tmp/plain.out"
    pid=$(cat "$tmp/plain.pid")
    echo
    echo "--- /tmp/perf-$pid.map (START SIZE name):"
    [ -s "/tmp/perf-$pid.map" ] || die "no perf map was written"
    sed 's/^/  /' "/tmp/perf-$pid.map"
    dump=$tmp/jit-$pid.dump
    [ -s "$dump" ] || die "no jitdump was written"
    echo
    if [ -x "$builddir/tools/perftramp" ]; then
        echo "--- perftramp check jit-$pid.dump:"
        "$builddir/tools/perftramp" check "$dump" | sed 's/^/  /'
    else
        echo "--- jit-$pid.dump: $(wc -c < "$dump") bytes (tools/perftramp is not built)"
    fi
    echo
    echo "--- ELF arenas (PERFTRAMP=elf, PERFTRAMP_ELF_DIR=\$TMPDIR/...):"
    mkdir "$tmp/elf" || die "cannot create $tmp/elf"
    run_tiny elfplain env PERFTRAMP=elf PERFTRAMP_ELF_DIR="$tmp/elf"
    if ls "$tmp/elf" | grep -q '^perftramp-.*\.so$'; then
        list_elf_arenas "$tmp/elf"
    else
        echo "  SKIP: ELF arenas: $(elf_missing_reason "$tmp/elf")"
    fi
    echo "  SKIP: ELF arenas: no profile, perf cannot profile here"
    exit 0
fi

start=$(date +%s)
echo "--- 1. jitdump + DWARF call graphs"
echo "    PERFTRAMP=jitdump perf record -k 1 -e cpu-clock --call-graph dwarf tiny $(basename "$script")"
echo "    perf inject --jit; perf report; perf script"
echo
run_tiny dwarf env PERFTRAMP=jitdump JITDUMPDIR="$tmp" \
    "$perf" --buildid-dir "$tmp/debug" record -q -k 1 -e cpu-clock -F $freq \
    --call-graph dwarf,16384 -o "$tmp/dwarf.data"
sed 's/^/  | /' "$tmp/dwarf.out"
pid=$(cat "$tmp/dwarf.pid")
[ -s "$tmp/jit-$pid.dump" ] || die "tiny wrote no $tmp/jit-$pid.dump: is PERFTRAMP_JITDUMP built?"
perf_cmd inject --jit -i "$tmp/dwarf.data" -o "$tmp/dwarf.jit.data" 2> "$tmp/inject.err" || {
    cat "$tmp/inject.err" >&2
    die "perf inject --jit failed"
}
echo "  perf inject --jit: $(ls "$tmp" | grep -c '^jitted-.*\.so$') jitted-*.so (one per trampoline, deleted at exit)"
echo
show_profile "$tmp/dwarf.jit.data"
grep -q 'tiny::' "$tmp/report.txt" || die "no tiny:: frame in the DWARF profile"

echo
echo "--- 2. perf map + frame pointers"
echo "    PERFTRAMP=perfmap perf record -e cpu-clock --call-graph fp tiny $(basename "$script")"
echo
run_tiny fp env PERFTRAMP=perfmap \
    "$perf" --buildid-dir "$tmp/debug" record -q -e cpu-clock -F $freq \
    --call-graph fp -o "$tmp/fp.data"
sed 's/^/  | /' "$tmp/fp.out"
pid=$(cat "$tmp/fp.pid")
[ -s "/tmp/perf-$pid.map" ] || die "tiny wrote no /tmp/perf-$pid.map: is PERFTRAMP_PERF_MAP built?"
echo "  /tmp/perf-$pid.map: $(wc -l < "/tmp/perf-$pid.map") lines, e.g. \"$(head -1 "/tmp/perf-$pid.map")\""
echo
show_profile "$tmp/fp.data"
grep -q 'tiny::' "$tmp/report.txt" || die "no tiny:: frame in the frame-pointer profile"

echo
echo "--- 3. ELF arenas: no -k 1, no inject"
echo "    PERFTRAMP=elf perf record -e cpu-clock --call-graph dwarf tiny $(basename "$script")"
echo "    perf report; perf script   (perf reads names and .eh_frame from the perftramp-<pid>-<n>.so files)"
echo
mkdir "$tmp/elf" || die "cannot create $tmp/elf"
run_tiny elf env PERFTRAMP=elf PERFTRAMP_ELF_DIR="$tmp/elf" \
    "$perf" --buildid-dir "$tmp/debug" record -q -e cpu-clock -F $freq \
    --call-graph dwarf,16384 -o "$tmp/elf.data"
sed 's/^/  | /' "$tmp/elf.out"
if ls "$tmp/elf" | grep -q '^perftramp-.*\.so$'; then
    list_elf_arenas "$tmp/elf"
    echo
    show_profile "$tmp/elf.data"
    grep -q 'tiny::' "$tmp/report.txt" || die "no tiny:: frame in the ELF arena profile"
else
    echo "  SKIP: ELF arenas: $(elf_missing_reason "$tmp/elf")"
fi

echo
echo "--- 4. Switched on in a running process: kill -USR2, then perf record -p"
PT_SRCDIR=$srcdir PT_BUILDDIR=$builddir PERF=$perf sh "$srcdir/examples/tiny/demo-signal.sh" ||
    die "the signal part failed"

echo
echo "=== demo done in $(( $(date +%s) - start ))s; temporary files removed"
