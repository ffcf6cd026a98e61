#!/bin/sh
# SPDX-License-Identifier: MIT
# Real perf and gdb in an emulated 32-bit Arm Debian machine (armhf): tests/guest/perf_guest.sh.
exec "${PT_SRCDIR:-.}/tests/guest/perf_guest.sh" arm
