/* SPDX-License-Identifier: MIT */
/* Mem layer: file-backed ELF arenas (mem/elf_arena.h): one shared object per arena,
 * executed from a MAP_SHARED mapping of the file, written through a second
 * view of it mapped above the executable one. */
#include "config.h"

#include "mem/elf_arena.h"
#include "mem/live_blocks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

int pt_elf_pwrite(int fd, const void *p, size_t n, size_t at)
{
    const uint8_t *c = p;
    while (n) {
        ssize_t w = pwrite(fd, c, n, (off_t)at);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        c += w;
        n -= (size_t)w;
        at += (size_t)w;
    }
    return 0;
}

/* A build-id unique to this file: perf caches files by build-id, so two
 * arenas (of this or any process) must never share one.  Random bytes;
 * without getrandom, the pid, the file number and the time mixed. */
static void make_build_id(uint8_t id[PT_ELF_BUILD_ID_SIZE], pid_t pid, unsigned n)
{
    if (getrandom(id, PT_ELF_BUILD_ID_SIZE, GRND_NONBLOCK) == PT_ELF_BUILD_ID_SIZE)
        return;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    uint64_t v[3] = {(uint64_t)pid << 32 | n, (uint64_t)ts.tv_sec, (uint64_t)ts.tv_nsec};
    for (int i = 0; i < PT_ELF_BUILD_ID_SIZE; i++) {
        uint64_t x = v[i % 3] * 0x9e3779b97f4a7c15ull + (uint64_t)i;
        id[i] = (uint8_t)(x >> 56);
        v[i % 3] = x ^ (x >> 29);
    }
}

/* Creates the next perftramp-<pid>-<n>.so.  A name that exists already and
 * is one of our own regular files (a process that had our pid before) is
 * skipped; anything else there (a symlink, another user's file, a FIFO)
 * is a planted file: EEXIST. */
static int create_file(struct pt_elf_dir *d, struct pt_elf_file *f)
{
    for (int tries = 0; tries < 64; tries++) {
        snprintf(f->name, sizeof f->name, "perftramp-%ld-%u.so", (long)d->pid, d->next_n++);
        int fd = openat(d->fd, f->name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
        if (fd >= 0)
            return fd;
        if (errno != EEXIST)
            return -1;
        struct stat st;
        if (fstatat(d->fd, f->name, &st, AT_SYMLINK_NOFOLLOW) < 0 || !S_ISREG(st.st_mode) ||
            st.st_uid != geteuid()) {
            errno = EEXIST;
            return -1;
        }
    }
    errno = EEXIST;
    return -1;
}

/* Every live block: the fork handlers part them. */
static struct pt_live_blocks live = PT_LIVE_BLOCKS_INIT;

static void unlink_file(struct pt_elf_dir *d, struct pt_elf_file *f, int fd)
{
    int e = errno;
    close(fd);
    unlinkat(d->fd, f->name, 0);
    errno = e;
}

/* Writes everything but the code and .eh_frame, before any mapping. */
static int write_headers(int fd, const struct pt_elf_so_plan *p, const struct pt_arch *arch, pid_t pid, unsigned n)
{
    uint8_t id[PT_ELF_BUILD_ID_SIZE];
    make_build_id(id, pid, n);
    size_t tail = pt_elf_so_tail_size(p);
    size_t most = p->text_off > p->hdr_size ? p->text_off : p->hdr_size;
    uint8_t *buf = malloc(most > tail ? most : tail);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    int r = 0;
    pt_elf_so_head(buf, p, arch, id);
    r = pt_elf_pwrite(fd, buf, p->text_off, 0);
    if (r == 0) {
        pt_elf_so_eh_hdr(buf, p, arch->big_endian);
        r = pt_elf_pwrite(fd, buf, p->hdr_size, p->hdr_off);
    }
    if (r == 0) {
        pt_elf_so_tail(buf, p, arch->big_endian);
        r = pt_elf_pwrite(fd, buf, tail, p->shstr_off);
    }
    int e = errno;
    free(buf);
    errno = e;
    return r;
}

int pt_elf_arena_alloc(struct pt_code_block *b, struct pt_elf_dir *d, const struct pt_arch *arch,
                       const struct pt_elf_so_geometry *g)
{
    struct pt_elf_file *f = calloc(1, sizeof *f);
    if (!f) {
        errno = ENOMEM;
        return -1;
    }
    struct pt_elf_so_geometry geo = *g;
    geo.page = page_size();
    if (pt_elf_so_plan(&f->plan, &geo) < 0) {
        free(f);
        return -1;
    }
    const struct pt_elf_so_plan *p = &f->plan;
    unsigned n = d->next_n;
    int fd = create_file(d, f);
    if (fd < 0) {
        free(f);
        return -1;
    }
    /* Every byte the mappings reach is allocated now: a full disk shows
     * here as ENOSPC, never later as SIGBUS on a write to a mapped page. */
    int e = posix_fallocate(fd, 0, (off_t)p->file_size);
    if (e) {
        errno = e;
        goto fail;
    }
    if (write_headers(fd, p, arch, d->pid, n) < 0)
        goto fail;
    /* Executable view at the bottom, writable view above it, the name
     * tables' view above both (perf takes the load base from the lowest). */
    size_t len = p->map_size, tail_len = p->file_size - p->shstr_off;
    uint8_t *base = mmap(NULL, 2 * len + tail_len, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (base == MAP_FAILED)
        goto fail;
    if (mmap(base, len, PROT_READ | PROT_EXEC, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
        mmap(base + len, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED ||
        mmap(base + 2 * len, tail_len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_FIXED, fd, (off_t)p->shstr_off) ==
            MAP_FAILED) {
        int e2 = errno; /* noexec: EPERM */
        munmap(base, 2 * len + tail_len);
        errno = e2;
        goto fail;
    }
    f->tail = base + 2 * len;
    f->tail_len = tail_len;
    f->fd = fd;
    f->strtab_len = 1;
    f->big_endian = arch->big_endian;
    *b = (struct pt_code_block){.w = base + len + p->text_off, .x = (uintptr_t)base + p->text_off,
                                .bytes = g->block_bytes, .backend = &pt_code_elf, .kind = "elf",
                                .base = base, .xbase = base, .map_bytes = 2 * len, .elf = f};
    pt_live_add(&live, b);
    return 0;
fail:
    unlink_file(d, f, fd);
    free(f);
    return -1;
}

/* The file stays: perf reads it after the process is gone. */
static void elf_free(struct pt_code_block *b)
{
    if (!b->base)
        return;
    pt_live_remove(&live, b);
    munmap(b->base, b->map_bytes);
    if (b->elf) {
        if (b->elf->tail)
            munmap(b->elf->tail, b->elf->tail_len);
        if (b->elf->fd >= 0)
            close(b->elf->fd);
        free(b->elf);
    }
    b->elf = NULL;
    b->base = b->xbase = NULL;
}

/* Fork.  Both views are MAP_SHARED views of the parent's file: a child
 * that wrote a trampoline or a trap there would change the parent's code
 * (and its file).  As code_doublemap.c does, the parent copies each block
 * into fresh shared anonymous views in prepare, and the child moves them
 * onto the block's addresses; the child's copy is no longer the file
 * (`parted`: its names are not written there).  A copy that cannot be
 * made (neither shared anonymous pages nor a memfd) leaves the child's
 * writable view read-only: a write faults in the child instead of
 * changing the parent. */
/* The same two views from a memfd, where mremap cannot alias shared
 * anonymous pages (valgrind's mremap refuses old_size 0). */
static int memfd_views(size_t len, void **w, void **x)
{
    int fd = memfd_create("perftramp-fork", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    *w = *x = MAP_FAILED;
    if (ftruncate(fd, (off_t)len) == 0) {
        *w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        *x = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    }
    close(fd);
    if (*w == MAP_FAILED || *x == MAP_FAILED) {
        if (*w != MAP_FAILED)
            munmap(*w, len);
        if (*x != MAP_FAILED)
            munmap(*x, len);
        return -1;
    }
    return 0;
}

static int anon_views(size_t len, void **w, void **x)
{
    *w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (*w == MAP_FAILED)
        return -1;
    *x = mremap(*w, 0, len, MREMAP_MAYMOVE); /* a second view of the same pages */
    if (*x == MAP_FAILED || mprotect(*x, len, PROT_READ | PROT_EXEC) < 0) {
        if (*x != MAP_FAILED)
            munmap(*x, len);
        munmap(*w, len);
        return memfd_views(len, w, x);
    }
    return 0;
}

static void elf_fork_prepare(void)
{
    pthread_mutex_lock(&live.lock);
    int e = errno;
    for (struct pt_code_block *b = live.head; b; b = b->live_next) {
        size_t len = b->map_bytes / 2;
        void *w, *x;
        b->fork_w = b->fork_x = NULL;
        if (b->elf->parted || anon_views(len, &w, &x) < 0)
            continue;
        memcpy(w, b->base, len);
        b->fork_w = w;
        b->fork_x = x;
    }
    errno = e;
}

static void elf_fork_parent(void)
{
    int e = errno;
    for (struct pt_code_block *b = live.head; b; b = b->live_next) {
        size_t len = b->map_bytes / 2;
        if (b->fork_w) {
            munmap(b->fork_w, len);
            munmap(b->fork_x, len);
        }
        b->fork_w = b->fork_x = NULL;
    }
    pthread_mutex_unlock(&live.lock);
    errno = e;
}

static void elf_fork_child(void)
{
    int e = errno;
    for (struct pt_code_block *b = live.head; b; b = b->live_next) {
        size_t len = b->map_bytes / 2;
        uint8_t *xv = b->base, *wv = (uint8_t *)b->base + len;
        if (b->elf->parted)
            continue;
        b->elf->parted = true;
        if (b->elf->tail) /* the parent's name tables: never the child's to write */
            mprotect(b->elf->tail, b->elf->tail_len, PROT_READ);
        if (b->elf->fd >= 0)
            close(b->elf->fd);
        b->elf->fd = -1;
        if (b->fork_w && mremap(b->fork_x, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, xv) != MAP_FAILED &&
            mremap(b->fork_w, len, len, MREMAP_MAYMOVE | MREMAP_FIXED, wv) != MAP_FAILED) {
            b->kind = "shared-anon";
        } else {
            mprotect(wv, len, PROT_READ);
            if (b->fork_w) {
                munmap(b->fork_w, len);
                munmap(b->fork_x, len);
            }
        }
        b->fork_w = b->fork_x = NULL;
    }
    pthread_mutex_unlock(&live.lock);
    errno = e;
}

static int elf_alloc_unsupported(struct pt_code_block *b, size_t bytes, size_t align)
{
    (void)b;
    (void)bytes;
    (void)align;
    errno = ENOTSUP; /* an ELF arena needs its geometry: pt_elf_arena_alloc */
    return -1;
}

const struct pt_code_backend pt_code_elf = {"elf", elf_alloc_unsupported, elf_free,
                                            elf_fork_prepare, elf_fork_parent, elf_fork_child};
