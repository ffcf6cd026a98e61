# SPDX-License-Identifier: MIT
# Reads `perf script -F time,ip,sym` of tests/python_stack_workload.py and
# counts, among the samples taken inside its window, those whose stack
# names a py:: frame of the script and those whose py:: frames of the
# script read as a complete chain down to the module's code:
#     work, down x9, steps, Walker.walk, main, <module>   (innermost first)
# or a tail of it.  Frames of other files (runpy, perftramp's __main__)
# may sit below <module> and are ignored.
#   python_stacks.py SCRIPT_OUTPUT SCRIPT_PATH START_NS END_NS
# Prints: samples N named N complete N complete_pct X
import sys

CHAIN = ["work"] + ["down"] * 9 + ["steps", "Walker.walk", "main", "<module>"]


def samples(path):
    """(time in ns, [symbols innermost first]) per sample."""
    t, syms = None, []
    with open(path, errors="replace") as f:
        for line in f:
            if not line.strip():
                if t is not None:
                    yield t, syms
                t, syms = None, []
            elif not line[0].isspace():
                sec, _, frac = line.strip().rstrip(":").partition(".")
                t = int(sec) * 10**9 + int((frac + "000000000")[:9])
            else:
                parts = line.split(None, 1)
                syms.append(parts[1].strip() if len(parts) == 2 else "")
    if t is not None:
        yield t, syms


def main():
    out, script, start, end = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    suffix = ":" + script
    n = named = complete = 0
    for t, syms in samples(out):
        if not start <= t <= end:
            continue
        n += 1
        ours = [s[4:-len(suffix)] for s in syms if s.startswith("py::") and s.endswith(suffix)]
        if not ours:
            continue
        named += 1
        if ours == CHAIN[len(CHAIN) - len(ours):]:
            complete += 1
    print("samples %d named %d complete %d complete_pct %.1f" % (n, named, complete, 100.0 * complete / n if n else 0))


main()
