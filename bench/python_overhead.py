# SPDX-License-Identifier: MIT
# perftramp's CPython 3.11 module: enabled against disabled on CPU-bound
# workloads, in one process.  Rounds alternate three modes: disabled,
# enabled, and "hook only" (the PEP 523 hook installed, frames run without
# trampolines) -- which splits the cost between PEP 523 itself (3.11 stops
# inlining Python-to-Python calls once any hook is installed) and the
# trampolines.  Each workload reports the fastest time of each mode (noise
# from other processes only ever adds time; CPU time of this process,
# so time spent descheduled does not count) and overheads as ratios of
# those; the median per-round ratio is printed too.  Prints key: value
# lines.
import os
import statistics
import sys
import tempfile
import time

import perftramp
from perftramp import _perftramp


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


WORKLOADS = [("fib", w_fib), ("loop", w_loop), ("generator", w_generator), ("methods", w_methods)]


def timed(fn):
    t0 = time.process_time()
    fn()
    return time.process_time() - t0


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 15
    outputs = sys.argv[2] if len(sys.argv) > 2 else "jitdump,perfmap"
    with tempfile.TemporaryDirectory() as d:
        perftramp.enable(outputs=outputs, jitdump_dir=d)
        perftramp.disable()
        print("python_version: %d.%d.%d" % sys.version_info[:3])
        print("python_outputs: %s" % (outputs or "none"))
        print("python_rounds: %d" % rounds)
        for name, fn in WORKLOADS:
            perftramp.enable(outputs=outputs)
            fn()  # make the trampolines (first-call cost is not steady state)
            perftramp.disable()
            fn()
            off, on, hook, ratios = [], [], [], []
            for _ in range(rounds):
                a = timed(fn)
                perftramp.enable(outputs=outputs)
                b = timed(fn)
                _perftramp._hook_only(True)
                c = timed(fn)
                _perftramp._hook_only(False)
                perftramp.disable()
                off.append(a)
                on.append(b)
                hook.append(c)
                ratios.append(b / a)
            print("python_%s_disabled_ms: %.2f" % (name, 1000 * min(off)))
            print("python_%s_enabled_ms: %.2f" % (name, 1000 * min(on)))
            print("python_%s_hook_only_ms: %.2f" % (name, 1000 * min(hook)))
            print("python_%s_overhead_pct: %.1f" % (name, 100 * (min(on) / min(off) - 1)))
            print("python_%s_pep523_alone_pct: %.1f" % (name, 100 * (min(hook) / min(off) - 1)))
            print("python_%s_overhead_median_ratio_pct: %.1f" % (name, 100 * (statistics.median(ratios) - 1)))

try:
    main()
finally:
    try:  # the perf map this run wrote (perftramp writes it to /tmp)
        os.unlink("/tmp/perf-%d.map" % os.getpid())
    except FileNotFoundError:
        pass
