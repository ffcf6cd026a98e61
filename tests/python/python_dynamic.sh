#!/bin/sh
# SPDX-License-Identifier: MIT
# perftramp's CPython module and the 0.2 functions, on every supported
# CPython found here:
#  dynamic: enable(signal=SIGUSR2) starts with no output (outputs() == "",
#     no map line); os.kill(SIGUSR2) turns the outputs on and the map gets
#     the functions that ran before (replayed); set_outputs() switches them
#     ("perfmap,jitdump": the dump is valid for `perftramp check`; ""
#     turns all off); a bad word raises ValueError, changing nothing.
#  srcline: `python -m perftramp --outputs jitdump` under perf record -k 1,
#     perf inject --jit, `perf report --sort sym,srcline`: py::fib shows
#     fib.py:<line of def fib> (co_filename:co_firstlineno via
#     perftramp_wrap_at).
# PROOF: python.<ver>.dynamic and python.<ver>.srcline per version.
set -u
. "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"
# shellcheck source=tests/lib/perf_a2l.sh
. "${PT_SRCDIR:-.}/tests/lib/perf_a2l.sh"
checker=${PT_BUILDDIR:-.}/tools/perftramp

dynamic() {
    cat > script.py << 'PY'
import os, signal, sys, time
import perftramp

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)

def wait_outputs(want):
    for _ in range(100):
        if perftramp.outputs() == want:
            return True
        time.sleep(0.05)
    return False

perftramp.enable(outputs="perfmap", jitdump_dir=os.getcwd(), signal=signal.SIGUSR2)
fib(6)
m = "/tmp/perf-%d.map" % os.getpid()
assert perftramp.outputs() == "", "outputs before the signal: %r" % perftramp.outputs()
assert not os.path.exists(m) or "py::fib" not in open(m).read(), "map lines before the signal"
os.kill(os.getpid(), signal.SIGUSR2)
assert wait_outputs("perfmap"), "outputs after the signal: %r" % perftramp.outputs()
assert open(m).read().count(" py::fib:") == 1, "fib not replayed once into the map: %r" % open(m).read()
os.kill(os.getpid(), signal.SIGUSR2)
assert wait_outputs(""), "outputs after the second signal: %r" % perftramp.outputs()
perftramp.set_outputs("perfmap,jitdump")
assert perftramp.outputs() == "perfmap,jitdump", perftramp.outputs()
fib(3)
try:
    perftramp.set_outputs("perfmap,bogus")
    raise SystemExit("set_outputs accepted a bad word")
except ValueError:
    pass
assert perftramp.outputs() == "perfmap,jitdump", perftramp.outputs()
perftramp.set_outputs("")
assert perftramp.outputs() == "", perftramp.outputs()
print("pid", os.getpid())
PY
    run_python script.py > out.txt 2> err.txt || fail "script.py: $(tail -n 3 err.txt)"
    pid=$(sed -n 's/^pid //p' out.txt)
    forget_pid "$pid"
    [ -s "jit-$pid.dump" ] || fail "no jit-$pid.dump after set_outputs(\"perfmap,jitdump\")"
    if [ -x "$checker" ]; then
        "$checker" check "jit-$pid.dump" > check.txt 2>&1 || fail "perftramp check: $(head -n 3 check.txt)"
    fi
    proven "enable(signal=SIGUSR2) off until the signal, on with fib replayed once, off again; set_outputs perfmap,jitdump (dump checked), bad word refused, \"\" all off"
}

srcline() {
    command -v perf > /dev/null 2>&1 || not_run "perf is not installed"
    HOME=$vtmp perf --buildid-dir "$vtmp/debug" record -q -k 1 -e cpu-clock -o probe.data true > /dev/null 2>&1 ||
        not_run "perf record is not permitted here"
    cat > fib.py << 'PY'
import sys


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


for _ in range(int(sys.argv[1])):
    fib(18)
PY
    line=$(grep -n '^def fib' fib.py | cut -d: -f1)
    HOME=$vtmp perf --buildid-dir "$vtmp/debug" record -q -k 1 -e cpu-clock -F 4999 -o p.data \
        env $python_env "$PYTHON" -m perftramp --outputs jitdump --jitdump-dir "$PWD" fib.py 300 > rec.out 2> rec.err ||
        fail "perf record python -m perftramp fib.py: $(tail -n 1 rec.err)"
    pid=$(HOME=$vtmp perf script -F pid -i p.data 2> /dev/null | sort | uniq -c | sort -rn | awk 'NR == 1 { print $2 }')
    [ -n "$pid" ] && forget_pid "$pid"
    HOME=$vtmp perf --buildid-dir "$vtmp/debug" inject --jit -i p.data -o p.jit.data 2> inject.err ||
        fail "perf inject --jit: $(tail -n 1 inject.err)"
    HOME=$vtmp perf_a2l report -i p.jit.data --no-children --sort sym,srcline --stdio > report.txt 2> report.err ||
        fail "perf report exited with status $?: $(sort report.err | uniq -c | head -n 3)"
    rows=$(grep -c "py::fib:$PWD/fib.py  *fib\.py:$line\$" report.txt)
    [ "$rows" -ge 1 ] || fail "perf report --sort sym,srcline has no py::fib row at fib.py:$line: $(grep 'py::fib' report.txt | head -n 3)"
    proven "perf report --sort sym,srcline: py::fib at fib.py:$line"
}

each_python dynamic dynamic
each_python srcline srcline
python_exit
