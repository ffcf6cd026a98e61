#!/bin/sh
# SPDX-License-Identifier: MIT
# Real perf and gdb on i686 programs: tests/guest/perf_guest.sh, in an
# emulated x86-64 Debian machine whose kernel runs 32-bit programs (tools/guest).
exec "${PT_SRCDIR:-.}/tests/guest/perf_guest.sh" i686
