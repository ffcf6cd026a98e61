#!/bin/bash
# SPDX-License-Identifier: MIT
# perf through CPython 3.13.5 on perftramp (examples/cpython), a Python
# program five functions deep (tests/cpython/deep.py: f1 calls f2 ... f5,
# which loops):
#  cpython.<arch>.perf-fp       -X perf (perftramp's perf map), perf record
#      --call-graph fp
#  cpython.<arch>.perf-jitdump  -X perf_jit (perftramp's jitdump), perf
#      record -k 1 --call-graph dwarf, perf inject --jit
#  cpython.<arch>.perf-elf      PYTHON_PERFTRAMP_ELF=1 -X perf (the
#      trampolines in perftramp's ELF arena files), a plain perf record
#      --call-graph dwarf: no -k 1, no inject
# A sample is complete when its py:: frames, innermost first, are exactly
# py::f5 .. py::f1, py::<module> (each in the perf map / an injected .so /
# an arena file), followed by Py_BytesMain, the frame of CPython's main()
# (which tail-calls it: no frame of its own at -O3):
# tests/lib/chain_stats.awk on perf script's chains with every other
# frame left out (the C frames between two Python frames vary with the
# compiler).  Proven when >= 90% of the interpreter's samples are complete,
# of at least 50 (the others fall in its start and exit: every sample
# inside f5 was complete in the runs seen).  The stock interpreter's
# figures (its own -X perf and -X perf_jit; its -X perf under dwarf, which
# has no ELF arenas) are printed beside them, for the record.
# SKIP when the CPython source cannot be had or perf cannot record here.
set -u
S=$(cd "${PT_SRCDIR:-.}" && pwd)
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
arch=${PT_HOST_ARCH:-$(uname -m)}
PROOF_IDS="cpython.$arch.perf-fp cpython.$arch.perf-jitdump cpython.$arch.perf-elf"
# shellcheck source=tests/lib/proof_lib.sh
. "$S/tests/lib/proof_lib.sh"
# shellcheck source=tests/lib/cpython_lib.sh
. "$S/tests/lib/cpython_lib.sh"
# shellcheck source=tests/lib/perf_lib.sh
. "$S/tests/lib/perf_lib.sh"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-cpython-XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
# shellcheck disable=SC2317 # the EXIT trap
cleanup() {
    print_proofs
    # the files of the interpreters' pids that CPython writes in /tmp
    for pid in $(cat "$tmp"/*.pid 2> /dev/null); do rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump" "/tmp/jitted-$pid-"*.so; done
    rm -rf "$tmp"
}
trap cleanup EXIT
export HOME=$tmp
unset PERFTRAMP PERFTRAMP_SIGNAL PYTHONPERFSUPPORT PYTHON_PERF_JIT_SUPPORT PYTHON_PERFTRAMP_ELF
# the dumps and the .so files perf inject writes beside them (stock CPython
# writes /tmp/jit-<pid>.dump whatever this says)
export JITDUMPDIR=$tmp
command -v perf > /dev/null || skip "perf is not installed"
perf record -q -e cpu-clock -o "$tmp/probe.data" true > /dev/null 2>&1 || skip "perf record is not permitted here"
cpython_builds
prog=$tmp/deep.py
cp "$S/tests/cpython/deep.py" "$prog"
want="py::f5:$prog py::f4:$prog py::f3:$prog py::f2:$prog py::f1:$prog py::<module>:$prog Py_BytesMain"

# profile NAME MODE PYTHON: "total complete in-f5" of the chains of PYTHON
# running deep.py: MODE perf (-X perf, fp), perf_jit (-X perf_jit, -k 1,
# dwarf, inject) or elf (PYTHON_PERFTRAMP_ELF=1 -X perf, dwarf)
profile() {
    local name=$1 mode=$2 py=$3 dso
    case $mode in
    perf) perf record -q -e cpu-clock --call-graph fp -o "$tmp/$name.data" "$py" -X perf "$prog" 20000000 ;;
    perf_jit) perf record -q -k 1 -e cpu-clock --call-graph dwarf -o "$tmp/$name.raw" "$py" -X perf_jit "$prog" 20000000 &&
        perf inject --jit -i "$tmp/$name.raw" -o "$tmp/$name.data" ;;
    elf) PYTHON_PERFTRAMP_ELF=1 PERFTRAMP_ELF_DIR=$tmp perf record -q -e cpu-clock --call-graph dwarf -o "$tmp/$name.data" \
        "$py" -X perf "$prog" 20000000 ;;
    esac > "$tmp/$name.err" 2>&1 || { echo "$name: perf failed: $(tail -n 2 "$tmp/$name.err")" >&2; return 1; }
    perf script -F comm,pid,ip,sym,symoff,dso -i "$tmp/$name.data" 2> /dev/null > "$tmp/$name.script"
    local pid
    pid=$(awk '$1 == "python" { print $2; exit }' "$tmp/$name.script")
    echo "$pid" > "$tmp/$name.pid"
    case $name in
    *-perf | stock-elf) dso="perf-${pid}[.]map" ;; *-perf_jit) dso="jitted-$pid-[0-9]+[.]so" ;; *-elf) dso="perftramp-$pid-[0-9]+[.]so" ;;
    esac
    # the interpreter's samples; their py:: frames and main, in order
    local total
    total=$(grep -c '^python ' "$tmp/$name.script")
    awk '/^python / { keep = 1 } /^[^\t]/ && !/^python / { keep = 0 }
         keep && (!/^\t/ || /^\t *[0-9a-f]+ (py::|Py_BytesMain\+)/)' "$tmp/$name.script" > "$tmp/$name.chains"
    read -r hot complete _ < <(chain_stats "" "$want" "$dso" "" < "$tmp/$name.chains")
    echo "$total $complete $hot"
}
for mode in perf perf_jit elf; do
    case $mode in
    perf) id=cpython.$arch.perf-fp what="-X perf, perf record --call-graph fp" ;;
    perf_jit) id=cpython.$arch.perf-jitdump what="-X perf_jit, perf record -k 1 --call-graph dwarf, perf inject --jit" ;;
    elf) id=cpython.$arch.perf-elf what="PYTHON_PERFTRAMP_ELF=1 -X perf, a plain perf record --call-graph dwarf" ;;
    esac
    # stock has no ELF arenas: its -X perf under dwarf, for the record
    if read -r total complete hot < <(profile "stock-$mode" $mode "$stock"); then
        echo "stock CPython ($what): $(pct "$complete" "$total") complete ($hot in f5)"
    fi
    read -r total complete hot < <(profile "patched-$mode" $mode "$patched") || { bad "$id: perf failed"; continue; }
    echo "patched CPython on perftramp ($what): $(pct "$complete" "$total") complete ($hot in f5)"
    if [ "$total" -lt 50 ]; then
        bad "$id: only $total samples of the interpreter"
        prove "$id" failed "only $total samples of the interpreter, fewer than 50"
    elif ! at_least_90 "$complete" "$total"; then
        bad "$id: $(pct "$complete" "$total") complete, < 90%"
        echo "incomplete chains (the first three):"
        awk -v want="$want" 'BEGIN { RS = "" } index($0, "py::f5") && !index($0, want) && n++ < 3' "$tmp/patched-$mode.chains"
        prove "$id" failed "$(pct "$complete" "$total") complete, < 90%"
    else
        prove "$id" proven "$(pct "$complete" "$total") of the interpreter's samples complete ($complete of the $hot in f5; the rest: startup), py::f5 < py::f4 < py::f3 < py::f2 < py::f1 < py::<module> < Py_BytesMain ($what)"
    fi
done
exit $failed
