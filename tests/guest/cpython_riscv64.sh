#!/bin/sh
# SPDX-License-Identifier: MIT
# CPython's test_perf_profiler, stock and patched, in an emulated riscv64 Debian machine: tests/guest/cpython_guest.sh.
exec "${PT_SRCDIR:-.}/tests/guest/cpython_guest.sh" riscv64
