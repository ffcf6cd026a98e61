/* SPDX-License-Identifier: MIT */
/* Opens the files perf reads (perf map, jitdump) in world-writable
 * directories without being tricked: never through a symlink, never into
 * a FIFO, device or another user's file. */
#ifndef PERFTRAMP_OUTFILE_H
#define PERFTRAMP_OUTFILE_H

#include <stdbool.h>

/* Opens `path` with `flags` | O_CREAT|O_NOFOLLOW|O_CLOEXEC|O_NONBLOCK,
 * mode 0600, then checks the opened file (fstat) BEFORE anything is
 * written or truncated: it must be a regular file owned by our effective
 * uid.  Returns the fd (O_NONBLOCK cleared), or -1 with errno:
 *   ELOOP  the path is a symlink          (*refused = true)
 *   ENXIO  a FIFO/socket with no reader   (*refused = true)
 *   EISDIR a directory                    (*refused = true)
 *   EPERM  not a regular file, owned by another user, or with more
 *          than one link (a planted hard link)   (*refused = true)
 *   any other errno of open/fstat         (*refused = false)
 * Truncation, if wanted, is the caller's job, after this check. */
int pt_outfile_open(const char *path, int flags, bool *refused);

#endif
