# SPDX-License-Identifier: MIT
"""Compares the names perf gave samples with the code that really ran.

Usage: jitdump_samples.py RECORDS SCRIPT [CHECK_JSON]
  RECORDS     `perftramp check --records DUMP` output (the LOAD lines)
  SCRIPT      `perf script -F time,ip,sym,dso --ns` output after perf inject --jit
  CHECK_JSON  `perftramp check --json --all DUMP` output: mis-named samples
              inside the ranges its overlap.tail_on_code warnings name are
              counted apart (the check predicted them)

For every sample whose address lies in the code of a LOAD written before
the sample (the newest such LOAD, by time: what ran there), perf's answer
must be that LOAD's jitted-<pid>-<code_index>.so and its name.  With call
chains (perf script prints each frame on its own line), every frame is
judged the same way, at its sample's time.  perf script prints frames in a
.so as offsets in that file: those in a jitted-*.so are turned back into
run-time addresses (code_addr + offset - the .text offset, 0x80 or 0x40).  Prints
"key value" lines: samples, expected (samples in LOADed code), named
(as expected), misnamed, predicted (misnamed inside warned ranges), reused
(samples at addresses more than one LOAD covered), reused_named.
"""
import bisect
import json
import re
import sys

PAGE = 4096


def main():
    loads = []
    rec = re.compile(r'^\s*record 0x[0-9a-f]+ LOAD\s+size \d+\s+ts (\d+) code_index (\d+) code_addr 0x([0-9a-f]+) '
                     r'code_size (\d+) name "(.*)"$')
    for line in open(sys.argv[1], errors="replace"):
        m = rec.match(line.rstrip("\n"))
        if m:
            ts, idx, addr, size, name = int(m[1]), int(m[2]), int(m[3], 16), int(m[4]), m[5]
            name = re.sub(r'\\x([0-9a-f]{2})', lambda x: chr(int(x[1], 16)), name)
            loads.append((ts, idx, addr, size, name))
    pages = {}
    for i, (ts, idx, addr, size, name) in enumerate(loads):
        for p in range(addr // PAGE, (addr + max(size, 1) - 1) // PAGE + 1):
            pages.setdefault(p, []).append(i)
    ranges = []
    if len(sys.argv) > 3:
        for f in json.load(open(sys.argv[3]))["files"]:
            for i in f.get("issues", []):
                if i["kind"] == "overlap.tail_on_code":
                    m = re.search(r"over \[0x([0-9a-f]+), 0x([0-9a-f]+)\)", i["message"])
                    if m:
                        ranges.append((int(m[1], 16), int(m[2], 16)))
    so = re.compile(r"jitted-\d+-(\d+)\.so")
    by_index = {idx: addr for ts, idx, addr, size, name in loads}
    c = dict(samples=0, expected=0, named=0, misnamed=0, predicted=0, reused=0, reused_named=0)
    shown = 0
    t = 0
    for line in open(sys.argv[2], errors="replace"):
        m = re.match(r"\s*(\d+)\.(\d+):\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)\s*$", line)
        if m:  # a sample: time ip sym (dso)
            t = int(m[1]) * 1000000000 + int(m[2].ljust(9, "0")[:9])
            ip, sym, dso = int(m[3], 16), m[4].strip(), m[5]
        else:
            m = re.match(r"\s*(\d+)\.(\d+):\s*$", line)
            if m:  # a sample whose frames follow
                t = int(m[1]) * 1000000000 + int(m[2].ljust(9, "0")[:9])
                continue
            m = re.match(r"\s+([0-9a-f]+)\s+(.*)\s+\((.*)\)\s*$", line)
            if not m or t == 0:
                continue
            ip, sym, dso = int(m[1], 16), m[2].strip(), m[3]
        c["samples"] += 1
        sym = re.sub(r"\+0x[0-9a-f]+$", "", sym)
        d = so.search(dso)
        if d and ip < 0x100000 and int(d[1]) in by_index:  # a file offset: back to the address
            ip = by_index[int(d[1])] + ip - (0x80 if ip >= 0x80 else 0x40)
        best, covering = None, 0
        for i in pages.get(ip // PAGE, ()):
            ts, idx, addr, size, name = loads[i]
            if addr <= ip < addr + size:
                covering += 1
                if ts <= t and (best is None or ts >= loads[best][0]):
                    best = i
        if best is None:
            continue
        c["expected"] += 1
        ts, idx, addr, size, name = loads[best]
        ok = d is not None and int(d[1]) == idx and sym == name
        c["named" if ok else "misnamed"] += 1
        if not ok and any(lo <= ip < hi for lo, hi in ranges):
            c["predicted"] += 1
        if covering > 1:
            c["reused"] += 1
            c["reused_named"] += ok
        if not ok and shown < 5:
            shown += 1
            print(f"# misnamed: ip 0x{ip:x} at {t}: perf says {sym} ({dso}), ran {name} (code_index {idx})")
    for k, v in c.items():
        print(k, v)


if __name__ == "__main__":
    main()
