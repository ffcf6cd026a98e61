# SPDX-License-Identifier: MIT
# Trampoline creation against CPython's own, same interpreter, same run:
# N distinct Python functions (code objects made with code.replace, so
# each is new to the eval-frame hook) created and called once each, in a
# fresh process per mode:
#     plain      python X.py                    (no perf support: the floor)
#     builtin    python -X perf X.py            (CPython 3.12+: perf map)
#     perftramp  python -m perftramp --outputs perfmap X.py
# and, on 3.13+, the jitdump side: -X perf_jit against --outputs jitdump.
# Each child reports the wall time of the create-and-call loop and the
# growth of its resident set (/proc/self/statm) over it, every function
# still alive.  Keys (py3X_ prefix added by bench/python_create.sh):
#     create_vs_builtin        perftramp loop time / -X perf loop time, N = 10^5
#     rss_per_fn_vs_builtin    perftramp RSS growth / -X perf RSS growth, N = 10^5
#     create_vs_builtin_jit, rss_per_fn_vs_builtin_jit   the same, jitdump (3.13+)
# A round runs every mode once, back to back, in alternating order (the
# pair's first run in one round is its second in the next), so a key is the
# median of ROUNDS per-round ratios: a machine that slows down between two
# rounds moves both sides of a pair alike.  Notes give both N (10^4, 10^5),
# the median ns and bytes per function of every mode, and what each adds
# over the plain run.
#   python_create.py run ROUNDS SRCDIR      (the driver)
#   python_create.py child N                (one measurement)
import os
import subprocess
import sys
import tempfile
import time


def template(x):
    return x + 1


def child(n):
    page = os.sysconf("SC_PAGESIZE")

    def rss():
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * page

    code = template.__code__
    g = globals()
    keep = []
    FunctionType = type(template)
    # warm the allocator and the loop itself on one function
    FunctionType(code.replace(co_name="warm"), g)(0)
    r0 = rss()
    t0 = time.perf_counter_ns()
    for i in range(n):
        f = FunctionType(code.replace(co_name="f%d" % i, co_qualname="f%d" % i), g)
        f(i)
        keep.append(f)
    t1 = time.perf_counter_ns()
    r1 = rss()
    print("%d %d" % (t1 - t0, r1 - r0))


def key(name, value, fmt="%.3f"):
    print(("%s: " + fmt) % (name, value))


def note(text):
    print("# " + text)


def run_mode(argv, n, tmp):
    env = dict(os.environ)
    r = subprocess.run(argv + [os.path.abspath(__file__), "child", str(n)], capture_output=True, text=True,
                       env=env, cwd=tmp, timeout=300)
    if r.returncode != 0:
        raise RuntimeError("%s: exit %d: %s" % (" ".join(argv), r.returncode, r.stderr.strip()[-300:]))
    ns, grow = r.stdout.split()[-2:]
    return int(ns), int(grow)


def cleanup_files():
    # -X perf and perftramp both write /tmp/perf-<pid>.map; -X perf_jit
    # /tmp/jit-<pid>.dump: the children are gone, their files go too
    me = os.getuid()
    for name in os.listdir("/tmp"):
        if (name.startswith("perf-") and name.endswith(".map")) or (name.startswith("jit-") and name.endswith(".dump")):
            p = os.path.join("/tmp", name)
            try:
                st = os.stat(p)
                pid = int(name.split("-")[1].split(".")[0])
                if st.st_uid == me and not os.path.exists("/proc/%d" % pid):
                    os.unlink(p)
            except (OSError, ValueError):
                pass


def run(rounds):
    # here, not at the top: the child also runs on CPython builds without
    # _contextvars, which statistics needs (bench/cpython_vs_stock.py)
    import statistics

    py = [sys.executable]
    ver = sys.version_info
    sides = []
    if ver >= (3, 12):
        sides.append(("", py + ["-X", "perf"], py + ["-m", "perftramp", "--outputs", "perfmap"], "-X perf",
                      "--outputs perfmap"))
    else:
        for k in ("create_vs_builtin", "rss_per_fn_vs_builtin"):
            print("%s: not run: CPython %d.%d has no -X perf" % (k, ver[0], ver[1]))
    if ver >= (3, 13):
        sides.append(("_jit", py + ["-X", "perf_jit"], None, "-X perf_jit", "--outputs jitdump"))
    elif ver >= (3, 12):
        for k in ("create_vs_builtin_jit", "rss_per_fn_vs_builtin_jit"):
            print("%s: not run: CPython %d.%d has no -X perf_jit" % (k, ver[0], ver[1]))
    with tempfile.TemporaryDirectory() as tmp:
        for n in (10000, 100000):
            plain = [run_mode(py, n, tmp) for _ in range(rounds)]
            plain_t = statistics.median(t for t, _ in plain) / n
            plain_m = statistics.median(m for _, m in plain) / n
            note("N=%d plain: %.0f ns, %.1f B per function" % (n, plain_t, plain_m))
            for suffix, builtin, ours, bname, oname in sides:
                if ours is None:
                    ours = py + ["-m", "perftramp", "--outputs", "jitdump", "--jitdump-dir", tmp]
                b_runs, o_runs = [], []
                for r in range(rounds):
                    if r % 2 == 0:
                        b_runs.append(run_mode(builtin, n, tmp))
                        o_runs.append(run_mode(ours, n, tmp))
                    else:
                        o_runs.append(run_mode(ours, n, tmp))
                        b_runs.append(run_mode(builtin, n, tmp))
                    cleanup_files()
                b_t = statistics.median(t for t, _ in b_runs) / n
                b_m = statistics.median(m for _, m in b_runs) / n
                o_t = statistics.median(t for t, _ in o_runs) / n
                o_m = statistics.median(m for _, m in o_runs) / n
                t_ratios = [o[0] / b[0] for o, b in zip(o_runs, b_runs)]
                m_ratios = [o[1] / b[1] for o, b in zip(o_runs, b_runs)]
                note("N=%d %s: %.0f ns, %.1f B per function (+%.0f ns, +%.1f B over plain)"
                     % (n, bname, b_t, b_m, b_t - plain_t, b_m - plain_m))
                note("N=%d perftramp %s: %.0f ns, %.1f B per function (+%.0f ns, +%.1f B over plain)"
                     % (n, oname, o_t, o_m, o_t - plain_t, o_m - plain_m))
                if n == 100000:
                    key("create_vs_builtin" + suffix, statistics.median(t_ratios))
                    key("rss_per_fn_vs_builtin" + suffix, statistics.median(m_ratios))
                    note("create_vs_builtin%s: create+call loop, perftramp %s / CPython %s, N=%d, median of %d "
                         "per-round ratios (%s); rss_per_fn_vs_builtin%s: resident growth per function, same runs"
                         % (suffix, oname, bname, n, rounds, " ".join("%.3f" % x for x in t_ratios), suffix))

if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "child":
        child(int(sys.argv[2]))
    elif len(sys.argv) >= 3 and sys.argv[1] == "run":
        run(int(sys.argv[2]))
    else:
        sys.exit("usage: python_create.py run ROUNDS | child N")
