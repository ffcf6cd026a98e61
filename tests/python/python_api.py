# SPDX-License-Identifier: MIT
# Behaviour of the perftramp module (CPython 3.11, 3.12, 3.13) that
# tests/python/python_api.sh checks: refusal while another eval-frame hook or
# CPython's own trampoline is installed, enable/disable, outputs fixed per
# process, exceptions, generators, coroutines, threads and fork through
# trampolines.  Reads the perf map the module writes (/tmp/perf-<pid>.map)
# to see which trampolines exist.
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


def another_hook():
    """Another PEP 523 hook: CPython's test helper that records the name of
    every frame it evaluates (in every 3.11-3.13 build with its tests)."""
    try:
        from _testinternalcapi import set_eval_frame_default, set_eval_frame_record
    except ImportError:
        return None
    return set_eval_frame_record, set_eval_frame_default


def recorded():
    return "recorded"


def refusals():
    hook = another_hook()
    if hook is None:
        print("note: no _testinternalcapi here: the refusal of a foreign PEP 523 hook is not checked")
    else:
        install, remove = hook
        calls = []
        install(calls)
        try:
            perftramp.enable(outputs="perfmap")
            check(False, "enable() refuses while another PEP 523 hook is installed")
        except RuntimeError as e:
            check("another PEP 523" in str(e), "enable() refuses while another PEP 523 hook is installed: %s" % e)
        check(not perftramp.is_enabled(), "the refused enable() left perftramp disabled")
        recorded()
        check("recorded" in calls, "the refused enable() left the other hook installed")
        check(perf_map(os.getpid()) == "", "the refused enable() opened nothing (no perf map)")
        remove()
    if sys.version_info >= (3, 12):
        sys.activate_stack_trampoline("perf")
        try:
            perftramp.enable(outputs="perfmap")
            check(False, "enable() refuses while CPython's own trampoline is active")
        except RuntimeError as e:
            check("CPython's own perf trampoline" in str(e),
                  "enable() refuses while CPython's own trampoline is active: %s" % e)
        check(sys.is_stack_trampoline_active() and not perftramp.is_enabled(),
              "the refused enable() left CPython's trampoline active")
        sys.deactivate_stack_trampoline()


def after_enable_refusals():
    """CPython's side of the same rule, and disable() with a hook on top of ours."""
    if sys.version_info >= (3, 12):
        try:
            sys.activate_stack_trampoline("perf")
            check(False, "CPython refuses its trampoline while perftramp is enabled")
        except RuntimeError as e:
            check(perftramp.is_enabled() and not sys.is_stack_trampoline_active(),
                  "CPython refuses its trampoline while perftramp is enabled: %s" % e)
    hook = another_hook()
    if hook is not None:
        install, remove = hook
        calls = []
        install(calls)
        try:
            perftramp.disable()
            check(False, "disable() refuses to remove a hook installed over perftramp's")
        except RuntimeError as e:
            recorded()
            check("recorded" in calls, "disable() refuses to remove a hook installed over perftramp's: %s" % e)
        remove()
        perftramp.disable()  # the other hook put the default back: nothing left to undo
        check(not perftramp.is_enabled(), "disable() after the other hook removed itself")
        perftramp.enable(outputs="perfmap")


def main():
    check(not perftramp.is_enabled(), "disabled before enable()")
    refusals()
    perftramp.enable(outputs="perfmap")
    check(perftramp.is_enabled(), "enabled after enable()")
    perftramp.enable(outputs="perfmap")
    check(perftramp.is_enabled(), "enable() twice with the same outputs is fine")
    after_enable_refusals()

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
    if sys.version_info >= (3, 12):
        # disable() put the default evaluator back: CPython's trampoline may start
        sys.activate_stack_trampoline("perf")
        check(sys.is_stack_trampoline_active(), "after disable(), CPython's own trampoline can start")
        sys.deactivate_stack_trampoline()

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
