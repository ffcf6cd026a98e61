/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_PERF_MAP: /tmp/perf-<pid>.map, one "START SIZE name\n" line
 * per trampoline (hex, no 0x: the format perf's map parser reads).
 *
 * Each line goes to the kernel in ONE write() on an O_APPEND fd: nothing
 * is buffered in the process, so a crash loses nothing, a fork duplicates
 * nothing, and other writers of the same file (O_APPEND) never interleave
 * inside a line. */
#include "outfile.h"
#include "outputs.h"
#include "perf_name.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct pt_perfmap {
    int fd;
    char line[2 * 17 + PT_PERF_NAME_MAX + 2];
};

/* Opens this process's map.  A refused file (symlink, FIFO, someone
 * else's) disables the output with its errno; the context still opens. */
static int open_map(struct perftramp *pt, struct pt_perfmap *pm)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)pt->pid);
    bool refused;
    pm->fd = pt_outfile_open(path, O_WRONLY | O_APPEND, &refused);
    if (pm->fd >= 0)
        return 0;
    if (refused) {
        pt_output_fail(pt, PERFTRAMP_PERF_MAP, errno);
        return 0;
    }
    return -1;
}

int pt_perfmap_open(struct perftramp *pt)
{
    struct pt_perfmap *pm = calloc(1, sizeof *pm);
    if (!pm) {
        errno = ENOMEM;
        return -1;
    }
    if (open_map(pt, pm) < 0) {
        int e = errno;
        free(pm);
        errno = e;
        return -1;
    }
    pt->perfmap = pm;
    return 0;
}

static int write_line(struct pt_perfmap *pm, uintptr_t addr, size_t size, const char *name)
{
    if (pm->fd < 0) {
        errno = EBADF;
        return -1;
    }
    int n = snprintf(pm->line, sizeof pm->line, "%" PRIxPTR " %zx ", addr, size);
    n += (int)pt_perf_name(pm->line + n, name);
    pm->line[n++] = '\n';
    size_t done = 0;
    for (;;) {
        ssize_t w = write(pm->fd, pm->line + done, (size_t)n - done);
        if (w > 0 && (done += (size_t)w) == (size_t)n)
            return 0;
        if (w > 0 || (w < 0 && errno == EINTR))
            continue;
        /* A short write means the disk filled up or a limit was hit
         * mid-line; writing the rest fails with the real cause (EFBIG
         * under RLIMIT_FSIZE, ENOSPC), which is what we report.  The file
         * is shared with other writers (O_APPEND), so we cannot cut the
         * torn line back: stop writing. */
        if (w == 0)
            errno = ENOSPC;
        return -1;
    }
}

int pt_perfmap_add(struct perftramp *pt, const struct pt_tramp *t)
{
    return write_line(pt->perfmap, t->addr, t->size, t->name);
}

static int write_live(struct perftramp *pt, struct pt_arena *a, size_t i, void *arg)
{
    (void)arg;
    const char *name = a->names && a->names[i] ? a->names[i] : "";
    return write_line(pt->perfmap, pt_slot_x(pt, a, i), pt->layout.size, name) < 0 ? -1 : 0;
}

int pt_perfmap_after_fork(struct perftramp *pt)
{
    struct pt_perfmap *pm = pt->perfmap;
    /* the inherited fd is the parent's map: never write it again */
    if (pm->fd >= 0)
        close(pm->fd);
    pm->fd = -1;
    if (open_map(pt, pm) < 0)
        return -1;
    if (pm->fd < 0)
        return 0; /* refused: already disabled with its errno */
    return pt_for_each_live(pt, write_live, NULL) ? -1 : 0;
}

int pt_perfmap_close(struct perftramp *pt)
{
    struct pt_perfmap *pm = pt->perfmap;
    if (!pm)
        return 0;
    int r = 0;
    if (pm->fd >= 0 && close(pm->fd) < 0 && errno != EINTR)
        r = -1;
    free(pm);
    pt->perfmap = NULL;
    return r;
}
