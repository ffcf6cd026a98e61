/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_JITDUMP: <dir>/jit-<pid>.dump for `perf record -k 1` +
 * `perf inject --jit`.  Format: tools/perf/util/jitdump.h in Linux (see
 * docs/facts.md "jitdump"): native byte order, header v1, CLOCK_MONOTONIC
 * timestamps, per trampoline the group [UNWINDING_INFO][LOAD] copied in
 * one piece under the core's lock, a CLOSE record at the end.
 *
 * The groups go through a shared mapping of the file's end
 * (outputs/file_window.h): in the file once copied, with no system call
 * per trampoline (one pwrite() each cost 1-2 us, most of a jitdump wrap:
 * bench/PERFORMANCE.md).  Where no window can be made (a file system that
 * cannot allocate or map, a full disk, RLIMIT_FSIZE near) each group is
 * one pwrite() instead.  A failed or short write cuts the file back to the
 * end of the last complete record (ftruncate), so perf never reads a torn
 * record, and the output is disabled (the core records errno).  Closing
 * cuts off the window's unused zeros; a process that ends without closing
 * leaves them, and perf stops at the first (a prefix of total_size 0).
 * Each group's first total_size is stored last (append): a process killed
 * while copying a group leaves it with total_size 0 too.
 *
 * In a pid namespace whose outer pid is visible (NSpid, outputs/pid_ns.c)
 * the dump has a second name, jit-<outer pid>.dump (a hard link), mapped
 * as a second marker: perf inject takes the marker whose pid is the
 * process's pid as it sees it then, jit-<pid>.dump while the process
 * lives (perf translates) and jit-<outer pid>.dump after it exited; the
 * header and the LOAD records carry the outer pid (and tid), which perf
 * uses as they are after the exit (docs/perf.md, "Containers"). */
#include "emit/eh_frame.h"
#include "outputs/file_window.h"
#include "outputs/outfile.h"
#include "outputs/outputs.h"
#include "outputs/release_fence.h"
#include "outputs/perf_name.h"
#include "outputs/pid_ns.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* tools/perf/util/jitdump.h */
enum { JD_MAGIC = 0x4A695444, JD_VERSION = 1, JD_HEADER_SIZE = 40 };
enum { JD_LOAD = 0, JD_DEBUG_INFO = 2, JD_CLOSE = 3, JD_UNWINDING_INFO = 4 };
enum { JD_PREFIX = 16, JD_LOAD_FIXED = 56, JD_UNWIND_FIXED = 40 };
/* DEBUG_INFO: prefix, u64 code_addr, u64 nr_entry, then entries
 * {u64 addr, i32 lineno, i32 discrim, NUL-terminated file name}
 * (tools/perf/util/jitdump.h, struct jr_code_debug_info/debug_entry);
 * addresses are raw run-time addresses (docs/facts.md). */
enum { JD_DEBUG_FIXED = 32, JD_DEBUG_ENTRY_FIXED = 16 };

struct pt_jitdump {
    int fd;
    off_t end;              /* end of the last complete record */
    struct pt_file_window win; /* where the next records are copied */
    pid_t owner;            /* getpid() of the process that opened the file */
    void *marker;           /* the executable mapping perf looks for */
    void *outer_marker;     /* the same, mapped as jit-<outer_pid>.dump */
    size_t marker_len;
    uint8_t *unwind;        /* UNWINDING_INFO record minus its timestamp: same for all */
    size_t unwind_len;
    uint8_t *group;         /* scratch for one [UNWINDING_INFO][LOAD] group */
    size_t group_cap;
    char *dir;              /* NULL: /tmp */
    pid_t pid;
    pid_t outer_pid;        /* 0: no outer pid namespace in sight */
    uint32_t elf_machine;
    uint64_t code_index;    /* next LOAD's code_index: never reused */
};

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts); /* what perf record -k 1 samples with */
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint8_t *put32(uint8_t *p, uint32_t v)
{
    memcpy(p, &v, 4);
    return p + 4;
}

static uint8_t *put64(uint8_t *p, uint64_t v)
{
    memcpy(p, &v, 8);
    return p + 8;
}

/* All n bytes at `off`, retrying short writes: 0, or -1 with errno. */
static int pwrite_all(int fd, const uint8_t *p, size_t n, off_t off)
{
    size_t done = 0;
    while (done < n) {
        ssize_t w = pwrite(fd, p + done, n - done, off + (off_t)done);
        if (w > 0) {
            done += (size_t)w;
            continue;
        }
        if (w < 0 && errno == EINTR)
            continue;
        if (w == 0)
            errno = ENOSPC;
        return -1;
    }
    return 0;
}

/* A record is in the dump once its total_size is.  Each group (or CLOSE)
 * goes in with its first record's total_size still 0 and that one word
 * last, so a process killed mid-copy (SIGKILL, the OOM killer) leaves a
 * record of total_size 0 with part of its body after it, where perf
 * stops reading (jit_get_next_entry: a record shorter than its prefix),
 * never a record that reads whole with part of its body missing: the
 * validator calls that tail "uncommitted" (docs/jitdump-producers.md). */
enum { JD_SIZE_AT = 4 }; /* total_size's offset in a record prefix */

/* One store instruction, so that no kill leaves half of it: a 4-byte
 * memcpy is one on x86-64, aarch64, ppc64le and s390x at any alignment;
 * riscv64 compilers split an unaligned one into bytes, so there it is one
 * `sw` (done whole by the hardware, or by the kernel's misaligned-access
 * handler before the process runs on). */
static void store_size(uint8_t *p, uint32_t v)
{
    pt_release_fence(); /* the body first */
#if defined(__riscv)
    __asm__ volatile("sw %1, 0(%0)" : : "r"(p), "r"(v) : "memory");
#else
    memcpy(p, &v, 4);
#endif
}

/* Appends the records in buf (n bytes) after the last complete record,
 * committing them by their first total_size (above).  On failure the file
 * is cut back to the end of the last complete record: no torn record
 * survives a failed write. */
static int append(struct pt_jitdump *jd, uint8_t *buf, size_t n)
{
    uint32_t size;
    memcpy(&size, buf + JD_SIZE_AT, 4);
    uint8_t *dst = pt_file_window_room(&jd->win, jd->fd, jd->end, n);
    if (dst) {
        memcpy(dst, buf, JD_SIZE_AT);
        memcpy(dst + JD_SIZE_AT + 4, buf + JD_SIZE_AT + 4, n - JD_SIZE_AT - 4);
        store_size(dst + JD_SIZE_AT, size);
        jd->end += (off_t)n;
        return 0;
    }
    /* no window: two writes, the group with total_size 0, then the size */
    memset(buf + JD_SIZE_AT, 0, 4);
    int r = pwrite_all(jd->fd, buf, n, jd->end);
    memcpy(buf + JD_SIZE_AT, &size, 4);
    if (r == 0)
        r = pwrite_all(jd->fd, buf + JD_SIZE_AT, 4, jd->end + JD_SIZE_AT);
    if (r < 0) {
        int e = errno;
        if (ftruncate(jd->fd, jd->end) != 0) {
            /* Nothing left to try: the write already failed, e says why,
             * and the caller disables this output.  What is left past
             * the end has total_size 0 or runs past the end of file, and
             * perf stops at either, so it hides nothing before it.  (An
             * explicit test, not a (void) cast: glibc marks ftruncate
             * warn_unused_result under _FORTIFY_SOURCE, and gcc does
             * not accept (void) for that.) */
        }
        errno = e;
        return -1;
    }
    jd->end += (off_t)n;
    return 0;
}

/* The UNWINDING_INFO record for every trampoline, built once: .eh_frame
 * then .eh_frame_hdr (genelf layout), mapped_size = their size.  The
 * core spaced the slots so [code, code + ALIGN8(size) + mapped_size)
 * never overlap. */
static int build_unwind(struct pt_jitdump *jd, const struct pt_layout *layout)
{
    struct pt_buf blob;
    size_t eh_size;
    pt_buf_init(&blob, layout->arch->big_endian);
    if (pt_eh_jitdump_blob(&blob, layout, &eh_size) < 0 || blob.failed) {
        pt_buf_free(&blob);
        errno = ENOMEM;
        return -1;
    }
    size_t padded = (blob.len + 7) & ~(size_t)7;
    jd->unwind_len = JD_UNWIND_FIXED + padded;
    jd->unwind = calloc(1, jd->unwind_len);
    if (!jd->unwind) {
        pt_buf_free(&blob);
        errno = ENOMEM;
        return -1;
    }
    uint8_t *p = jd->unwind;
    p = put32(p, JD_UNWINDING_INFO);
    p = put32(p, (uint32_t)jd->unwind_len);
    p = put64(p, 0); /* timestamp: per group */
    p = put64(p, blob.len);            /* unwinding_size */
    p = put64(p, blob.len - eh_size);  /* eh_frame_hdr_size */
    p = put64(p, blob.len);            /* mapped_size */
    memcpy(p, blob.data, blob.len);
    pt_buf_free(&blob);
    return 0;
}

/* <dir>/jit-<outer_pid>.dump, a hard link to the dump at `path`, mapped
 * like the marker.  A name that exists already (a pid of the outer
 * namespace reused) is replaced only when it is a dump of ours; without
 * the link the dump still serves perf while the process lives, so a
 * failure here only costs the after-exit case: outer_pid goes back to 0
 * and the LOADs carry the namespace's pid, like the name. */
static void map_outer_marker(struct pt_jitdump *jd, const char *dir, const char *path)
{
    char alias[PATH_MAX];
    int fd = -1;
    if (snprintf(alias, sizeof alias, "%s/jit-%ld.dump", dir, (long)jd->outer_pid) < (int)sizeof alias) {
        if (link(path, alias) < 0 && errno == EEXIST) {
            struct stat st;
            if (lstat(alias, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == geteuid() && unlink(alias) == 0) {
                int relinked = link(path, alias); /* failed: the open below finds no alias, as said */
                (void)relinked;
            }
        }
        fd = open(alias, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
    }
    struct stat a, d;
    if (fd >= 0 && fstat(fd, &a) == 0 && fstat(jd->fd, &d) == 0 && a.st_ino == d.st_ino && a.st_dev == d.st_dev) {
        jd->outer_marker = mmap(NULL, jd->marker_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, 0);
        if (jd->outer_marker == MAP_FAILED)
            jd->outer_marker = NULL;
    }
    if (fd >= 0)
        close(fd);
    uint32_t outer = (uint32_t)jd->outer_pid;
    /* the header's pid (byte 20) is the LOADs' */
    if (!jd->outer_marker || pwrite(jd->fd, &outer, 4, 20) != 4)
        jd->outer_pid = 0;
}

/* Creates <dir>/jit-<pid>.dump, writes the header, maps the marker.
 * 0, -1, or PT_OUT_REFUSED (the file was refused, or another context of
 * this process owns it: fd stays -1, errno says why). */
static int open_dump(struct pt_jitdump *jd)
{
    char path[PATH_MAX];
    const char *dir = jd->dir ? jd->dir : "/tmp";
    if (snprintf(path, sizeof path, "%s/jit-%ld.dump", dir, (long)jd->pid) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    bool refused;
    jd->fd = pt_outfile_open(path, O_RDWR, &refused);
    if (jd->fd < 0)
        return refused ? PT_OUT_REFUSED : -1;
    /* One writer per dump: a second context of this process (same pid,
     * same directory) would truncate ours and interleave with it.  flock
     * belongs to the open file description, so a second open() conflicts
     * even in this process; the refusal disables its output (EBUSY). */
    if (flock(jd->fd, LOCK_EX | LOCK_NB) < 0) {
        int e = errno == EWOULDBLOCK ? EBUSY : errno;
        close(jd->fd);
        jd->fd = -1;
        errno = e;
        return e == EBUSY ? PT_OUT_REFUSED : -1;
    }
    jd->end = 0;
    jd->owner = getpid();
    /* truncate only now, after the file was checked to be ours */
    if (ftruncate(jd->fd, 0) < 0)
        goto fail;
    uint8_t h[JD_HEADER_SIZE], *p = h;
    p = put32(p, JD_MAGIC);
    p = put32(p, JD_VERSION);
    p = put32(p, JD_HEADER_SIZE);
    p = put32(p, jd->elf_machine);
    p = put32(p, 0);
    p = put32(p, (uint32_t)jd->pid);
    p = put64(p, now_ns());
    put64(p, 0); /* flags: no arch timestamps */
    /* one write inside the first page: a kill leaves all of it or none */
    if (pwrite_all(jd->fd, h, sizeof h, 0) < 0)
        goto fail;
    jd->end = sizeof h;
    /* perf record sees this PROT_EXEC mapping of jit-<pid>.dump and perf
     * inject --jit finds the dump by it: keep it for the context's life. */
    long page = sysconf(_SC_PAGESIZE);
    jd->marker_len = page > 0 ? (size_t)page : 4096;
    jd->marker = mmap(NULL, jd->marker_len, PROT_READ | PROT_EXEC, MAP_PRIVATE, jd->fd, 0);
    if (jd->marker == MAP_FAILED) {
        jd->marker = NULL;
        goto fail;
    }
    jd->outer_pid = pt_outer_pid("/proc/self/status");
    if (jd->outer_pid == jd->pid)
        jd->outer_pid = 0;
    if (jd->outer_pid)
        map_outer_marker(jd, dir, path);
    return 0;
fail: {
    int e = errno;
    pt_file_window_drop(&jd->win);
    close(jd->fd);
    jd->fd = -1;
    (void)unlink(path);
    errno = e;
    return -1;
}
}

static void release_file(struct pt_jitdump *jd)
{
    /* Only the process that opened the file cuts it back: a forked child
     * closing its copy of the context must leave its parent's room, which
     * the parent keeps writing through (a copy past the end of the file
     * would raise SIGBUS there). */
    if (getpid() == jd->owner)
        pt_file_window_release(&jd->win, jd->fd, jd->end);
    else
        pt_file_window_drop(&jd->win);
    jd->win = (struct pt_file_window){0};
    if (jd->marker)
        munmap(jd->marker, jd->marker_len);
    if (jd->outer_marker)
        munmap(jd->outer_marker, jd->marker_len);
    jd->marker = jd->outer_marker = NULL;
    if (jd->fd >= 0)
        close(jd->fd);
    jd->fd = -1;
}

static void free_jitdump(struct pt_jitdump *jd)
{
    release_file(jd);
    free(jd->dir);
    free(jd->unwind);
    free(jd->group);
    free(jd);
}

int pt_jitdump_open(struct pt_jitdump **out, const struct pt_layout *layout, const char *dir, pid_t pid,
                    bool slot_unwind)
{
    struct pt_jitdump *jd = calloc(1, sizeof *jd);
    if (!jd) {
        errno = ENOMEM;
        return -1;
    }
    jd->fd = -1;
    jd->pid = pid;
    jd->elf_machine = layout->arch->elf_machine;
    int r = -1;
    if (dir && !(jd->dir = strdup(dir)))
        errno = ENOMEM;
    else if (!slot_unwind || build_unwind(jd, layout) == 0)
        r = open_dump(jd);
    if (r < 0) {
        int e = errno;
        free_jitdump(jd);
        errno = e;
        return -1;
    }
    *out = jd;
    return r;
}

/* The calling thread's id, cached per thread: gettid(2) is a syscall, and
 * on a VM one costs ~0.5 us, half of the write floor (bench/run.sh:
 * jitdump_vs_floor went from 1.47 to 1.31 without it).  A forked child
 * must not reuse its parent's tid: the cache is keyed by the dump's pid
 * (set at reopen in the child) and reset in pt_jitdump_reopen, which
 * runs in the child's only thread. */
static _Thread_local pid_t cached_tid, cached_tid_pid;

static uint32_t current_tid(const struct pt_jitdump *jd)
{
    if (cached_tid_pid != jd->pid || cached_tid == 0) {
        /* the outer namespace's id of this thread: read once per thread */
        cached_tid = jd->outer_pid ? pt_outer_pid("/proc/thread-self/status") : 0;
        if (!cached_tid)
            cached_tid = (pid_t)syscall(SYS_gettid);
        cached_tid_pid = jd->pid;
    }
    return (uint32_t)cached_tid;
}

static size_t align8(size_t v)
{
    return (v + 7) & ~(size_t)7;
}

/* One [UNWINDING_INFO][DEBUG_INFO][LOAD] group, one write.  The
 * UNWINDING_INFO is the table's (built once) or the published code's own;
 * DEBUG_INFO only when the code has a source position. */
static int write_group(struct pt_jitdump *jd, const struct pt_tramp *t)
{
    if (jd->fd < 0) {
        errno = EBADF;
        return -1;
    }
    char name[PT_PERF_NAME_MAX + 1];
    size_t name_len = pt_perf_name(name, t->name);
    size_t unwind_len = t->unwind ? JD_UNWIND_FIXED + align8(t->unwind_len) : jd->unwind_len;
    size_t file_len = t->file && t->line ? strlen(t->file) : 0;
    size_t debug_len = t->file && t->line ? align8(JD_DEBUG_FIXED + 2 * (JD_DEBUG_ENTRY_FIXED + file_len + 1)) : 0;
    size_t load_len = JD_LOAD_FIXED + name_len + 1 + t->size; /* code at the very end: no padding */
    if (file_len > UINT32_MAX || t->size > UINT32_MAX || t->unwind_len > UINT32_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    size_t need = unwind_len + debug_len + load_len;
    if (need > UINT32_MAX) {
        errno = EOVERFLOW;
        return -1;
    }
    if (need > jd->group_cap) {
        uint8_t *g = realloc(jd->group, need);
        if (!g) {
            errno = ENOMEM;
            return -1;
        }
        jd->group = g;
        jd->group_cap = need;
    }
    uint64_t ts = now_ns();
    uint8_t *p = jd->group;
    if (t->unwind) {
        memset(p, 0, unwind_len);
        p = put32(p, JD_UNWINDING_INFO);
        p = put32(p, (uint32_t)unwind_len);
        p = put64(p, ts);
        p = put64(p, t->unwind_len);                    /* unwinding_size */
        p = put64(p, t->unwind_len - t->eh_frame_size); /* eh_frame_hdr_size */
        p = put64(p, t->unwind_len);                    /* mapped_size */
        memcpy(p, t->unwind, t->unwind_len);
        p = jd->group + unwind_len;
    } else if (jd->unwind_len) {
        memcpy(p, jd->unwind, jd->unwind_len);
        put64(p + 8, ts);
        p += jd->unwind_len;
    }
    if (debug_len) {
        uint8_t *start = p;
        memset(p, 0, debug_len);
        p = put32(p, JD_DEBUG_INFO);
        p = put32(p, (uint32_t)debug_len);
        p = put64(p, ts);
        p = put64(p, t->addr); /* code_addr */
        /* Two entries with the same line, at the code's start and at its
         * end: perf inject's line table (genelf) ends each sequence at the
         * last entry's address, so a lone entry would cover no byte and
         * srcline would find nothing for samples inside the code. */
        p = put64(p, 2); /* nr_entry */
        for (int k = 0; k < 2; k++) {
            p = put64(p, t->addr + (k ? t->size : 0)); /* raw run-time addresses */
            p = put32(p, t->line);
            p = put32(p, 0); /* discrim */
            memcpy(p, t->file, file_len + 1);
            p += file_len + 1;
        }
        p = start + debug_len;
    }
    p = put32(p, JD_LOAD);
    p = put32(p, (uint32_t)load_len);
    p = put64(p, ts);
    p = put32(p, (uint32_t)(jd->outer_pid ? jd->outer_pid : jd->pid));
    p = put32(p, current_tid(jd));
    p = put64(p, t->addr);           /* vma */
    p = put64(p, t->addr);           /* code_addr */
    p = put64(p, t->size);
    p = put64(p, jd->code_index++);  /* never reused: names jitted-<pid>-<index>.so */
    memcpy(p, name, name_len + 1);
    p += name_len + 1;
    memcpy(p, t->code, t->size);
    return append(jd, jd->group, need);
}

int pt_jitdump_add(struct pt_jitdump *jd, const struct pt_tramp *t)
{
    return write_group(jd, t);
}

uint64_t pt_jitdump_next_index(const struct pt_jitdump *jd)
{
    return jd->code_index;
}

void pt_jitdump_set_next_index(struct pt_jitdump *jd, uint64_t index)
{
    jd->code_index = index;
}

int pt_jitdump_reopen(struct pt_jitdump *jd, pid_t pid)
{
    cached_tid = cached_tid_pid = 0; /* the parent's thread id */
    /* the fd, the marker and the window are the parent's: let go of them
     * without writing (closing an fd writes nothing; the window is only
     * unmapped, not cut back), then start our own dump */
    pt_file_window_drop(&jd->win);
    release_file(jd);
    jd->pid = pid;
    return open_dump(jd);
}

int pt_jitdump_close(struct pt_jitdump *jd, bool write_close)
{
    if (!jd)
        return 0;
    int r = 0;
    if (jd->fd >= 0 && write_close) {
        uint8_t rec[JD_PREFIX], *p = rec;
        p = put32(p, JD_CLOSE);
        p = put32(p, JD_PREFIX);
        put64(p, now_ns());
        r = append(jd, rec, sizeof rec);
    }
    int e = errno;
    free_jitdump(jd);
    errno = e;
    return r;
}
