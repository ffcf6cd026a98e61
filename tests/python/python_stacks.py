# SPDX-License-Identifier: MIT
# Reads `perf script -F time,ip,sym,dso` of tests/python/python_stack_workload.py and
# counts, among the samples taken inside its window, those whose stack
# names a py:: frame of the script and those whose py:: frames of the
# script read as a complete chain down to the module's code:
#     work, down x9, steps, Walker.walk, main, <module>   (innermost first)
# or a tail of it.  Frames of other files (runpy, perftramp's __main__)
# may sit below <module> and are ignored.  A sample whose walk never left
# its first frame, in the dynamic loader, is counted apart as `stuck` and
# left out of the share: the unwinder stopped before any trampoline, so it
# says nothing about them (seen: perf does not always step out of ld.so's
# __tls_get_addr, which CPython 3.12 calls for its thread state in ~8% of
# the samples).
#   python_stacks.py SCRIPT_OUTPUT SCRIPT_PATH START_NS END_NS [SHOW]
# Prints: samples N named N complete N stuck N complete_pct X (complete /
# (samples - stuck)), and on stderr the
# first SHOW (default 0) incomplete stacks, innermost frames first.
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "lib"))
import perf_script  # noqa: E402  (tests/lib)

CHAIN = ["work"] + ["down"] * 9 + ["steps", "Walker.walk", "main", "<module>"]


def samples(path):
    """(time in ns, [(symbol, dso) innermost first]) per sample."""
    with open(path, errors="replace") as f:
        for s in perf_script.samples(f):
            if s.time_ns is None:
                raise SystemExit("python_stacks.py: a sample with no time: %r" % s.line)
            yield s.time_ns, [(sym, dso) for _, sym, dso in s.frames]


def main():
    out, script, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    show = int(sys.argv[5]) if len(sys.argv) > 5 else 0
    suffix = ":" + script
    n = named = complete = stuck = 0
    for t, frames in samples(out):
        if not start <= t <= end:
            continue
        n += 1
        syms = [sym for sym, _ in frames]
        ours = [s[4:-len(suffix)] for s in syms if s.startswith("py::") and s.endswith(suffix)]
        if len(frames) == 1 and "/ld-linux" in frames[0][1]:
            stuck += 1
            continue
        if ours:
            named += 1
        if ours and ours == CHAIN[len(CHAIN) - len(ours):]:
            complete += 1
        elif show > 0:
            show -= 1
            print("incomplete sample at %d ns, innermost first: %s" % (t, " < ".join(syms[:14]) or "(no frames)"),
                  file=sys.stderr)
    walked = n - stuck
    print("samples %d named %d complete %d stuck %d complete_pct %.1f"
          % (n, named, complete, stuck, 100.0 * complete / walked if walked else 0))


main()
