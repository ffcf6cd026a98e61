/* SPDX-License-Identifier: MIT */
/* Small helpers shared by the perf-output Check suites. */
#ifndef PERFTRAMP_PERF_TEST_UTIL_H
#define PERFTRAMP_PERF_TEST_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* Reads a whole file, a NUL after its *len bytes; NULL (errno) when it
 * cannot.  Caller frees. */
uint8_t *ptt_read_file(const char *path, size_t *len);
/* mkdtemp under $TMPDIR or /tmp; returns a static-lifetime copy. */
char *ptt_tempdir(void);
/* rm -r of a flat directory. */
void ptt_rmdir(const char *dir);
/* true when /proc/self/maps has a mapping whose path ends with `suffix`;
 * perms: an executable one's, if any, else the first's. */
int ptt_mapped(const char *suffix, char perms[5]);
/* The fd this process has open on `path`, or -1. */
int ptt_fd_of(const char *path);

#endif
