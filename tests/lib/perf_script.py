# SPDX-License-Identifier: MIT
"""Reads `perf script` text (perf 6.1), sample by sample, for the tests.

perf script has no field separator, so the layout is read from what perf
itself keys on, never from column widths:
  - a call-chain frame is a line that starts with a TAB (perf prints each
    frame as "\\t%16lx sym (dso)"); every other non-blank line starts a
    sample (its header: comm, pid/tid, time, and ip sym dso when the
    sample has no call chain);
  - the time is "SEC.FRAC:", padded on the left to 5 digits (" 8528.471249:"
    on a machine up for fewer than 10,000 s), 6 or 9 (--ns) digits after the
    point;
  - pid/tid is "PID/TID", padded to 5 digits on the left and right; comm
    may hold spaces and is padded to 16 only when there is no call chain;
  - the dso is the last " (...)" of a frame; a symbol may hold spaces.
"""
import re

_TIME = re.compile(r"(?:^|\s)(\d+)\.(\d+):(?=\s|$)")
_PID = re.compile(r"(?:^|\s)(\d+)/(\d+)\s+$")
_FRAME = re.compile(r"^\s*([0-9a-f]+)\s+(.*?)\s*$")


def split_frame(text, has_dso):
    """'7f12 sym+0x4 (/a b/c.so)' -> (ip, sym, dso); dso '' when absent."""
    m = _FRAME.match(text)
    if not m:
        return None
    ip, rest = int(m[1], 16), m[2]
    if has_dso and rest.endswith(")"):
        cut = rest.rfind(" (")
        if cut >= 0:
            return ip, rest[:cut].strip(), rest[cut + 2:-1]
        if rest.startswith("("):  # no symbol field printed
            return ip, "", rest[1:-1]
    return ip, rest, ""


class Sample:
    __slots__ = ("line", "time_ns", "comm", "pid", "tid", "frames")

    def __init__(self, line, has_dso):
        self.line = line
        self.time_ns = self.comm = self.pid = self.tid = None
        self.frames = []  # (ip, sym, dso), innermost first
        before = line
        m = _TIME.search(line)
        if m:
            self.time_ns = int(m[1]) * 10**9 + int((m[2] + "000000000")[:9])
            before, after = line[:m.start()], line[m.end():]
            f = split_frame(after, has_dso)  # a sample without a call chain
            if f:
                self.frames.append(f)
        p = _PID.search(before + " ")
        if p:
            self.pid, self.tid = int(p[1]), int(p[2])
            self.comm = before[:p.start()].strip() or None


def samples(lines, has_dso=True):
    """Yields a Sample per sample of perf script's output (an iterable of lines)."""
    cur = None
    for raw in lines:
        line = raw.rstrip("\n")
        if not line.strip():
            if cur is not None:
                yield cur
            cur = None
        elif line.startswith("\t"):
            f = split_frame(line, has_dso)
            if cur is not None and f:
                cur.frames.append(f)
        else:
            if cur is not None:
                yield cur
            cur = Sample(line, has_dso)
    if cur is not None:
        yield cur
