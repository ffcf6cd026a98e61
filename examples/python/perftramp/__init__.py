# SPDX-License-Identifier: MIT
"""perf support for CPython 3.11, 3.12 and 3.13, through perftramp (PEP 523).

    import perftramp
    perftramp.enable(outputs="jitdump,perfmap")   # py::<qualname>:<filename> frames
    ...
    perftramp.disable()
    perftramp.is_enabled()
    perftramp.set_outputs("perfmap")   # switch a running process's outputs
    perftramp.outputs()                # "perfmap"
    perftramp.enable(signal=signal.SIGUSR2)  # outputs off until kill -USR2 <pid>

or run a whole script:  python3 -m perftramp script.py [args]

enable() raises RuntimeError, changing nothing, while CPython's own perf
trampoline (-X perf, -X perf_jit, sys.activate_stack_trampoline) or another
PEP 523 eval-frame hook is installed.
"""
from ._perftramp import disable, enable, is_enabled, outputs, set_outputs

__all__ = ["enable", "disable", "is_enabled", "set_outputs", "outputs"]
