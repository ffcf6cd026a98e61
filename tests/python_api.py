# SPDX-License-Identifier: MIT
# Behaviour of the perftramp module (CPython 3.11) that tests/python_api.sh
# checks: enable/disable, outputs fixed per process, exceptions, generators,
# coroutines, threads and fork through trampolines.  Reads the perf map the
# module writes (/tmp/perf-<pid>.map) to see which trampolines exist.
import asyncio
import os
import sys
import threading
import traceback

import perftramp

HERE = os.path.abspath(__file__)
maps = []


def perf_map(pid):
    path = "/tmp/perf-%d.map" % pid
    if path not in maps:
        maps.append(path)
    try:
        with open(path) as f:
            return f.read()
    except FileNotFoundError:
        return ""


def check(cond, what):
    if not cond:
        print("FAIL:", what)
        sys.exit(1)
    print("ok:", what)


def fib(n):
    return n if n < 2 else fib(n - 1) + fib(n - 2)


def raiser(n):
    if n == 0:
        raise ValueError("deep")
    return raiser(n - 1)


def gen():
    try:
        x = yield 1
        yield x * 2
    except KeyError:
        yield "caught"


async def leaf(x):
    await asyncio.sleep(0)
    return x + 1


async def coro():
    return await leaf(1) + await leaf(2)


def main():
    check(not perftramp.is_enabled(), "disabled before enable()")
    perftramp.enable(outputs="perfmap")
    check(perftramp.is_enabled(), "enabled after enable()")
    perftramp.enable(outputs="perfmap")
    check(perftramp.is_enabled(), "enable() twice with the same outputs is fine")

    check(fib(18) == 2584, "recursion gives the right result")
    try:
        raiser(4)
    except ValueError as e:
        frames = [f.name for f in traceback.extract_tb(e.__traceback__)]
        check(frames.count("raiser") == 5, "exception crosses 5 trampolines with its traceback intact")
    g = gen()
    check(next(g) == 1 and g.send(5) == 10, "generator next/send through a trampoline")
    g = gen()
    next(g)
    check(g.throw(KeyError) == "caught", "generator throw() through a trampoline")
    g.close()
    check(asyncio.run(coro()) == 5, "asyncio coroutines through trampolines")
    results = []
    t = threading.Thread(target=lambda: results.append(fib(15)))
    t.start()
    t.join()
    check(results == [610], "a thread runs through trampolines")

    m = perf_map(os.getpid())
    # main() and the module were already running when enable() was called:
    # frames never change evaluator mid-flight, so they have no trampoline.
    check(("py::main:%s\n" % HERE) not in m, "a frame running before enable() keeps the default evaluator")
    for name in ("fib", "raiser", "gen", "coro", "leaf", "main.<locals>.<lambda>"):
        check(("py::%s:%s\n" % (name, HERE)) in m, "perf map names py::%s:<this file>" % name)

    try:
        perftramp.enable(outputs="jitdump")
        check(False, "changing outputs is refused")
    except ValueError as e:
        check("cannot change" in str(e), "changing outputs is refused: %s" % e)
    try:
        perftramp.enable(outputs="perfmap,bogus")
        check(False, "an unknown output is refused")
    except ValueError as e:
        check("bogus" in str(e), "an unknown output is refused: %s" % e)

    perftramp.disable()
    check(not perftramp.is_enabled(), "disabled after disable()")

    def after_disable():
        return 1

    after_disable()
    check("after_disable" not in perf_map(os.getpid()), "no trampoline is made while disabled")
    perftramp.disable()
    check(not perftramp.is_enabled(), "disable() twice is fine")

    perftramp.enable(outputs="perfmap")

    def after_enable():
        return 2

    check(after_enable() == 2, "a function runs after enable() again")
    check("py::main.<locals>.after_enable:" in perf_map(os.getpid()), "enable() again makes trampolines again")

    pid = os.fork()
    if pid == 0:
        def in_child():
            return fib(5)

        in_child()
        os._exit(0)
    _, status = os.waitpid(pid, 0)
    check(status == 0, "the child ran through inherited trampolines and exited cleanly")
    child = perf_map(pid)
    check("py::main.<locals>.in_child:" in child, "the child has its own perf map with its new trampolines")
    check(("py::fib:%s\n" % HERE) in child, "the child's perf map holds the inherited trampolines")
    check("in_child" not in perf_map(os.getpid()), "the parent's perf map does not see the child's trampolines")


try:
    main()
finally:
    for path in maps:
        try:
            os.unlink(path)
        except FileNotFoundError:
            pass
