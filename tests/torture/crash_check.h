/* SPDX-License-Identifier: MIT */
/* The crash torture's checks of what a killed producer left (each file
 * against the progress file: what must be there, what may be torn). */
#ifndef PERFTRAMP_CRASH_CHECK_H
#define PERFTRAMP_CRASH_CHECK_H

#include "crash_shared.h"

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What one trial left, counted. */
struct crash_files {
    /* jitdump */
    bool dump_exists;
    size_t loads;            /* complete LOADs */
    size_t loads_lost;       /* wraps and publishes that returned without a complete LOAD */
    size_t uncommitted;      /* bytes of an uncommitted last group (0: none) */
    uint64_t uncommitted_at; /* its offset */
    /* perf map */
    size_t lines, blank, lines_lost, torn_lines;
    /* ELF arenas */
    size_t arenas, arenas_incomplete, symbols, symbols_lost;
};

/* Checks the jitdump, the perf map and (with_elf) the ELF arenas that pid
 * left in dir (the map in /tmp) against what `p` says returned.  cli is
 * the perftramp command, run on each file, judging for perf_version (the
 * installed perf's X.Y, asked once, not at each run).  0, or -1 with the first
 * failure in why. */
int crash_check_files(const char *dir, pid_t pid, const struct crash_progress *p, bool with_elf, const char *cli,
                      const char *perf_version, struct crash_files *out, char *why, size_t why_len);

/* Runs argv (NULL-terminated) with stdout and stderr in `out` (NUL-
 * terminated, cut to out_len): its exit status (-1: not run or killed). */
int crash_run(char *const argv[], char *out, size_t out_len);

#endif
