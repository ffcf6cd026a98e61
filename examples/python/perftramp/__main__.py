# SPDX-License-Identifier: MIT
"""python3 -m perftramp [--outputs LIST] [--jitdump-dir DIR] script.py [args]
python3 -m perftramp [--outputs LIST] -m module [args]

Runs a script with perftramp enabled (CPython 3.11, 3.12, 3.13), as
`python -X perf` (3.12+) and `python -X perf_jit` (3.13+) do with CPython's
own trampoline; refuses while that one is active.
LIST is a comma list of perfmap, jitdump, unwind, gdb, all; the default
is $PERFTRAMP when set, else jitdump,perfmap.
"""
import os
import runpy
import sys

from . import enable


def main():
    args = sys.argv[1:]
    outputs = os.environ.get("PERFTRAMP") or "jitdump,perfmap"
    jitdump_dir = None
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--":
            break
        name, eq, value = opt.partition("=")
        if name in ("--outputs", "--jitdump-dir") and not eq:
            if not args:
                sys.exit("perftramp: %s needs a value" % name)
            value = args.pop(0)
        if name == "--outputs":
            outputs = value
        elif name == "--jitdump-dir":
            jitdump_dir = value
        else:
            sys.exit("perftramp: unknown option %s\n%s" % (opt, __doc__))
    if not args:
        sys.exit(__doc__)
    try:
        enable(outputs=outputs, jitdump_dir=jitdump_dir)
    except (RuntimeError, ValueError, OSError) as e:
        # e.g. python -X perf -m perftramp: CPython's own trampoline is active
        sys.exit("perftramp: %s" % e)
    if args[0] == "-m":
        if len(args) < 2:
            sys.exit("perftramp: -m needs a module name")
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        # As `python script.py` does (3.9+): sys.argv[0] as given, the code's
        # file name absolute -- the py::<qualname>:<filename> names match.
        script = os.path.abspath(args[0])
        sys.argv = args
        sys.path[0] = os.path.dirname(script)
        runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
