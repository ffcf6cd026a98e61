/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_PERF_MAP: /tmp/perf-<pid>.map, one "START SIZE name\n" line
 * per trampoline (hex, no 0x: the format perf's map parser reads).
 *
 * Each line goes to the kernel in ONE write() on an O_APPEND fd: nothing
 * is buffered in the process, so a crash loses nothing, a fork duplicates
 * nothing, and other writers of the same file (O_APPEND) never interleave
 * inside a line.
 *
 * No line crosses a 4 KiB boundary of the file.  The kernel copies a
 * write into the page cache a page at a time and gives up between two
 * pages when the process is being killed (generic_perform_write: a fatal
 * signal pending), so a SIGKILL or the OOM killer can cut a write there
 * and leave its first part at the end of the file, without its newline,
 * where perf would read it as a symbol with a cut name.  A line that
 * would cross a boundary goes after newlines up to it, in the same
 * write: cut there, the write leaves empty lines, which perf skips.  A
 * full disk cuts a write at a page too (the next page is not allocated);
 * RLIMIT_FSIZE cuts it at any byte, and the part written is cut off
 * again.  Lines longer than 4 KiB (names of more than 4,060 bytes) cross
 * a boundary whatever is done. */
#include "mem/proc_start.h"
#include "outputs/outfile.h"
#include "outputs/outputs.h"
#include "outputs/perf_name.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The boundary lines keep clear of: a page (or folio) boundary on every
 * Linux, whatever its page size. */
enum { PT_MAP_PAGE = 4096 };

struct pt_perfmap {
    int fd;
    uint64_t end;          /* where our next write lands, as far as we know */
    unsigned long writes;  /* map_writes after our last write */
    char buf[PT_MAP_PAGE + 2 * 17 + PT_PERF_NAME_MAX + 2]; /* room for newlines, then the line */
};

/* Lines written by every context of the process: a change since our last
 * write means another context wrote to the file, and moved its end. */
static atomic_ulong map_writes;

/* Takes the file's real end (another writer may have moved it). */
static void resync(struct pt_perfmap *pm)
{
    struct stat st;
    if (fstat(pm->fd, &st) == 0)
        pm->end = (uint64_t)st.st_size;
}

/* Newlines to write before a line of n bytes so that it does not cross a
 * boundary: 0 unless the end we know says it would (then the file's real
 * end decides). */
static size_t padding(struct pt_perfmap *pm, size_t n)
{
    if (atomic_load_explicit(&map_writes, memory_order_relaxed) != pm->writes)
        resync(pm);
    if (n > PT_MAP_PAGE || pm->end % PT_MAP_PAGE + n <= PT_MAP_PAGE)
        return 0;
    resync(pm);
    size_t in = (size_t)(pm->end % PT_MAP_PAGE);
    return in + n <= PT_MAP_PAGE ? 0 : PT_MAP_PAGE - in;
}

/* A map last written before this process started was left by a dead
 * process that had our pid (perf maps are never deleted: the profile needs
 * them): its lines would name our addresses with a stranger's names, so
 * we empty it.  A map written since we started is kept: another JIT in
 * this process (CPython's own trampolines, say) shares the file
 * (mem/proc_start.h: the margin). */
static void empty_if_stale(int fd)
{
    struct stat st;
    int64_t start = pt_proc_start_ns("/proc/self/stat");
    if (start == 0 || fstat(fd, &st) < 0 || st.st_size == 0)
        return;
    int64_t mtime = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
    if (mtime < start - PT_PROC_START_SLACK_NS && ftruncate(fd, 0) < 0) {
        /* cannot empty it: our lines follow the stranger's, as they
         * did before this check */
    }
}

/* Opens this process's map.  0, PT_OUT_REFUSED (a symlink, FIFO or
 * someone else's file: fd stays -1, errno says why) or -1. */
static int open_map(struct pt_perfmap *pm, pid_t pid)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)pid);
    bool refused;
    pm->fd = pt_outfile_open(path, O_WRONLY | O_APPEND, &refused);
    if (pm->fd >= 0) {
        empty_if_stale(pm->fd);
        resync(pm);
        pm->writes = atomic_load(&map_writes);
        return 0;
    }
    return refused ? PT_OUT_REFUSED : -1;
}

int pt_perfmap_open(struct pt_perfmap **out, pid_t pid)
{
    struct pt_perfmap *pm = calloc(1, sizeof *pm);
    if (!pm) {
        errno = ENOMEM;
        return -1;
    }
    int r = open_map(pm, pid);
    if (r < 0) {
        int e = errno;
        free(pm);
        errno = e;
        return -1;
    }
    *out = pm;
    return r;
}

/* v in lowercase hex without 0x or leading zeros ("0" for 0), as %x
 * writes it; returns the length.  By hand: snprintf's two numbers were
 * ~1100 instructions, a third of what a CPython wrap costs perftramp
 * (callgrind, bench/python_create.py). */
static size_t put_hex(char *dst, uint64_t v)
{
    static const char digit[] = "0123456789abcdef";
    char tmp[16];
    size_t n = 0;
    do {
        tmp[n++] = digit[v & 15];
        v >>= 4;
    } while (v);
    for (size_t i = 0; i < n; i++)
        dst[i] = tmp[n - 1 - i];
    return n;
}

/* A write that failed after `done` of its bytes: those bytes are cut off
 * again, when they are still the end of the file (no other writer
 * appended since). */
static void cut_back(struct pt_perfmap *pm, size_t done)
{
    struct stat st;
    if (done && fstat(pm->fd, &st) == 0 && (uint64_t)st.st_size == pm->end + done &&
        ftruncate(pm->fd, st.st_size - (off_t)done) != 0) {
        /* it stays: the output is disabled anyway (docs/security.md) */
    }
}

static int write_line(struct pt_perfmap *pm, uintptr_t addr, size_t size, const char *name)
{
    if (pm->fd < 0) {
        errno = EBADF;
        return -1;
    }
    char *line = pm->buf + PT_MAP_PAGE;
    size_t n = put_hex(line, addr);
    line[n++] = ' ';
    n += put_hex(line + n, size);
    line[n++] = ' ';
    n += pt_perf_name(line + n, name);
    line[n++] = '\n';
    size_t pad = padding(pm, n);
    memset(line - pad, '\n', pad);
    line -= pad;
    n += pad;
    size_t done = 0;
    for (;;) {
        ssize_t w = write(pm->fd, line + done, (size_t)n - done);
        if (w > 0 && (done += (size_t)w) == (size_t)n) {
            pm->end += n;
            pm->writes = atomic_fetch_add_explicit(&map_writes, 1, memory_order_relaxed) + 1;
            return 0;
        }
        if (w > 0 || (w < 0 && errno == EINTR))
            continue;
        /* A short write means the disk filled up or a limit was hit
         * mid-line; writing the rest fails with the real cause (EFBIG
         * under RLIMIT_FSIZE, ENOSPC), which is what we report, after
         * cutting off what the line left. */
        int e = w == 0 ? ENOSPC : errno;
        cut_back(pm, done);
        errno = e;
        return -1;
    }
}

int pt_perfmap_add(struct pt_perfmap *pm, const struct pt_tramp *t)
{
    return write_line(pm, t->addr, t->size, t->name);
}

int pt_perfmap_reopen(struct pt_perfmap *pm, pid_t pid)
{
    /* the inherited fd is the parent's map: never write it again */
    if (pm->fd >= 0)
        close(pm->fd);
    pm->fd = -1;
    return open_map(pm, pid);
}

int pt_perfmap_close(struct pt_perfmap *pm)
{
    if (!pm)
        return 0;
    int r = 0;
    if (pm->fd >= 0 && close(pm->fd) < 0 && errno != EINTR)
        r = -1;
    int e = errno;
    free(pm);
    errno = e;
    return r;
}
