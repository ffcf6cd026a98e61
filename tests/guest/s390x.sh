#!/bin/sh
# SPDX-License-Identifier: MIT
# Real perf and gdb in an emulated s390x Debian machine: tests/guest/perf_guest.sh.
exec "${PT_SRCDIR:-.}/tests/guest/perf_guest.sh" s390x
