# SPDX-License-Identifier: MIT
"""A small real jitdump producer for tests/producers/producers_synthetic.sh.

It writes x86-64 code into executable memory, writes the jitdump records
for it the way a JIT does (header, then a LOAD per function, CLOCK_MONOTONIC
timestamps), maps the dump PROT_EXEC so `perf record -k 1` sees it, and runs
the code long enough for samples to land in it.  Scenarios:

  reuse   function E runs, then new code F is written over E's bytes and
          LOADed at the same address (a JIT reusing freed code memory); F runs
  tail    E runs; then a small L is LOADed just below E with an
          UNWINDING_INFO whose mapped_size makes perf map L over E's first
          0x60 bytes; E runs again (perf names those samples as L's)
  plain   E and F at distinct addresses, each runs

--name bun writes jit-<tid>-<pid>.dump (as Bun does) instead of jit-<pid>.dump.
Prints the dump's path.  x86-64 Linux only.
"""
import argparse
import ctypes
import mmap
import os
import struct
import threading
import time

PID = os.getpid()


def now():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


class Dump:
    def __init__(self, path):
        self.fd = os.open(path, os.O_CREAT | os.O_TRUNC | os.O_RDWR, 0o600)
        os.write(self.fd, struct.pack("<IIIIIIQQ", 0x4A695444, 1, 40, 62, 0, PID, now(), 0))
        # the marker perf record sees: the dump mapped executable
        self.marker = mmap.mmap(self.fd, 40, flags=mmap.MAP_PRIVATE, prot=mmap.PROT_READ | mmap.PROT_EXEC)
        self.index = 0

    def unwinding_info(self, mapped_size):
        # no .eh_frame, an .eh_frame_hdr with no entries (as V8 writes for
        # code without CFI), but a mapped_size: perf maps that much past the code
        hdr = struct.pack("<BBBBiI", 1, 0x1B, 0x03, 0x3B, -4, 0)
        body = struct.pack("<QQQ", len(hdr), len(hdr), mapped_size) + hdr
        body += b"\0" * (-len(body) % 8)
        os.write(self.fd, struct.pack("<IIQ", 4, 16 + len(body), now()) + body)

    def load(self, addr, code, name):
        nb = name.encode() + b"\0"
        head = struct.pack("<IIQIIQQQQ", 0, 16 + 40 + len(nb) + len(code), now(), PID,
                           threading.get_native_id(), addr, addr, len(code), self.index)
        self.index += 1
        os.write(self.fd, head + nb + code)

    def close(self):
        os.write(self.fd, struct.pack("<IIQ", 3, 16, now()))
        os.close(self.fd)


def loop_code(iters, fill):
    """mov ecx, iters; 1: dec ecx; jnz 1b; ret -- then `fill` bytes up to 0x80."""
    b = b"\xb9" + struct.pack("<I", iters) + b"\xff\xc9\x75\xfc\xc3"
    return b + fill * (0x80 - len(b))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("scenario", choices=["plain", "reuse", "tail"])
    ap.add_argument("dir")
    ap.add_argument("--name", choices=["pid", "bun"], default="pid")
    ap.add_argument("--iters", type=int, default=150_000_000)
    a = ap.parse_args()
    base_name = f"jit-{PID}.dump" if a.name == "pid" else f"jit-{threading.get_native_id()}-{PID}.dump"
    path = os.path.join(a.dir, base_name)
    d = Dump(path)
    mem = mmap.mmap(-1, 1 << 16, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)
    base = ctypes.addressof(ctypes.c_char.from_buffer(mem))

    def put(off, code):
        mem[off:off + len(code)] = code
        return base + off

    e = put(0x1000, loop_code(a.iters, b"\x90"))  # nop padding
    d.load(e, loop_code(a.iters, b"\x90"), "E_hot_loop")
    run_e = ctypes.CFUNCTYPE(None)(e)
    run_e()
    if a.scenario == "reuse":
        f_code = loop_code(a.iters, b"\xcc")  # other bytes: int3 padding
        put(0x1000, f_code)
        d.load(e, f_code, "F_reused_address")
        run_e()
    elif a.scenario == "tail":
        l_code = b"\xc3" * 0x20
        l_addr = put(0x1000 - 0x20, l_code)
        d.unwinding_info(0x60)  # perf maps ALIGN8(0x20) + 0x60 bytes: 0x60 into E
        d.load(l_addr, l_code, "L_below")
        run_e()
    else:
        f_code = loop_code(a.iters, b"\xcc")
        f = put(0x2000, f_code)
        d.load(f, f_code, "F_elsewhere")
        ctypes.CFUNCTYPE(None)(f)()
    d.close()
    print(path)


if __name__ == "__main__":
    main()
