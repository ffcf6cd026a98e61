# SPDX-License-Identifier: MIT
# Five Python functions deep, the innermost looping (tests/cpython/perf_stacks.sh):
#   python deep.py N
import sys


def f5(n):
    x = 0
    for i in range(n):
        x += i
    return x


def f4(n):
    return f5(n)


def f3(n):
    return f4(n)


def f2(n):
    return f3(n)


def f1(n):
    return f2(n)


f1(int(sys.argv[1]))
