# SPDX-License-Identifier: MIT
# CPython 3.13.5 patched for perftramp (examples/cpython) against the stock
# interpreter built from the same source with the same flags, in one run.
# Each measurement is a fresh child process of one interpreter:
#     fib        fib(30), CPU time of the call (time.process_time_ns)
#     create     bench/python_create.py's child: 100,000 new functions
#                created and called once, the loop's wall time; the
#                child's peak resident set (wait4's ru_maxrss), which is
#                its resident set after them (nothing is freed before exit)
# Keys, patched / stock, each the median of ROUNDS per-round ratios (a
# round runs both sides back to back, in alternating order):
#     cpython_fib_perf_vs_stock      fib under -X perf
#     cpython_fib_perfjit_vs_stock   fib under -X perf_jit
#     cpython_create_vs_stock        create under -X perf
#     cpython_rss_vs_stock           its resident set after the 100,000
#     cpython_off_vs_stock           fib without -X perf
#   cpython_vs_stock.py STOCK_PYTHON PATCHED_PYTHON ROUNDS
# The patched interpreter finds libperftramp through LD_LIBRARY_PATH (set
# by bench/cpython_vs_stock.sh).
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from python_create import cleanup_files  # noqa: E402  (bench/)

FIB = ("import time\n"
       "def fib(n):\n"
       "    return n if n < 2 else fib(n - 1) + fib(n - 2)\n"
       "t0 = time.process_time_ns()\n"
       "fib(30)\n"
       "print(time.process_time_ns() - t0, 0)\n")
CREATE = [os.path.join(HERE, "python_create.py"), "child", "100000"]


def child(python, xopts, args, tmp):
    """(the first number the child printed, its peak resident set in bytes)"""
    p = subprocess.Popen([python] + xopts + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp)
    out, err = p.stdout.read(), p.stderr.read()
    _, status, usage = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    if p.returncode != 0:
        raise RuntimeError("%s %s: exit %d: %s" % (python, " ".join(xopts), p.returncode, err.decode()[-300:]))
    return int(out.split()[0]), usage.ru_maxrss * 1024


def run(stock, patched, rounds):
    measures = [  # key, -X options, program, what is compared
        ("cpython_fib_perf_vs_stock", ["-X", "perf"], ["-c", FIB], "time"),
        ("cpython_fib_perfjit_vs_stock", ["-X", "perf_jit"], ["-c", FIB], "time"),
        ("cpython_create_vs_stock", ["-X", "perf"], CREATE, "time"),
        ("cpython_off_vs_stock", [], ["-c", FIB], "time"),
    ]
    ratios = {k: [] for k, _, _, _ in measures}
    ratios["cpython_rss_vs_stock"] = []
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for key, xopts, args, _ in measures:
                sides = [("stock", stock), ("patched", patched)]
                if r % 2:
                    sides.reverse()
                got = {}
                for name, python in sides:
                    got[name] = child(python, xopts, args, tmp)
                    figures.setdefault((key, name), []).append(got[name])
                cleanup_files()
                ratios[key].append(got["patched"][0] / got["stock"][0])
                if key == "cpython_create_vs_stock":
                    ratios["cpython_rss_vs_stock"].append(got["patched"][1] / got["stock"][1])
    for key in ratios:
        print("%s: %.3f" % (key, statistics.median(ratios[key])))
    for (key, name), runs in sorted(figures.items()):
        t = statistics.median(x for x, _ in runs)
        m = statistics.median(x for _, x in runs)
        unit = "ns per function" if "create" in key else "ms"
        t = t / 100000 if "create" in key else t / 1e6
        print("# %s %s: %.1f %s, peak RSS %.1f MB (median of %d)" % (key, name, t, unit, m / 1e6, len(runs)))
    for key in ratios:
        print("# %s per round: %s" % (key, " ".join("%.3f" % x for x in ratios[key])))


if __name__ == "__main__":
    if len(sys.argv) != 4:
        sys.exit("usage: cpython_vs_stock.py STOCK_PYTHON PATCHED_PYTHON ROUNDS")
    run(sys.argv[1], sys.argv[2], int(sys.argv[3]))
