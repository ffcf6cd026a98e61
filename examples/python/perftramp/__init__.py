# SPDX-License-Identifier: MIT
"""perf support for CPython 3.11, through perftramp (PEP 523).

    import perftramp
    perftramp.enable(outputs="jitdump,perfmap")   # py::<qualname>:<filename> frames
    ...
    perftramp.disable()
    perftramp.is_enabled()

or run a whole script:  python3 -m perftramp script.py [args]
"""
from ._perftramp import disable, enable, is_enabled

__all__ = ["enable", "disable", "is_enabled"]
