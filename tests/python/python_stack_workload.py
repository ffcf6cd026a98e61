# SPDX-License-Identifier: MIT
# The Python program whose perf profiles tests/python/python_perf.sh and
# bench/python_overhead.sh read (tests/python/python_stacks.py counts them).  It
# calls through a function, a method, a generator and a recursion, so a
# complete stack, innermost first, reads
#     work, down x9, steps, Walker.walk, main, <module>
# (or a tail of that: a sample taken in `steps` has no `work` or `down`).
#   python_stack_workload.py [CPU_SECONDS]
# Prints `window START END`: CLOCK_MONOTONIC ns around main(), the clock
# `perf record -k 1` stamps samples with, so samples taken while the
# interpreter starts or exits are left out.
import sys
import time


def work(n):  # the hot loop
    x = 0
    for i in range(n):
        x += i * i % 7
    return x


def down(depth, n):  # depth + 1 frames of itself
    return work(n) if depth == 0 else down(depth - 1, n)


def steps(rounds, n):  # a generator frame
    for _ in range(rounds):
        yield down(8, n)


class Walker:
    def walk(self, rounds, n):  # a method
        return sum(steps(rounds, n))


def main(seconds):
    w = Walker()
    end = time.process_time() + seconds
    total = 0
    while time.process_time() < end:
        total += w.walk(3, 3000)
    return total


start = time.clock_gettime_ns(time.CLOCK_MONOTONIC)
main(float(sys.argv[1]) if len(sys.argv) > 1 else 1.0)
print("window", start, time.clock_gettime_ns(time.CLOCK_MONOTONIC))
