# SPDX-License-Identifier: MIT
"""python3 -m perftramp [--outputs LIST] [--jitdump-dir DIR] [--signal SIG] script.py [args]
python3 -m perftramp [--outputs LIST] -m module [args]

Runs a script with perftramp enabled (CPython 3.11, 3.12, 3.13), as
`python -X perf` (3.12+) and `python -X perf_jit` (3.13+) do with CPython's
own trampoline; refuses while that one is active.
LIST is a comma list of perfmap, jitdump, unwind, gdb, all; the default
is $PERFTRAMP when set, else jitdump,perfmap.
SIG (or $PERFTRAMP_SIGNAL): USR2, SIGUSR2 or a number; the outputs start
off and `kill -USR2 <pid>` toggles them (then `perf record -p <pid>`).
"""
import importlib.machinery
import os
import runpy
import signal
import sys
import types

from . import enable


def main():
    args = sys.argv[1:]
    outputs = os.environ.get("PERFTRAMP") or "jitdump,perfmap"
    jitdump_dir = None
    signame = os.environ.get("PERFTRAMP_SIGNAL") or ""
    while args and args[0].startswith("--"):
        opt = args.pop(0)
        if opt == "--":
            break
        name, eq, value = opt.partition("=")
        if name in ("--outputs", "--jitdump-dir", "--signal") and not eq:
            if not args:
                sys.exit("perftramp: %s needs a value" % name)
            value = args.pop(0)
        if name == "--outputs":
            outputs = value
        elif name == "--jitdump-dir":
            jitdump_dir = value
        elif name == "--signal":
            signame = value
        else:
            sys.exit("perftramp: unknown option %s\n%s" % (opt, __doc__))
    if not args:
        sys.exit(__doc__)
    signo = signal_number(signame)
    try:
        enable(outputs=outputs, jitdump_dir=jitdump_dir, signal=signo)
    except (RuntimeError, ValueError, OSError) as e:
        # e.g. python -X perf -m perftramp: CPython's own trampoline is active
        sys.exit("perftramp: %s" % e)
    if args[0] == "-m":
        if len(args) < 2:
            sys.exit("perftramp: -m needs a module name")
        sys.argv = args[1:]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    else:
        sys.argv = args
        run_script(args[0])


def signal_number(name):
    """USR2, SIGUSR2 or a number -> the signal's number; "" -> 0."""
    if not name:
        return 0
    if name.isdigit():
        return int(name)
    try:
        return int(signal.Signals[name if name.startswith("SIG") else "SIG" + name])
    except KeyError:
        sys.exit("perftramp: %s is not a signal (USR2, SIGUSR2 or a number)" % name)


def run_script(path):
    """Runs PATH as `python PATH` does: as module __main__, sys.argv[0] as
    given, sys.path[0] its directory, its code named by its absolute path
    (3.9+), so the py::<qualname>:<filename> names match CPython's.  A
    plain file is compiled and run here: runpy.run_path would import
    pkgutil (and with it typing, functools, collections, ...), which the
    script did not ask for, each of their functions a trampoline more.
    Directories and zip files with a __main__.py go to runpy."""
    script = os.path.abspath(path)
    source = None
    if os.path.isfile(script):
        with open(script, "rb") as f:
            source = f.read()
    # a zip archive ends with its end-of-central-directory record (PK\5\6)
    if source is None or b"PK\x05\x06" in source[-65557:]:
        sys.path[0] = script
        runpy.run_path(script, run_name="__main__")
        return
    sys.path[0] = os.path.dirname(script)
    code = compile(source, script, "exec")  # bytes: the coding cookie is honoured
    module = types.ModuleType("__main__")
    module.__file__ = script
    module.__cached__ = None
    module.__loader__ = importlib.machinery.SourceFileLoader("__main__", script)
    sys.modules["__main__"] = module
    exec(code, module.__dict__)

if __name__ == "__main__":
    main()
