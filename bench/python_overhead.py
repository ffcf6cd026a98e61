# SPDX-License-Identifier: MIT
# perftramp's CPython module side by side with CPython's own perf support,
# same interpreter, same workloads, one run (bench/python_overhead.sh runs
# this once per supported CPython found).  Prints `key: value` lines, every
# key prefixed py3X_ (py312_...), and `# ` notes.
#
#   python_overhead.py run ROUNDS REPS STACK_SECONDS SRCDIR
#   python_overhead.py child MODE REPS DUMPDIR     (one measured process)
#   python_overhead.py ir MODE N                    (one process under callgrind)
#
# Overhead: every mode runs in fresh processes of this interpreter, the
# modes interleaved round by round:
#     off       no perf support (the control)
#     perf      python -X perf         (CPython 3.12+: its trampoline, perf map)
#     perf_jit  python -X perf_jit     (CPython 3.13+: its trampoline, jitdump)
#     pt_map    perftramp.enable("perfmap") first thing
#     pt_jit    perftramp.enable("jitdump") first thing
#     hook      perftramp's PEP 523 hook without trampolines (_hook_only):
#               what the hook itself costs, whoever installs it
# Each process warms every workload up (trampolines made, instructions
# specialized), times each one REPS times in CPU time with its mode on,
# then switches the mode off (perftramp.disable(),
# sys.deactivate_stack_trampoline()) and does the same again: the cost of
# a mode is on/off *within one process*.  A shared machine slows whole
# processes (a busy sibling CPU, a neighbour's burst): comparing the
# fastest runs of different processes read 1.3-1.5 for the no-call loop
# here, within a process the loop reads 1.00.  Per mode and workload the
# median over the processes counts; the ratios:
#     overhead_vs_builtin_<w>      pt_map cost / perf cost
#     overhead_vs_builtin_jit_<w>  pt_jit cost / perf_jit cost
#     overhead_vs_builtin[_jit]    their geometric mean over the workloads
#     overhead_vs_off_<w>, builtin_vs_off_<w>, hook_vs_off_<w>: the costs
#     control_<w>: the off mode's second block against its first (~1.0)
# Instructions (callgrind, deterministic where times are not): fib(20)
# run inside math.fsum, with collection on only there, after a warm-up:
#     ir_per_call_off / _hook / _builtin / _perftramp  instructions per Python call
#     ir_vs_builtin                             perftramp / -X perf
# Stacks: tests/python/python_stack_workload.py (function, method, generator,
# recursion) under perf record -k 1; tests/python/python_stacks.py counts, among
# the samples inside its window, those with the complete py:: chain down
# to the module's code:
#     stacks_vs_builtin_fp     perftramp (perf map) / -X perf, --call-graph fp
#     stacks_vs_builtin_dwarf  perftramp (jitdump) / -X perf_jit, --call-graph
#                              dwarf + perf inject --jit (3.13; on 3.12, whose
#                              best is -X perf there, n/a with both shares)
# and from the same dwarf runs: dump_bytes_vs_builtin (jit-<pid>.dump
# sizes), jitted_so_perftramp / jitted_so_builtin (perf inject's .so
# files), and map_bytes_vs_builtin from the fp runs.
import json
import math
import os
import shutil
import statistics
import struct
import subprocess
import sys
import tempfile
import time

VERSION = sys.version_info[:2]
PREFIX = "py%d%d_" % VERSION


# ---- the workloads ---------------------------------------------------------

def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def w_fib():  # call-heavy: one trampoline call per Python call
    return fib(25)


def w_loop():  # one frame, a long loop: the floor
    s = 0
    for i in range(600000):
        s += i * i % 7
    return s


def squares(n):
    for i in range(n):
        yield i * i


def w_generator():  # every resume goes through the eval-frame hook
    return sum(x % 3 for x in squares(300000))


class Vec:
    __slots__ = ("x", "y")

    def __init__(self, x, y):
        self.x = x
        self.y = y

    def add(self, o):
        return Vec(self.x + o.x, self.y + o.y)

    def norm1(self):
        return abs(self.x) + abs(self.y)


def w_methods():  # small methods and constructors
    v = Vec(0, 0)
    d = Vec(1, -2)
    t = 0
    for _ in range(120000):
        v = v.add(d)
        t += v.norm1()
    return t


WORKLOADS = [("fib", w_fib), ("methods", w_methods), ("generator", w_generator), ("loop", w_loop)]


# ---- one measured process ----------------------------------------------------

def timed_block(reps):
    """The fastest CPU time of each workload over REPS rounds, after a warm-up
    (trampolines made, specialized instructions settled)."""
    for _, fn in WORKLOADS:
        fn()
    times = {name: [] for name, _ in WORKLOADS}
    for _ in range(reps):
        for name, fn in WORKLOADS:
            t0 = time.process_time()
            fn()
            times[name].append(time.process_time() - t0)
    return {name: min(ts) for name, ts in times.items()}


def child(mode, reps, dumpdir):
    """Times the workloads with MODE on, then switches it off in the same
    process and times them again: on/off within one process, one CPU, one
    second, whatever the machine did to the processes before and after."""
    if mode in ("pt_map", "pt_jit", "hook"):
        import perftramp
        perftramp.enable(outputs="jitdump" if mode == "pt_jit" else "perfmap", jitdump_dir=dumpdir)
        if mode == "hook":
            from perftramp import _perftramp
            _perftramp._hook_only(True)
    try:
        on = timed_block(reps)
        if mode in ("pt_map", "pt_jit", "hook"):
            perftramp.disable()
        elif mode in ("perf", "perf_jit"):
            sys.deactivate_stack_trampoline()
        off = timed_block(reps)
    finally:
        for path in ("/tmp/perf-%d.map" % os.getpid(), "/tmp/jit-%d.dump" % os.getpid()):
            try:  # CPython writes these to /tmp whatever the directory
                os.unlink(path)
            except FileNotFoundError:
                pass
    print(json.dumps({w: [on[w], off[w]] for w in on}))


def ir_child(mode, n):
    """Enables MODE, warms up, then runs fib(N) inside math.fsum, the one
    function callgrind collects in (--toggle-collect=math_fsum)."""
    import math
    if mode in ("pt_map", "hook"):
        import perftramp
        perftramp.enable(outputs="perfmap")
        if mode == "hook":
            from perftramp import _perftramp
            _perftramp._hook_only(True)
    try:
        fib(10)
        math.fsum(fib(n) for _ in range(1))
    finally:
        try:
            os.unlink("/tmp/perf-%d.map" % os.getpid())
        except FileNotFoundError:
            pass


# ---- the orchestrator --------------------------------------------------------

def key(name, value, fmt="%.3f"):
    print("%s%s: %s" % (PREFIX, name, fmt % value if isinstance(value, (int, float)) else value), flush=True)


def note(text):
    print("# %s%s" % (PREFIX.rstrip("_") + ": ", text), flush=True)


def modes():
    m = ["off", "pt_map", "hook"]
    if VERSION >= (3, 12):
        m.insert(1, "perf")
    if VERSION >= (3, 13):
        m += ["perf_jit", "pt_jit"]
    return m


def flags(mode):
    return {"perf": ["-X", "perf"], "perf_jit": ["-X", "perf_jit"]}.get(mode, [])


def overhead(rounds, reps, tmp):
    ms = modes()
    best = {m: {} for m in ms}      # fastest time with the mode on, over all processes
    cost = {m: {} for m in ms}      # per process: on / off, same process
    for r in range(rounds):
        for m in ms[r % len(ms):] + ms[:r % len(ms)]:  # a different order every round
            out = subprocess.run([sys.executable, *flags(m), os.path.abspath(__file__), "child", m, str(reps), tmp],
                                 capture_output=True, text=True)
            if out.returncode != 0:
                raise SystemExit("python_overhead: mode %s failed: %s" % (m, out.stderr.strip()[-300:]))
            for w, (on, off) in json.loads(out.stdout.strip().splitlines()[-1]).items():
                best[m][w] = min(best[m].get(w, on), on)
                cost[m].setdefault(w, []).append(on / off)
            for f in os.listdir(tmp):  # the pt_jit children's dumps
                os.unlink(os.path.join(tmp, f))
    names = [w for w, _ in WORKLOADS]
    med = {m: {w: statistics.median(cost[m][w]) for w in names} for m in ms}
    note("overhead: %d rounds x %d modes (%s); each process times every workload %d times with its mode on, "
         "then switches it off and times them again; fastest CPU time of each block" % (rounds, len(ms), " ".join(ms), reps))
    for m in ms:
        note("%s: on %s; on/off median %s" % (m, ", ".join("%s %.2f ms" % (w, 1000 * best[m][w]) for w in names),
                                             ", ".join("%s %.3f" % (w, med[m][w]) for w in names)))

    def ratios(label, num, den):
        rs = [med[num][w] / med[den][w] for w in names]
        for w, r in zip(names, rs):
            key("%s_%s" % (label, w), r)
        key(label, math.exp(sum(map(math.log, rs)) / len(rs)))

    if "perf" in ms:
        ratios("overhead_vs_builtin", "pt_map", "perf")
    if "perf_jit" in ms:
        ratios("overhead_vs_builtin_jit", "pt_jit", "perf_jit")
    for w in names:
        key("overhead_vs_off_%s" % w, med["pt_map"][w])
        key("hook_vs_off_%s" % w, med["hook"][w])
        key("control_%s" % w, med["off"][w])  # off both times: what the method itself reads
        if "perf" in ms:
            key("builtin_vs_off_%s" % w, med["perf"][w])


def instructions():
    if not shutil.which("valgrind"):
        key("ir_vs_builtin", "n/a (valgrind is not installed)")
        return
    n = 20
    calls = lambda k: 1 if k < 2 else 1 + calls(k - 1) + calls(k - 2)
    per_call = {}
    ms = ["off", "hook", "pt_map"] + (["perf"] if VERSION >= (3, 12) else [])
    with tempfile.TemporaryDirectory() as d:
        for m in ms:
            out = os.path.join(d, "callgrind.out")
            r = subprocess.run(["valgrind", "--tool=callgrind", "--toggle-collect=math_fsum",
                                "--callgrind-out-file=" + out, sys.executable, *flags(m),
                                os.path.abspath(__file__), "ir", m, str(n)], capture_output=True, text=True)
            total = None
            if r.returncode == 0:
                with open(out) as f:
                    for line in f:
                        if line.startswith(("summary:", "totals:")):
                            total = int(line.split()[1])
                            break
            if not total:
                key("ir_vs_builtin", "n/a (callgrind failed: %s)" % r.stderr.strip()[-200:])
                return
            per_call[m] = total / calls(n)
    note("instructions: callgrind, fib(%d) = %d Python calls inside math.fsum" % (n, calls(n)))
    key("ir_per_call_off", per_call["off"], "%.0f")
    key("ir_per_call_hook", per_call["hook"], "%.0f")
    key("ir_per_call_perftramp", per_call["pt_map"], "%.0f")
    if "perf" in per_call:
        key("ir_per_call_builtin", per_call["perf"], "%.0f")
        key("ir_vs_builtin", per_call["pt_map"] / per_call["perf"])


def perf_ok():
    if not shutil.which("perf"):
        return "perf is not installed"
    with tempfile.TemporaryDirectory() as d:
        r = subprocess.run(["perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-o", d + "/p.data", "true"],
                           capture_output=True, env=dict(os.environ, HOME=d))
    return None if r.returncode == 0 else "perf record is not permitted here"


def loads_in(path):
    """Number of LOAD records in a jitdump (layout: tests/python/python_jitdump.py)."""
    with open(path, "rb") as f:
        b = f.read()
    off, n = 40, 0
    while off + 16 <= len(b):
        rid, size = struct.unpack_from("<II", b, off)
        n += rid == 0
        off += max(size, 16)
    return n


def stack_run(srcdir, tmp, label, callgraph, argv, dumpdir=None):
    """One profile of the stack workload; returns (complete_pct, facts)."""
    d = os.path.join(tmp, label)
    os.makedirs(d)
    script = os.path.join(d, "w.py")
    shutil.copy(os.path.join(srcdir, "tests", "python", "python_stack_workload.py"), script)
    env = dict(os.environ, HOME=d)
    perf = ["perf", "--buildid-dir", os.path.join(d, "debug")]
    data = os.path.join(d, "perf.data")
    rec = subprocess.run(perf + ["record", "-q", "-k", "1", "-e", "cpu-clock", "-F", "499", "--call-graph", callgraph,
                                 "-o", data] + argv(script), capture_output=True, text=True, env=env, cwd=d)
    if rec.returncode != 0:
        raise SystemExit("python_overhead: perf record %s failed: %s" % (label, rec.stderr.strip()[-300:]))
    window = [l.split()[1:] for l in rec.stdout.splitlines() if l.startswith("window ")][0]
    pid = int(subprocess.run(perf + ["script", "-F", "pid", "-i", data], capture_output=True, text=True,
                             env=env).stdout.split()[0])
    facts = {}
    builtin_dump = "/tmp/jit-%d.dump" % pid
    try:
        mapfile = "/tmp/perf-%d.map" % pid
        if os.path.exists(mapfile):
            facts["map_bytes"] = os.path.getsize(mapfile)
        dump = builtin_dump if os.path.exists(builtin_dump) else os.path.join(dumpdir or d, "jit-%d.dump" % pid)
        if callgraph.startswith("dwarf"):
            jit = os.path.join(d, "jit.data")
            subprocess.run(perf + ["inject", "--jit", "-i", data, "-o", jit], capture_output=True, env=env, check=True)
            data = jit
            if os.path.exists(dump):
                facts["dump_bytes"] = os.path.getsize(dump)
                facts["loads"] = loads_in(dump)
                where = os.path.dirname(dump)
                facts["jitted_so"] = sum(1 for f in os.listdir(where) if f.startswith("jitted-%d-" % pid))
        txt = os.path.join(d, "script.txt")
        with open(txt, "w") as f:
            subprocess.run(perf + ["script", "-F", "time,ip,sym,dso", "-i", data], stdout=f, stderr=subprocess.DEVNULL,
                           env=env, check=True)
        out = subprocess.run([sys.executable, os.path.join(srcdir, "tests", "python", "python_stacks.py"), txt, script, *window],
                             capture_output=True, text=True, check=True).stdout.split()
        stat = dict(zip(out[::2], out[1::2]))
        note("stacks %s: %s of %s samples complete (%s%%), %s named, %s stuck in ld.so (left out)" % (
            label, stat["complete"], int(stat["samples"]) - int(stat["stuck"]), stat["complete_pct"], stat["named"],
            stat["stuck"]))
        return float(stat["complete_pct"]), facts
    finally:
        for f in ["/tmp/perf-%d.map" % pid, builtin_dump]:
            if os.path.exists(f):
                os.unlink(f)
        for f in os.listdir("/tmp"):
            if f.startswith("jitted-%d-" % pid) and f.endswith(".so"):
                os.unlink(os.path.join("/tmp", f))
        shutil.rmtree(d, ignore_errors=True)


def stacks(srcdir, seconds, tmp):
    why = perf_ok()
    if why:
        for k in ("stacks_vs_builtin_fp", "stacks_vs_builtin_dwarf", "dump_bytes_vs_builtin"):
            key(k, "n/a (%s)" % why)
        return
    py = [sys.executable]
    pt = lambda outputs, extra=(): (lambda s: py + ["-m", "perftramp", "--outputs", outputs, *extra, s, str(seconds)])
    ratio = lambda a, b: a / b if b else None

    def ratio_key(name, ours, theirs, why_none):
        r = ratio(ours, theirs)
        key(name, r if r is not None else "n/a (%s)" % why_none)

    fp_note = "CPython built without frame pointers" if "no-omit-frame-pointer" not in (
        __import__("sysconfig").get_config_var("PY_CORE_CFLAGS") or "") else "frame pointers"
    dwarf_pt, pt_facts = stack_run(srcdir, tmp, "perftramp-dwarf", "dwarf,65528", pt("jitdump", ("--jitdump-dir", tmp)), tmp)
    key("stacks_dwarf_perftramp_pct", dwarf_pt, "%.1f")
    if "loads" in pt_facts:
        key("loads_perftramp", pt_facts["loads"], "%d")
        key("jitted_so_perftramp", pt_facts["jitted_so"], "%d")
    for f in os.listdir(tmp):
        if f.startswith(("jit-", "jitted-")):
            os.unlink(os.path.join(tmp, f))
    if VERSION < (3, 12):
        note("3.11 has no perf support of its own: no ratios to CPython")
        return
    fp_pt, fp_pt_facts = stack_run(srcdir, tmp, "perftramp-fp", "fp", pt("perfmap"))
    fp_b, fp_b_facts = stack_run(srcdir, tmp, "builtin-fp", "fp", lambda s: py + ["-X", "perf", s, str(seconds)])
    key("stacks_fp_perftramp_pct", fp_pt, "%.1f")
    key("stacks_fp_builtin_pct", fp_b, "%.1f")
    ratio_key("stacks_vs_builtin_fp", fp_pt, fp_b, "-X perf gave 0%% complete stacks in fp mode, perftramp %.1f%%: %s"
              % (fp_pt, fp_note))
    if "map_bytes" in fp_pt_facts and "map_bytes" in fp_b_facts:
        key("map_bytes_vs_builtin", fp_pt_facts["map_bytes"] / fp_b_facts["map_bytes"])
    if VERSION < (3, 13):
        # 3.12's best in dwarf mode: -X perf, whose trampolines have no unwind info
        dwarf_b, _ = stack_run(srcdir, tmp, "builtin-dwarf", "dwarf,65528", lambda s: py + ["-X", "perf", s, str(seconds)])
        key("stacks_dwarf_builtin_pct", dwarf_b, "%.1f")
        ratio_key("stacks_vs_builtin_dwarf", dwarf_pt, dwarf_b, "3.12 has no -X perf_jit; -X perf gave %.1f%% complete "
                  "stacks in dwarf mode (no unwind info for its trampolines), perftramp's jitdump %.1f%%" % (dwarf_b, dwarf_pt))
        key("dump_bytes_vs_builtin", "n/a (3.12 has no jitdump of its own)")
        return
    dwarf_b, b_facts = stack_run(srcdir, tmp, "builtin-dwarf", "dwarf,65528",
                                 lambda s: py + ["-X", "perf_jit", s, str(seconds)])
    key("stacks_dwarf_builtin_pct", dwarf_b, "%.1f")
    ratio_key("stacks_vs_builtin_dwarf", dwarf_pt, dwarf_b, "-X perf_jit gave 0%")
    if "dump_bytes" in pt_facts and "dump_bytes" in b_facts:
        key("dump_bytes_vs_builtin", pt_facts["dump_bytes"] / b_facts["dump_bytes"])
        key("dump_bytes_per_load_vs_builtin", (pt_facts["dump_bytes"] / pt_facts["loads"])
            / (b_facts["dump_bytes"] / b_facts["loads"]))
        key("loads_builtin", b_facts["loads"], "%d")
        key("jitted_so_builtin", b_facts["jitted_so"], "%d")
        note("dump bytes: perftramp %d B for %d LOADs, -X perf_jit %d B for %d LOADs"
             % (pt_facts["dump_bytes"], pt_facts["loads"], b_facts["dump_bytes"], b_facts["loads"]))


def run(rounds, reps, seconds, srcdir):
    print("%sversion: %d.%d.%d" % (PREFIX, *sys.version_info[:3]))
    with tempfile.TemporaryDirectory() as tmp:
        overhead(rounds, reps, tmp)
        instructions()
        stacks(srcdir, seconds, tmp)


if __name__ == "__main__":
    if sys.argv[1] == "child":
        child(sys.argv[2], int(sys.argv[3]), sys.argv[4])
    elif sys.argv[1] == "ir":
        ir_child(sys.argv[2], int(sys.argv[3]))
    else:
        run(int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]), sys.argv[5])
