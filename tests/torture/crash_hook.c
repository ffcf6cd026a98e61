/* SPDX-License-Identifier: MIT */
/* The crash torture's kill hook, an LD_PRELOAD object for
 * crash_producer: it counts every write of an output's bytes (write(2) and
 * pwrite(2) to perf-*.map, jit-*.dump and perftramp-*.so files, memcpy
 * into their shared mappings: the jitdump's window, the ELF arenas'
 * views) and, at the Nth of the kind asked for, lets part of it through
 * and SIGKILLs the process, so that torn records are hit on purpose.
 *
 * The part is what a kill can leave:
 *  - a write(2) or pwrite(2) is cut only between two pages of the file
 *    (the kernel copies a page at a time and stops between pages for a
 *    fatal signal: generic_perform_write); a write that crosses no
 *    boundary goes through whole or not at all;
 *  - a memcpy, made of many stores, is cut anywhere: a prefix, a suffix
 *    (glibc copies big blocks tail first) or some of its 32-byte chunks.
 *
 * CRASH_KILL="<event>:<n>:<seed>" (event: a crash_event_name, or "any")
 * and CRASH_PROGRESS=<progress file> (crash_shared.h), where the hook
 * counts the events and says where it killed.  Without CRASH_KILL it only
 * counts.  Nothing here is in the library: it costs the library nothing. */
#define _GNU_SOURCE
#include "crash_shared.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static struct crash_progress *prog;
static int kill_event = -1; /* -1: count only */
static uint64_t kill_at, kill_seed;
static _Atomic uint64_t seen_any;
static void *(*real_memcpy)(void *, const void *, size_t);
static void *(*real_mmap)(void *, size_t, int, int, int, off_t);
static int (*real_munmap)(void *, size_t);

/* The shared mappings of output files: where a memcpy is a write. */
#define MAX_RANGES 128
/* glibc on a 32-bit machine with 64-bit file offsets (configure's
 * AC_SYS_LARGEFILE: i686): <unistd.h> and <sys/mman.h> declare pwrite and
 * mmap as pwrite64 and mmap64, the symbols the library calls, so the
 * definitions below are those, and the real mmap is found by that name. */
#if defined(__GLIBC__) && defined(__USE_FILE_OFFSET64) && !defined(__LP64__)
#define OFFSET64_RENAMED 1
#define REAL_MMAP "mmap64"
#else
#define OFFSET64_RENAMED 0
#define REAL_MMAP "mmap"
#endif
static struct {
    _Atomic uintptr_t lo, hi;
    _Atomic int event;
} ranges[MAX_RANGES];
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;

static void *byte_copy(void *d, const void *s, size_t n)
{
    volatile uint8_t *dd = d;
    const uint8_t *ss = s;
    for (size_t i = 0; i < n; i++)
        dd[i] = ss[i];
    return d;
}

__attribute__((constructor)) static void hook_init(void)
{
    real_memcpy = (void *(*)(void *, const void *, size_t))dlsym(RTLD_NEXT, "memcpy");
    real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, REAL_MMAP);
    real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
    const char *path = getenv("CRASH_PROGRESS");
    if (path) {
        int fd = open(path, O_RDWR | O_CLOEXEC);
        if (fd >= 0) {
            void *m = real_mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
            if (m != MAP_FAILED)
                prog = m;
            close(fd);
        }
    }
    const char *spec = getenv("CRASH_KILL");
    char ev[32];
    unsigned long long n, seed;
    if (spec && sscanf(spec, "%31[a-z-]:%llu:%llu", ev, &n, &seed) == 3)
        for (int e = 0; e <= CRASH_EV_ANY; e++)
            if (strcmp(ev, crash_event_name(e)) == 0) {
                kill_event = e;
                kill_at = n;
                kill_seed = seed;
            }
}

/* The output an fd writes to (a crash_event of it), or -1. */
static int classify_path(const char *path, bool copy)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    size_t len = strlen(base);
    if (strncmp(base, "perf-", 5) == 0 && len > 4 && strcmp(base + len - 4, ".map") == 0)
        return copy ? -1 : CRASH_EV_MAP_WRITE;
    if (strncmp(base, "jit-", 4) == 0 && len > 5 && strcmp(base + len - 5, ".dump") == 0)
        return copy ? CRASH_EV_DUMP_COPY : CRASH_EV_DUMP_WRITE;
    if (strncmp(base, "perftramp-", 10) == 0 && len > 3 && strcmp(base + len - 3, ".so") == 0)
        return copy ? CRASH_EV_ELF_COPY : CRASH_EV_ELF_WRITE;
    return -1;
}

static int classify_fd(int fd, bool copy, char *name, size_t name_len)
{
    char link[64], path[4096];
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t n = readlink(link, path, sizeof path - 1);
    if (n <= 0)
        return -1;
    path[n] = 0;
    if (name) {
        const char *base = strrchr(path, '/');
        base = base ? base + 1 : path;
        size_t len = strlen(base) < name_len - 1 ? strlen(base) : name_len - 1;
        memcpy(name, base, len); /* the real memcpy: name is no mapped output */
        name[len] = 0;
    }
    return classify_path(path, copy);
}

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Counts an event; true when it is the one to kill in. */
static bool is_the_kill(int event)
{
    uint64_t k = prog ? atomic_fetch_add(&prog->events[event], 1) + 1 : 0;
    uint64_t any = atomic_fetch_add(&seen_any, 1) + 1;
    if (kill_event < 0)
        return false;
    return kill_event == CRASH_EV_ANY ? any == kill_at : kill_event == event && k == kill_at;
}

static _Noreturn void die(void)
{
    syscall(SYS_kill, getpid(), SIGKILL);
    for (;;)
        pause();
}

static void record(int event, uint64_t len, uint64_t done, uint64_t off, const char *file)
{
    if (!prog)
        return;
    prog->kill_len = len;
    prog->kill_done = done;
    prog->kill_off = off;
    if (file)
        snprintf(prog->kill_file, sizeof prog->kill_file, "%s", file);
    atomic_store(&prog->kill_event, event);
}

/* ---- writes ---- */

/* A write of n bytes at file offset off, cut where a kill can cut it. */
static size_t write_cut(uint64_t off, size_t n)
{
    uint64_t first = (off / 4096 + 1) * 4096;
    if (first >= off + n)
        return mix(kill_seed) & 1 ? n : 0; /* one page: all or nothing */
    uint64_t boundaries = (off + n - 1 - first) / 4096 + 1;
    return (size_t)(first + (mix(kill_seed) % boundaries) * 4096 - off);
}

/* Where a write(2) on fd lands. */
static uint64_t write_offset(int fd)
{
    struct stat st;
    int fl = fcntl(fd, F_GETFL);
    return fl >= 0 && (fl & O_APPEND) && fstat(fd, &st) == 0 ? (uint64_t)st.st_size : (uint64_t)lseek(fd, 0, SEEK_CUR);
}

static ssize_t hooked_write(int fd, const void *buf, size_t n, off_t at, bool positioned)
{
    char name[96];
    int event = classify_fd(fd, false, name, sizeof name);
    bool kill = event >= 0 && is_the_kill(event);
    uint64_t off = positioned ? (uint64_t)at : 0;
    if (!kill && event == CRASH_EV_MAP_WRITE && kill_event == CRASH_EV_MAP_CROSS) {
        off = write_offset(fd);
        if ((off + n - 1) / 4096 != off / 4096) {
            event = CRASH_EV_MAP_CROSS;
            kill = is_the_kill(event);
        }
    } else if (kill && !positioned) {
        off = write_offset(fd);
    }
    if (!kill)
        return positioned ? syscall(SYS_pwrite64, fd, buf, n, at) : syscall(SYS_write, fd, buf, n);
    size_t cut = write_cut(off, n);
    record(event, n, cut, off, name);
    if (cut)
        syscall(SYS_pwrite64, fd, buf, cut, (off_t)off);
    die();
}

ssize_t write(int fd, const void *buf, size_t n)
{
    return hooked_write(fd, buf, n, 0, false);
}

ssize_t pwrite(int fd, const void *buf, size_t n, off_t at)
{
    return hooked_write(fd, buf, n, at, true);
}

#if !defined(pwrite64) && !OFFSET64_RENAMED /* musl: a macro for pwrite; i686: pwrite above */
ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at)
{
    return hooked_write(fd, buf, n, at, true);
}
#endif

/* ---- copies into mapped output files ---- */

static int range_event(const void *d, size_t n)
{
    uintptr_t a = (uintptr_t)d;
    for (int i = 0; i < MAX_RANGES; i++) {
        uintptr_t lo = atomic_load_explicit(&ranges[i].lo, memory_order_relaxed);
        if (lo && a >= lo && a + n <= atomic_load_explicit(&ranges[i].hi, memory_order_relaxed))
            return atomic_load_explicit(&ranges[i].event, memory_order_relaxed);
    }
    return -1;
}

/* Lets part of a copy through: a prefix, a suffix, or some 32-byte chunks. */
static void copy_cut(uint8_t *d, const uint8_t *s, size_t n, int event)
{
    uint64_t r = mix(kill_seed ^ 0x5bd1e995), k = n ? mix(r) % n : 0;
    uint64_t done = 0;
    switch (r % 4) {
    case 0:
    case 1:
        byte_copy(d, s, k);
        done = k;
        break;
    case 2:
        byte_copy(d + (n - k), s + (n - k), k);
        done = k;
        break;
    default:
        for (size_t c = 0; c < n; c += 32)
            if (mix(r + c) & 1) {
                size_t len = n - c < 32 ? n - c : 32;
                byte_copy(d + c, s + c, len);
                done += len;
            }
    }
    record(event, n, done, UINT64_MAX, NULL);
}

void *memcpy(void *d, const void *s, size_t n)
{
    int event = n ? range_event(d, n) : -1;
    if (event >= 0 && is_the_kill(event)) {
        copy_cut(d, s, n, event);
        die();
    }
    return real_memcpy ? real_memcpy(d, s, n) : byte_copy(d, s, n);
}

void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (!real_mmap)
        real_mmap = (void *(*)(void *, size_t, int, int, int, off_t))dlsym(RTLD_NEXT, REAL_MMAP);
    void *m = real_mmap(addr, len, prot, flags, fd, off);
    if (m == MAP_FAILED || fd < 0 || !(prot & PROT_WRITE) || !(flags & MAP_SHARED))
        return m;
    int event = classify_fd(fd, true, NULL, 0);
    if (event < 0)
        return m;
    pthread_mutex_lock(&ranges_lock);
    for (int i = 0; i < MAX_RANGES; i++)
        if (!atomic_load(&ranges[i].lo)) {
            atomic_store(&ranges[i].hi, (uintptr_t)m + len);
            atomic_store(&ranges[i].event, event);
            atomic_store(&ranges[i].lo, (uintptr_t)m);
            break;
        }
    pthread_mutex_unlock(&ranges_lock);
    return m;
}

int munmap(void *addr, size_t len)
{
    uintptr_t a = (uintptr_t)addr;
    pthread_mutex_lock(&ranges_lock);
    for (int i = 0; i < MAX_RANGES; i++) {
        uintptr_t lo = atomic_load(&ranges[i].lo);
        if (lo && lo < a + len && a < atomic_load(&ranges[i].hi))
            atomic_store(&ranges[i].lo, 0);
    }
    pthread_mutex_unlock(&ranges_lock);
    if (!real_munmap)
        real_munmap = (int (*)(void *, size_t))dlsym(RTLD_NEXT, "munmap");
    return real_munmap(addr, len);
}
