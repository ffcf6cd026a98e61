# SPDX-License-Identifier: MIT
# backtrace(3) (libgcc's in-process unwinder, the one C++ exceptions and
# crash handlers use) called through ctypes from Python code three calls
# deep, with perftramp's trampolines in between: which trampolines does it
# walk through, and does it reach the interpreter's main?  The trampolines
# are found by address in this process's perf map.
#   python -m perftramp --outputs OUTPUTS python_backtrace.py   (OUTPUTS with perfmap)
#   python -X perf python_backtrace.py                           (CPython's own, 3.12+)
# Prints: `trampolines: NAME...` (innermost first, the script's own only)
# and `reaches main: yes|no`.
import ctypes
import os

libc = ctypes.CDLL(None)
libc.backtrace.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_int]
libc.backtrace_symbols.restype = ctypes.POINTER(ctypes.c_char_p)
HERE = os.path.abspath(__file__)


def walk():
    buf = (ctypes.c_void_p * 512)()
    n = libc.backtrace(buf, 512)
    syms = libc.backtrace_symbols(buf, n)
    return [buf[i] or 0 for i in range(n)], [syms[i].decode(errors="replace") for i in range(n)]


def foo():
    return walk()


def bar():
    return foo()


def baz():
    return bar()


pcs, syms = baz()
spans = []
perf_map = "/tmp/perf-%d.map" % os.getpid()
with open(perf_map) as f:
    for line in f:
        if line == "\n":
            continue  # padding before a 4 KiB boundary (src/outputs/perfmap.c)
        start, size, name = line.rstrip("\n").split(" ", 2)
        spans.append((int(start, 16), int(size, 16), name))
os.unlink(perf_map)  # read: nothing is left behind in /tmp
names = []
for pc in pcs:
    for start, size, name in spans:
        if start < pc <= start + size and name.endswith(":" + HERE):  # return addresses
            names.append(name[4:-len(HERE) - 1])
print("frames:", len(pcs))
print("trampolines:", " ".join(names))
print("reaches main:", "yes" if any("Py_BytesMain" in s or "__libc_start_main" in s for s in syms) else "no")
