#!/bin/sh
# SPDX-License-Identifier: MIT
# Real perf and gdb in an emulated aarch64 Debian machine: tests/guest/perf_guest.sh.
exec "${PT_SRCDIR:-.}/tests/guest/perf_guest.sh" aarch64
