#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp's CPython module under real perf, on every supported CPython
# found here, with tests/python/python_stack_workload.py (a function, a method, a
# generator and a recursion, 0.6 s of CPU; tests/python/python_stacks.py counts the
# samples taken inside its window).
#  perf-dwarf: `python -m perftramp --outputs jitdump` under
#     perf record -k 1 --call-graph dwarf, perf inject --jit, perf script:
#     the py::<qualname>:<file> names appear, and >= 90% of the samples
#     show the complete chain work < down x9 < steps < Walker.walk < main
#     < <module>; the same program without perftramp shows no py:: name.
#  perf-fp: `--outputs perfmap` under --call-graph fp.  Frame pointers walk
#     through the trampolines only if CPython keeps them too: CPython's own
#     fp test skips itself on a build without them ("Unwinding is
#     unreliable"), and so does this proof -- after measuring what fp mode
#     and dwarf mode give on that build, and printing it (no PROOF line:
#     the proof does not apply to that build).  The build is read from
#     sysconfig, never inferred from the profile, and a profile with fewer
#     than 100 samples fails first: no sample proves nothing.
# PROOF: python.<ver>.perf-dwarf and python.<ver>.perf-fp per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"
command -v perf > /dev/null 2>&1 || skip_all "perf is not installed" perf-dwarf perf-fp
probe=$(mktemp -d "${TMPDIR:-/tmp}/pt-perfprobe.XXXXXX") || exit 99
HOME=$probe perf --buildid-dir "$probe/debug" record -q -k 1 -e cpu-clock -o "$probe/probe.data" true > /dev/null 2>&1
probe_ok=$?
rm -rf "$probe"
[ $probe_ok -eq 0 ] || skip_all "perf record is not permitted here" perf-dwarf perf-fp
workload=${PT_SRCDIR:-.}/tests/python/python_stack_workload.py
stacks=${PT_SRCDIR:-.}/tests/python/python_stacks.py

perf_cmd() { # perf with its build-id cache and config in this run's directory
    HOME=$vtmp perf --buildid-dir "$vtmp/debug" "$@"
}
# record NAME CALLGRAPH CMD...: a perf profile of CMD (the workload)
# -> NAME.txt (perf script -F time,ip,sym,dso, after perf inject --jit) and
# NAME.stat (tests/python/python_stacks.py's counts); the pid is forgotten at exit.
# (fp runs go through perf inject too: it is a no-op without a jitdump.)
record() {
    name=$1 cg=$2
    shift 2
    cp "$workload" w.py 2> /dev/null
    perf_cmd record -q -k 1 -e cpu-clock -F 499 --call-graph "$cg" -o "$name.data" "$@" > "$name.out" 2> "$name.err" ||
        fail "perf record $*: $(tail -n 1 "$name.err")"
    pid=$(perf_cmd script -F pid -i "$name.data" 2> /dev/null | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
    [ -n "$pid" ] && forget_pid "$pid"
    perf_cmd inject --jit -i "$name.data" -o "$name.jit.data" 2> "$name.err" || fail "perf inject --jit: $(tail -n 1 "$name.err")"
    perf_cmd script -F time,ip,sym,dso -i "$name.jit.data" > "$name.txt" 2> /dev/null || fail "perf script"
    window=$(sed -n 's/^window //p' "$name.out")
    [ -n "$window" ] || fail "the workload printed no window: $(tail -n 1 "$name.err")"
    "$PYTHON" "$stacks" "$name.txt" "$PWD/w.py" $window 3 > "$name.stat" 2> "$name.incomplete"
    rm -f "$name.data" "$name.jit.data" jitted-*.so
}
stat() { awk -v k="$2" '{ for (i = 1; i < NF; i++) if ($i == k) print $(i + 1) }' "$1.stat"; }

perf_dwarf() {
    record on dwarf,65528 env $python_env "$PYTHON" -m perftramp --outputs jitdump --jitdump-dir "$PWD" w.py 0.6
    echo "perftramp, jitdump + dwarf: $(cat on.stat)"
    cat on.incomplete # the first incomplete stacks, if any, for the record
    for f in work down steps Walker.walk main "<module>"; do
        grep -qF "py::$f:$PWD/w.py" on.txt || fail "perf script shows no py::$f:<workload> frame"
    done
    n=$(($(stat on samples) - $(stat on stuck))) complete=$(stat on complete) pct=$(stat on complete_pct)
    [ "$n" -ge 100 ] || fail "only $n samples inside the workload's window"
    [ $((complete * 10)) -ge $((n * 9)) ] || fail "$complete of $n samples ($pct%) show the complete chain, < 90%"
    [ "$(stat on stuck)" -eq 0 ] || stuck=" ($(stat on stuck) more never left their first frame, in ld.so)"
    cp on.stat "$pt_top/$PYVER.dwarf.stat" # perf_fp reports it too
    record off fp "$PYTHON" w.py 0.6
    echo "without perftramp: $(cat off.stat)"
    [ "$(stat off samples)" -ge 50 ] || fail "only $(stat off samples) samples without perftramp"
    [ "$(stat off named)" -eq 0 ] || fail "py:: names appear without perftramp"
    proven "$complete of $n samples ($pct%) show work < down x9 < steps < Walker.walk < main < <module> (jitdump, --call-graph dwarf, perf inject)${stuck:-}; no py:: name without perftramp"
}

perf_fp() {
    record fp fp env $python_env "$PYTHON" -m perftramp --outputs perfmap w.py 0.6
    echo "perftramp, perf map + fp: $(cat fp.stat)"
    n=$(($(stat fp samples) - $(stat fp stuck))) complete=$(stat fp complete) named=$(stat fp named) pct=$(stat fp complete_pct)
    # a run that measured nothing fails, whatever the build: the build flags
    # may excuse incomplete stacks, never the absence of samples
    [ "$n" -ge 100 ] || fail "only $n samples inside the workload's window"
    # the build's frame pointers, from its compiler flags alone: the last
    # -f[no-]omit-frame-pointer of CFLAGS, PY_CFLAGS, PY_CORE_CFLAGS
    # (gcc's default at -O2 omits them)
    fpflags=$("$PYTHON" -c 'import sysconfig
v = " ".join(sysconfig.get_config_var(k) or "" for k in ("CFLAGS", "PY_CFLAGS", "PY_CORE_CFLAGS")).split()
f = [x for x in v if x in ("-fno-omit-frame-pointer", "-fomit-frame-pointer")]
print(f[-1] if f else "none")') || fail "sysconfig of $PYTHON cannot be read"
    echo "frame pointers in the build flags: $fpflags"
    if [ "$fpflags" != -fno-omit-frame-pointer ]; then
        # what dwarf mode gave on the same build (perf_dwarf's run)
        cp "$pt_top/$PYVER.dwarf.stat" dw.stat 2> /dev/null && dw="; dwarf mode with jitdump: $(stat dw complete) of $(($(stat dw samples) - $(stat dw stuck))) ($(stat dw complete_pct)%)"
        not_applicable "CPython built without frame pointers (its sysconfig flags: $fpflags; CPython's own fp test skips too): fp mode gave $complete of $n samples ($pct%) complete, $named named${dw:-}"
    fi
    [ $((complete * 10)) -ge $((n * 9)) ] || fail "$complete of $n samples ($pct%) show the complete chain in fp mode, < 90%"
    proven "$complete of $n samples ($pct%) complete (perf map, --call-graph fp)"
}
each_python perf-dwarf perf_dwarf
each_python perf-fp perf_fp
python_exit
