# SPDX-License-Identifier: MIT
# A jitdump reader written apart from perftramp's C one (src/read/), for
# tests/python/python_jitdump.sh: checks what perf needs from a jit-<pid>.dump
# written for Python code, record by record.
#
#   python_jitdump.py DUMP [--pid PID] [--names N1,N2,...] [--strict] [--closed]
#
# Checked for every producer (perftramp, and CPython 3.13's -X perf_jit as
# a second producer): the header; records back to back up to the end of the
# file; an UNWINDING_INFO record before each LOAD (perf applies it to the
# next LOAD); its .eh_frame_hdr of 20 bytes; a CIE with augmentation "zR"
# and FDE pointers pcrel|sdata4; the FDE's initial_location pointing at the
# first code byte and its address_range inside the code, where perf puts
# them; and --names: a LOAD named like each of them.  --strict (perftramp's
# own dumps) adds: the ELF machine of this host, the LOAD's vma equal to its
# code address, distinct code bytes in every LOAD (perf derives build-ids
# from them) and monotonic timestamps; --closed: the CLOSE record at the end
# (a process that ends with os._exit() writes none).
#
# Layouts (facts; Linux tools/perf/util/jitdump.h and genelf.c, DWARF 4
# section 6.4.1, LSB 5.0 "Exception Frames"):
#   header  u32 magic 0x4A695444, u32 version 1, u32 total_size 40,
#           u32 elf_mach, u32 pad, u32 pid, u64 timestamp, u64 flags
#   record  u32 id, u32 total_size, u64 timestamp, then
#           LOAD(0): u32 pid, u32 tid, u64 vma, u64 code_addr, u64 code_size,
#                    u64 code_index, name NUL, code (no padding after it)
#           UNWINDING_INFO(4): u64 unwinding_size, u64 eh_frame_hdr_size,
#                    u64 mapped_size, .eh_frame then .eh_frame_hdr, padded to 8
#   perf writes the code at .text, then .eh_frame at ALIGN8(code_size) from
#   the code's start, then .eh_frame_hdr: pc-relative pointers resolve
#   against those offsets.
import platform
import struct
import sys

ELF_MACHINE = {"x86_64": 62, "aarch64": 183, "riscv64": 243, "ppc64le": 21, "s390x": 22}
ids = {0: "LOAD", 1: "MOVE", 2: "DEBUG_INFO", 3: "CLOSE", 4: "UNWINDING_INFO"}
failures = []


def check(cond, what):
    if not cond:
        failures.append(what)
    return cond


def uleb(b, off):
    v = shift = 0
    while True:
        byte = b[off]
        off += 1
        v |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return v, off


def sleb(b, off):
    v = shift = 0
    while True:
        byte = b[off]
        off += 1
        v |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            if byte & 0x40:
                v -= 1 << shift
            return v, off


def check_unwind(where, data, eh_size, hdr_size, code_size):
    """The .eh_frame and .eh_frame_hdr of one LOAD, placed as perf places them."""
    eh, hdr = data[:eh_size], data[eh_size:eh_size + hdr_size]
    eh_start = (code_size + 7) & ~7  # .eh_frame's offset from the code's first byte
    # CIE
    length, cie_id = struct.unpack_from("<II", eh, 0)
    if not check(length not in (0, 0xFFFFFFFF) and cie_id == 0, "%s: no CIE at the start of .eh_frame" % where):
        return
    version = eh[8]
    aug_end = eh.index(b"\0", 9)
    aug = eh[9:aug_end].decode("ascii", "replace")
    check(version in (1, 3), "%s: CIE version %d" % (where, version))
    if not check(aug == "zR", "%s: CIE augmentation %r, not 'zR'" % (where, aug)):
        return
    off = aug_end + 1
    _, off = uleb(eh, off)  # code alignment
    _, off = sleb(eh, off)  # data alignment
    if version == 1:
        off += 1  # return-address column: one byte in version 1
    else:
        _, off = uleb(eh, off)
    _, off = uleb(eh, off)  # augmentation data length
    fde_enc = eh[off]
    check(fde_enc == 0x1B, "%s: FDE pointer encoding 0x%02x, not pcrel|sdata4 (0x1b)" % (where, fde_enc))
    # FDE right after the CIE
    fde = 4 + length
    flen, cie_ptr = struct.unpack_from("<Ii", eh, fde)
    if not check(flen != 0 and cie_ptr == fde + 4, "%s: the FDE does not follow its CIE" % where):
        return
    pc_field = fde + 8
    pc_begin, pc_range = struct.unpack_from("<iI", eh, pc_field)
    # pcrel: relative to the field's own address, eh_start + pc_field from the code
    check(eh_start + pc_field + pc_begin == 0,
          "%s: FDE initial_location points %+d bytes from the code's first byte" % (where, eh_start + pc_field + pc_begin))
    check(0 < pc_range <= code_size, "%s: FDE address_range %d, code_size %d" % (where, pc_range, code_size))
    # .eh_frame_hdr
    if not check(hdr_size == 20 and len(hdr) == 20, "%s: .eh_frame_hdr is %d bytes, not 20" % (where, hdr_size)):
        return
    ver, ptr_enc, count_enc, table_enc, eh_ptr, count, loc, fde_at = struct.unpack_from("<BBBBiIii", hdr, 0)
    check((ver, ptr_enc, count_enc, table_enc) == (1, 0x1B, 0x03, 0x3B),
          "%s: .eh_frame_hdr version/encodings %d/0x%02x/0x%02x/0x%02x" % (where, ver, ptr_enc, count_enc, table_enc))
    check(eh_ptr == -(eh_size + 4), "%s: eh_frame_ptr %d, .eh_frame is %d bytes" % (where, eh_ptr, eh_size))
    check(count == 1, "%s: %d FDEs in the table" % (where, count))
    hdr_start = eh_start + eh_size  # datarel: relative to the header's start
    check(hdr_start + loc == 0, "%s: table initial_location %+d from the code" % (where, hdr_start + loc))
    check(eh_size + fde_at == fde, "%s: table FDE offset points %d, the FDE is at %d" % (where, eh_size + fde_at, fde))


def main():
    args = sys.argv[1:]
    path = args.pop(0)
    pid = names = None
    strict = closed = False
    while args:
        a = args.pop(0)
        if a == "--pid":
            pid = int(args.pop(0))
        elif a == "--names":
            names = args.pop(0).split(",")
        elif a == "--strict":
            strict = True
        elif a == "--closed":
            closed = True
    with open(path, "rb") as f:
        b = f.read()
    magic, version, hsize, mach, _, hpid, hts, flags = struct.unpack_from("<IIIIIIQQ", b, 0)
    check(magic == 0x4A695444, "magic 0x%08x" % magic)
    check(version == 1 and hsize == 40, "header version %d, size %d" % (version, hsize))
    check(flags == 0, "header flags 0x%x" % flags)
    if pid is not None:
        check(hpid == pid, "header pid %d, expected %d" % (hpid, pid))
    if strict:
        check(mach == ELF_MACHINE.get(platform.machine(), -1), "ELF machine %d on %s" % (mach, platform.machine()))
    off = hsize
    counts = {}
    pending_unwind = None
    loads = []
    last_ts = hts
    codes = {}
    reserved = 0
    while off < len(b):
        if len(b) - off <= 128 * 1024 and not b[off:].strip(b"\0"):
            # zeros to the end: the room a writer that maps its dump's end
            # left (a process that ended without closing it); perf stops at
            # the first (total_size 0) and loses nothing
            reserved = len(b) - off
            print("reserved: %d zero bytes after the last record" % reserved)
            break
        if not check(off + 16 <= len(b), "a record header cut at offset %d" % off):
            break
        rid, size, ts = struct.unpack_from("<IIQ", b, off)
        if not check(size >= 16 and off + size <= len(b), "record at %d: size %d past the end" % (off, size)):
            break
        kind = ids.get(rid, "unknown %d" % rid)
        counts[kind] = counts.get(kind, 0) + 1
        if strict:
            check(ts >= last_ts, "record at %d: timestamp goes back" % off)
        last_ts = ts
        body = b[off + 16:off + size]
        if kind == "UNWINDING_INFO":
            usize, hdr_size, mapped = struct.unpack_from("<QQQ", body, 0)
            check(mapped > 0, "UNWINDING_INFO at %d: mapped_size 0 (perf needs it for --call-graph dwarf)" % off)
            check(24 + usize <= len(body) < 24 + usize + 8,
                  "UNWINDING_INFO at %d: %d data bytes for unwinding_size %d" % (off, len(body) - 24, usize))
            pending_unwind = (off, body[24:24 + usize], usize - hdr_size, hdr_size)
        elif kind == "LOAD":
            lpid, tid, vma, addr, csize, index = struct.unpack_from("<IIQQQQ", body, 0)
            end = body.index(b"\0", 40)
            name = body[40:end].decode("utf-8", "replace")
            code = body[end + 1:]
            check(len(code) == csize, "LOAD %r: %d code bytes after the name, code_size %d" % (name, len(code), csize))
            if strict:
                check(vma == addr, "LOAD %r: vma 0x%x, code_addr 0x%x" % (name, vma, addr))
                check(code not in codes, "LOAD %r: same code bytes as %r" % (name, codes.get(code)))
                codes.setdefault(code, name)
            if check(pending_unwind is not None, "LOAD %r at %d: no UNWINDING_INFO before it" % (name, off)):
                uoff, data, eh_size, hdr_size = pending_unwind
                check_unwind("LOAD %r" % name, data, eh_size, hdr_size, csize)
            pending_unwind = None
            loads.append((name, index, addr, csize))
        elif kind == "CLOSE":
            check(off + size == len(b), "CLOSE at %d is not the last record" % off)
        off += size
    check(off + reserved == len(b), "%d bytes after the last record" % (len(b) - off))
    indexes = [i for _, i, _, _ in loads]
    check(len(set(indexes)) == len(indexes), "a code_index used twice (perf inject would overwrite a .so)")
    if closed:
        check(counts.get("CLOSE", 0) == 1, "no CLOSE record at the end")
    for n in names or []:
        check(any(name == n for name, _, _, _ in loads), "no LOAD named %s" % n)
    print("%s: %s; %d LOADs, each after its UNWINDING_INFO; code %s bytes" % (
        path, ", ".join("%s %d" % kv for kv in sorted(counts.items())), len(loads),
        "..".join(str(s) for s in sorted({c for _, _, _, c in loads})[::max(1, len({c for _, _, _, c in loads}) - 1)])))
    for f in failures[:20]:
        print("FAIL:", f)
    if len(failures) > 20:
        print("FAIL: ... %d more" % (len(failures) - 20))
    sys.exit(1 if failures else 0)


main()
