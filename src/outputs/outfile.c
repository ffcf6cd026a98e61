/* SPDX-License-Identifier: MIT */
/* Outputs layer: opening an output's file safely (no symlink, FIFO or
 * another user's file where ours belongs: PT_OUT_REFUSED). */
#include "outputs/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

int pt_outfile_open(const char *path, int flags, bool *refused)
{
    *refused = false;
    /* O_NONBLOCK: opening a planted FIFO must not block (it fails with
     * ENXIO for writers when nobody reads it). */
    int fd = open(path, flags | O_CREAT | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK, 0600);
    if (fd < 0) {
        /* a planted directory (EISDIR) is a refusal too: it must not fail
         * perftramp_open for the victim any more than a symlink does */
        *refused = errno == ELOOP || errno == ENXIO || errno == EISDIR;
        return -1;
    }
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    /* st_nlink: a second name (a hard link planted where protected_hardlinks
     * is off) would have us append to, or truncate, one of our own files */
    if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
        close(fd);
        *refused = true;
        errno = EPERM;
        return -1;
    }
    int fl = fcntl(fd, F_GETFL);
    if (fl >= 0)
        (void)fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
    return fd;
}
