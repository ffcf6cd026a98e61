/* SPDX-License-Identifier: MIT */
/* Outputs layer: appending to a file through a shared mapping of its end
 * (the jitdump's writer, outputs/jitdump.c).
 *
 * A record copied into a MAP_SHARED page is in the file the moment the copy
 * ends: a process killed right after loses nothing, as with one write(2)
 * per record, and the copy costs no system call.  A process killed during
 * the copy leaves part of it: the caller orders its stores so that the
 * part never reads as a whole record (outputs/jitdump.c: the size last).  The window's bytes are
 * allocated before it is mapped (posix_fallocate), so a full disk shows as
 * ENOSPC there, never as SIGBUS on a copy.  The reserved bytes past the
 * last record read as zeros: a record prefix of total_size 0, where perf
 * stops reading (tools/perf/util/jitdump.c, jit_get_next_entry); the
 * release cuts them off. */
#ifndef PERFTRAMP_FILE_WINDOW_H
#define PERFTRAMP_FILE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct pt_file_window {
    uint8_t *map;  /* NULL: none mapped now */
    off_t off;     /* file offset of map[0], page-aligned */
    size_t len;    /* mapped and allocated bytes */
    bool off_for_good; /* a window could not be made: the caller writes */
};

/* Room for n bytes at file offset `end` (the end of its data) in the
 * window, moving it and allocating the next bytes first when they do not
 * fit: a pointer into the shared mapping, where the caller copies its
 * bytes (in the file once stored), or NULL when no window can be made
 * here (a file system without mappings or allocation, a full disk,
 * RLIMIT_FSIZE within reach).  Then the file is cut back to `end` and
 * the window stays off for good: the caller writes from here on, and
 * meets the real error, if any, exactly where the data would cross it. */
uint8_t *pt_file_window_room(struct pt_file_window *w, int fd, off_t end, size_t n);

/* Unmaps the window and cuts the file back to `end`: the reserved zeros go. */
void pt_file_window_release(struct pt_file_window *w, int fd, off_t end);

/* Unmaps only: a forked child letting go of its parent's file. */
void pt_file_window_drop(struct pt_file_window *w);

#endif
