/* SPDX-License-Identifier: MIT */
/* Outputs layer: appending through a shared mapping (outputs/file_window.h). */
#include "outputs/file_window.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux include/uapi/asm-generic/mman-common.h */
#endif

/* Bytes allocated ahead at a time: one posix_fallocate + mmap + munmap per
 * ~290 trampolines of 225 B instead of a write each. */
enum { PT_WINDOW_BYTES = 64 * 1024 };

void pt_file_window_drop(struct pt_file_window *w)
{
    if (w->map)
        munmap(w->map, w->len);
    w->map = NULL;
    w->len = 0;
}

void pt_file_window_release(struct pt_file_window *w, int fd, off_t end)
{
    bool had = w->map != NULL;
    pt_file_window_drop(w);
    if (had && fd >= 0 && ftruncate(fd, end) != 0) {
        /* the zeros stay: perf stops at the first, loses nothing (an
         * explicit test: glibc's warn_unused_result takes no (void)) */
    }
}

/* posix_fallocate may have grown the file before it failed: cut it back. */
static int give_up(struct pt_file_window *w, int fd, off_t end)
{
    pt_file_window_drop(w);
    if (fd >= 0 && ftruncate(fd, end) != 0) {
        /* zeros past the data: perf stops at the first, loses nothing */
    }
    w->off_for_good = true;
    return -1;
}

/* Maps [off, off + len) of the file, allocating it first. */
static int move_window(struct pt_file_window *w, int fd, off_t end, size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        return give_up(w, fd, end);
    off_t off = end & ~(off_t)(page - 1);
    size_t need = (size_t)(end - off) + n;
    size_t len = need > PT_WINDOW_BYTES ? need : PT_WINDOW_BYTES;
    len = (len + (size_t)page - 1) & ~((size_t)page - 1);
    /* Past RLIMIT_FSIZE the allocation would fail with EFBIG (and raise
     * SIGXFSZ) before the data gets there: the caller's write meets the
     * limit at the right byte instead. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
        (rlim_t)off + (rlim_t)len > rl.rlim_cur)
        return give_up(w, fd, end);
    if (posix_fallocate(fd, off, (off_t)len) != 0)
        return give_up(w, fd, end);
    void *map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, off);
    if (map == MAP_FAILED)
        return give_up(w, fd, end);
    /* all its pages at once (Linux 5.14; older kernels say EINVAL and the
     * pages fault one by one): a fault on a page of a file reads it first */
    (void)madvise(map, len, MADV_POPULATE_WRITE);
    pt_file_window_drop(w);
    w->map = map;
    w->off = off;
    w->len = len;
    return 0;
}

uint8_t *pt_file_window_room(struct pt_file_window *w, int fd, off_t end, size_t n)
{
    if (w->off_for_good)
        return NULL;
    if (!w->map || end < w->off || (size_t)(end - w->off) + n > w->len) {
        int e = errno;
        if (move_window(w, fd, end, n) < 0) {
            errno = e;
            return NULL;
        }
    }
    return w->map + (end - w->off);
}
