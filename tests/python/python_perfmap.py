# SPDX-License-Identifier: MIT
# The perf map perftramp's CPython module writes, checked the way CPython's
# own test_perf_profiler checks `-X perf`'s (tests/python/python_perfmap.sh runs
# this with each supported CPython; the module must be importable):
#   1. a script run with `python -m perftramp --outputs perfmap`: one line
#      per function (a 300-byte qualname too: past the module's stack buffer),
#      "START SIZE py::<qualname>:<file>", START and SIZE hex
#      without 0x, each START inside an executable anonymous mapping of the
#      process (perf reads the map for //anon code only), no two lines
#      overlapping; nothing on stdout or stderr but the script's own;
#   2. fork: the parent's map names the parent's functions, the child's map
#      (perf-<childpid>.map) the functions the child ran after fork; the
#      parent's map has none of the child's;
#   3. enable()/disable() inside the script: a function first called while
#      disabled has no line, one called after enable() again has one;
#   4. without perftramp, no map at all.
# Prints ok:/FAIL: lines; exits 1 on the first failure.
import os
import string
import subprocess
import sys
import tempfile

made = []


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def run(script_text, *args):
    """Runs the script in a fresh interpreter; returns (pid, stdout, stderr, status)."""
    d = tempfile.mkdtemp(dir=os.environ.get("TMPDIR"))
    path = os.path.join(d, "perftest.py")
    with open(path, "w") as f:
        f.write(script_text)
    p = subprocess.run([sys.executable, *args, path], capture_output=True, text=True)
    pid = int(p.stdout.split()[0])
    made.append(pid)
    return path, pid, p.stdout.split()[1:], p.stderr, p.returncode


def perf_map(pid):
    try:
        with open("/tmp/perf-%d.map" % pid) as f:
            return f.read()
    except FileNotFoundError:
        return None


PRELUDE = "import os, sys\nprint(os.getpid(), flush=True)\n"


def trampoline_works():
    code = PRELUDE + """
def foo():
    return 1

def bar():
    return foo()

def baz():
    return bar()

baz()

# a name longer than the module builds on its stack (256 bytes)
def long_name():
    return 2

long_name.__code__ = long_name.__code__.replace(co_qualname="L" * 300)
long_name()
# the process's executable anonymous mappings, for the parent to check against
with open("/proc/self/maps") as f:
    for line in f:
        fields = line.split()
        if "x" in fields[1] and len(fields) < 6:
            lo, hi = fields[0].split("-")
            print("anon-x %s %s" % (lo, hi))
"""
    script, pid, out, err, status = run(code, "-m", "perftramp", "--outputs", "perfmap")
    check(status == 0 and err == "", "python -m perftramp --outputs perfmap ran cleanly: status %d, stderr %r" % (status, err[-200:]))
    ranges = [(int(out[i + 1], 16), int(out[i + 2], 16)) for i in range(0, len(out), 3) if out[i] == "anon-x"]
    text = perf_map(pid)
    check(text is not None and text.endswith("\n"), "/tmp/perf-<pid>.map exists, whole lines")
    spans = []
    for name in ("foo", "bar", "baz", "<module>", "L" * 300):
        label = name if len(name) < 40 else "L*%d" % len(name)
        sym = "py::%s:%s" % (name, script)
        lines = [l for l in text.splitlines() if l.split(" ", 2)[2:] == [sym]]
        check(len(lines) == 1, "one line names %s" % sym.replace(name, label))
        start, size = lines[0].split(" ")[:2]
        check(not start.startswith("0x") and set(start) <= set(string.hexdigits)
              and not size.startswith("0x") and set(size) <= set(string.hexdigits),
              "%s: START %s and SIZE %s are hex without 0x" % (label, start, size))
        a, n = int(start, 16), int(size, 16)
        check(n > 0 and any(lo <= a and a + n <= hi for lo, hi in ranges),
              "%s: [%x, +%x) lies in an executable anonymous mapping" % (label, a, n))
    for line in text.splitlines():
        if not line:
            continue  # padding before a 4 KiB boundary (src/outputs/perfmap.c)
        start, size, _ = line.split(" ", 2)
        spans.append((int(start, 16), int(size, 16)))
    spans.sort()
    check(all(a + n <= b for (a, n), (b, _) in zip(spans, spans[1:])), "no two of the %d lines overlap" % len(spans))


def works_with_forks():
    code = PRELUDE + """
def foo_fork():
    return 1

def bar_fork():
    return foo_fork()

def baz_fork():
    return bar_fork()

def foo():
    pid = os.fork()
    if pid == 0:
        baz_fork()
        os._exit(0)
    print(pid)
    _, status = os.waitpid(pid, 0)
    sys.exit(status)

def bar():
    foo()

def baz():
    bar()

baz()
"""
    script, pid, out, err, status = run(code, "-m", "perftramp", "--outputs", "perfmap")
    check(status == 0 and err == "", "the forking script ran cleanly: status %d, stderr %r" % (status, err[-200:]))
    child = int(out[0])
    made.append(child)
    parent_map, child_map = perf_map(pid), perf_map(child)
    check(parent_map is not None and child_map is not None, "parent and child each have a perf map")
    for name in ("foo", "bar", "baz"):
        check("py::%s:%s\n" % (name, script) in parent_map, "the parent's map names py::%s" % name)
    for name in ("foo_fork", "bar_fork", "baz_fork"):
        check("py::%s:%s\n" % (name, script) in child_map, "the child's map names py::%s" % name)
        check("py::%s:" % name not in parent_map, "the parent's map does not name the child's py::%s" % name)


def sys_api():
    code = PRELUDE + """
import perftramp

def foo():
    return 1

def spam():
    return 2

def bar():
    perftramp.disable()
    foo()
    perftramp.enable(outputs="perfmap")
    spam()

def baz():
    bar()

perftramp.enable(outputs="perfmap")
baz()
"""
    script, pid, out, err, status = run(code)
    check(status == 0 and err == "", "enable()/disable() inside a script ran cleanly: %r" % err[-200:])
    text = perf_map(pid) or ""
    check("py::foo:%s\n" % script not in text, "a function first run while disabled has no line")
    for name in ("spam", "bar", "baz"):
        check("py::%s:%s\n" % (name, script) in text, "py::%s has a line" % name)


def off():
    script, pid, out, err, status = run(PRELUDE + "def foo():\n    return 1\nfoo()\n")
    check(status == 0 and perf_map(pid) is None, "without perftramp the script writes no perf map")


try:
    trampoline_works()
    works_with_forks()
    sys_api()
    off()
finally:
    for pid in made:
        try:
            os.unlink("/tmp/perf-%d.map" % pid)
        except FileNotFoundError:
            pass
