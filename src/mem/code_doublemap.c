/* SPDX-License-Identifier: MIT */
/* Mem layer: perftramp's own code memory, for when libffi's closures are not code we
 * can write (static trampolines): the same pages mapped twice, once
 * read-write and once read-execute, so no page is ever writable and
 * executable at one address.  Three ways to get pages that can be mapped
 * twice, tried in this order:
 *
 *   shared-anon  a MAP_SHARED|MAP_ANONYMOUS mapping and a second view of it
 *                from mremap(old_size 0), made read-execute with mprotect.
 *                The kernel names it "/dev/zero (deleted)", which perf takes
 *                for anonymous memory, so perf map lines keep working
 *                (perf 6.1 ignores /tmp/perf-<pid>.map for memfd and file
 *                mappings: their samples land on the file).
 *   memfd        memfd_create: for systems whose policy forbids executable
 *                anonymous shared memory (SELinux execmem) but lets a file
 *                be executed.  perf map lines are not used by perf here;
 *                jitdump, the unwinders and gdb do not care.
 *   tmpfile      an unlinked file in $TMPDIR, /tmp, /var/tmp or /dev/shm
 *                (O_TMPFILE, else mkostemp + unlink): for kernels without
 *                memfd_create (before 3.17), sandboxes that filter it, and
 *                vm.memfd_noexec=2.
 *
 * Errors: running out of memory or descriptors (ENOMEM, EMFILE, ENFILE)
 * stops at once with that errno.  A refusal (EACCES, EPERM, ENOSYS, ...)
 * moves on to the next way.  When every way fails, errno is the first
 * error that was not a refusal (say ENOSPC or EFBIG from a file), or
 * EACCES when the system refused them all: SELinux without execmem and
 * execute rights on tmpfs files, noexec on every temporary directory,
 * seccomp. */
#include "config.h"

#include "mem/codemem.h"
#include "mem/live_blocks.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* memfd_create flag from Linux 6.3 (include/uapi/linux/memfd.h): ask for
 * an executable memfd explicitly, so vm.memfd_noexec=1 does not seal the
 * execute permission away.  Older kernels reject it with EINVAL. */
#ifndef MFD_EXEC
#define MFD_EXEC 0x0010U
#endif

static bool refusal(int e)
{
    switch (e) {
    case EACCES: case EPERM: case ENOSYS: case EINVAL: case EOPNOTSUPP: case ENOENT:
    case ENOTDIR: case EISDIR: case EROFS: case ENODEV: case ETXTBSY:
        return true;
    }
    return false;
}

static bool out_of_resources(int e)
{
    return e == ENOMEM || e == EMFILE || e == ENFILE;
}

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

static void unmap_views(void *w, void *x, size_t size)
{
    int e = errno; /* cleanup keeps the errno that failed */
    if (w && w != MAP_FAILED)
        munmap(w, size);
    if (x && x != MAP_FAILED)
        munmap(x, size);
    errno = e;
}

/* Two views of shared anonymous memory. */
static int views_shared_anon(size_t size, void **w, void **x)
{
    *w = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (*w == MAP_FAILED)
        return -1;
    /* old_size 0 on a shared mapping: a second mapping of the same pages
     * (mremap(2)) */
    *x = mremap(*w, 0, size, MREMAP_MAYMOVE);
    if (*x == MAP_FAILED || mprotect(*x, size, PROT_READ | PROT_EXEC) != 0) {
        unmap_views(*w, *x, size);
        return -1;
    }
    return 0;
}

/* Two views of a file: sized, mapped RW and RX, then closed (the
 * mappings keep it alive). */
static int views_of_file(int fd, size_t size, void **w, void **x)
{
    *w = *x = MAP_FAILED;
    if (ftruncate(fd, (off_t)size) == 0 &&
        (*w = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) != MAP_FAILED &&
        (*x = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0)) != MAP_FAILED) {
        close(fd);
        return 0;
    }
    unmap_views(*w, *x, size);
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

static int open_memfd(void)
{
    int fd = memfd_create("perftramp-code", MFD_CLOEXEC | MFD_EXEC);
    if (fd < 0 && errno == EINVAL)
        fd = memfd_create("perftramp-code", MFD_CLOEXEC);
    return fd;
}

/* An unlinked file in dir: O_TMPFILE never has a name; where the file
 * system cannot do that, mkostemp and unlink at once. */
static int open_unlinked(const char *dir)
{
    int fd = open(dir, O_TMPFILE | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    if (fd >= 0 || !(errno == EOPNOTSUPP || errno == EISDIR || errno == EINVAL))
        return fd;
    char path[4096];
    if (snprintf(path, sizeof path, "%s/perftramp-code.XXXXXX", dir) >= (int)sizeof path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    fd = mkostemp(path, O_CLOEXEC);
    if (fd >= 0)
        unlink(path);
    return fd;
}

/* Remembers the error that explains a failure best: the first that was
 * not a refusal. */
static void note(int *why, int e)
{
    if (!*why && !refusal(e))
        *why = e;
}

/* A fresh pair of views of size bytes, the first way that works. */
static int new_views(size_t size, void **w, void **x, const char **kind)
{
    int why = 0;
    *kind = "shared-anon";
    if (views_shared_anon(size, w, x) == 0)
        return 0;
    if (out_of_resources(errno))
        return -1;
    note(&why, errno);

    *kind = "memfd";
    int fd = open_memfd();
    if (fd >= 0 && views_of_file(fd, size, w, x) == 0)
        return 0;
    if (out_of_resources(errno))
        return -1;
    note(&why, errno);

    *kind = "tmpfile";
    const char *dirs[] = {secure_getenv("TMPDIR"), "/tmp", "/var/tmp", "/dev/shm"};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        fd = open_unlinked(dirs[i]);
        if (fd >= 0 && views_of_file(fd, size, w, x) == 0)
            return 0;
        if (out_of_resources(errno))
            return -1;
        note(&why, errno);
    }
    errno = why ? why : EACCES;
    return -1;
}

/* Every live block: the fork handlers part them. */
static struct pt_live_blocks live = PT_LIVE_BLOCKS_INIT;

static int dm_alloc(struct pt_code_block *b, size_t bytes, size_t align)
{
    size_t page = page_size();
    if (align == 0 || (align & (align - 1)) || align > page) {
        errno = EINVAL; /* mappings are page aligned: any smaller power of two holds */
        return -1;
    }
    size_t size = (bytes + page - 1) / page * page;
    if (size < bytes) {
        errno = ENOMEM;
        return -1;
    }
    void *w, *x;
    const char *kind;
    if (new_views(size, &w, &x, &kind) < 0)
        return -1;
    *b = (struct pt_code_block){.w = w, .x = (uintptr_t)x, .bytes = size, .backend = &pt_code_doublemap,
                                .kind = kind, .base = w, .xbase = x, .map_bytes = size};
    pt_live_add(&live, b);
    return 0;
}

static void dm_free(struct pt_code_block *b)
{
    if (!b->base)
        return;
    pt_live_remove(&live, b);
    unmap_views(b->base, b->xbase, b->map_bytes);
    b->base = b->xbase = NULL;
}

/* Fork.  Both views are MAP_SHARED, so without help a forked child would
 * share the code pages with its parent: a trap written over a slot the
 * child released would land in the parent's live trampoline, and both
 * would fill the same free slot.  So they part at the fork.  prepare (in
 * the parent; the context locks are already held by the handlers
 * registered after ours, so no trampoline is being written) copies every
 * block into fresh views.  The parent unmaps its copies and keeps its
 * pages.  The child moves the copies onto the block's addresses (mremap
 * MREMAP_FIXED replaces the old views there), so only the parent maps the
 * old pages.  One copy per fork, made by the parent; a child pays two
 * mremaps per block.  A copy that cannot be made (out of memory) leaves
 * that block shared, as it was before.  A move that fails in the child
 * leaves the child's RW view on the parent's pages: it becomes read-only
 * there, so a write by the child faults in the child instead of changing
 * the parent's code. */
static void dm_fork_prepare(void)
{
    pthread_mutex_lock(&live.lock);
    int e = errno;
    for (struct pt_code_block *b = live.head; b; b = b->live_next) {
        void *w, *x;
        const char *kind;
        b->fork_w = b->fork_x = NULL;
        if (new_views(b->map_bytes, &w, &x, &kind) < 0)
            continue;
        memcpy(w, b->base, b->map_bytes);
        b->fork_w = w;
        b->fork_x = x;
        b->fork_kind = kind;
    }
    errno = e;
}

static void dm_fork_parent(void)
{
    int e = errno;
    for (struct pt_code_block *b = live.head; b; b = b->live_next) {
        if (b->fork_w)
            unmap_views(b->fork_w, b->fork_x, b->map_bytes);
        b->fork_w = b->fork_x = NULL;
    }
    pthread_mutex_unlock(&live.lock);
    errno = e;
}

static void dm_fork_child(void)
{
    int e = errno;
    for (struct pt_code_block *b = live.head; b; b = b->live_next) {
        size_t size = b->map_bytes;
        if (!b->fork_w)
            continue;
        if (mremap(b->fork_x, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, b->xbase) != MAP_FAILED &&
            mremap(b->fork_w, size, size, MREMAP_MAYMOVE | MREMAP_FIXED, b->base) != MAP_FAILED) {
            b->kind = b->fork_kind;
        } else {
            mprotect(b->base, size, PROT_READ);
            int e2 = errno;
            unmap_views(b->fork_w, b->fork_x, size); /* whatever did not move */
            errno = e2;
        }
        b->fork_w = b->fork_x = NULL;
    }
    pthread_mutex_unlock(&live.lock);
    errno = e;
}

const struct pt_code_backend pt_code_doublemap = {"doublemap", dm_alloc, dm_free,
                                                  dm_fork_prepare, dm_fork_parent, dm_fork_child};
