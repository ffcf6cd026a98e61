/* SPDX-License-Identifier: MIT */
/* When a process started: a file last changed before the process that has
 * its pid now was started was left by an earlier process with that pid
 * (pids are reused), so it is not the live one's. */
#ifndef PT_MEM_PROC_START_H
#define PT_MEM_PROC_START_H

#include <stdint.h>

/* The slack of that comparison: the start time is rounded down to a clock
 * tick (10 ms) and file times come from a coarse clock (a jiffy). */
#define PT_PROC_START_SLACK_NS 50000000

/* The CLOCK_REALTIME nanoseconds when the process of a /proc stat file
 * (`stat_path`, e.g. "/proc/self/stat") started, rounded down to a clock
 * tick; 0 when /proc cannot say. */
int64_t pt_proc_start_ns(const char *stat_path);

#endif
