/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_UNWIND where libgcc reads Arm EHABI tables
 * (32-bit Arm): how libgcc finds the index tables of live code.
 *
 * libgcc's Arm unwinder has no registration call (no __register_frame).
 * For each frame it asks __gnu_Unwind_Find_exidx(pc - 2, &count) for the
 * index table covering that pc (libgcc/config/arm/unwind-arm-common.inc,
 * get_eit_entry); glibc defines it (version GLIBC_2.4), returning the
 * PT_ARM_EXIDX segment of the loaded object that holds the pc.  This file
 * defines it too, exported with glibc's version (src/api/libperftramp-ehabi.map),
 * so that libgcc's versioned reference binds to this one whenever
 * libperftramp comes before libc in the global lookup scope: linked into
 * the program (its DT_NEEDED precede libc's), or LD_PRELOADed.  Static
 * programs resolve libgcc's weak reference at link time, to this one.  It
 * answers for the ranges registered here and passes every other pc to
 * glibc's own lookup (_dl_find_object, as glibc >= 2.35 does; else
 * dl_iterate_phdr).  A libperftramp that is dlopen'ed is not in the global
 * scope: libgcc keeps glibc's function, and pt_ehabi_usable() says so
 * before anything is registered (the output fails with ENOTSUP).
 *
 * The registry is read inside unwinders, from any thread and from signal
 * handlers (a profiler's backtrace(3) in SIGPROF), while wraps in other
 * threads add arenas: readers take no lock.  Each range is a fixed slot
 * with a sequence count (odd while a writer changes it); a reader that
 * sees it odd or changed tries again a few times, then skips the slot: a
 * range being added has no live code yet, one being removed none any
 * more.  Writers serialize on a mutex.  The slots come in chunks a writer
 * allocates when all are taken and nobody frees (a reader may be in one):
 * 65,536 ranges at most, arenas and published regions together.  Readers
 * scan the slots ever used: a dozen arenas hold a million trampolines, but
 * each published region is a range of its own. */
#include "config.h"

#include "outputs/outputs.h"

#include "emit/ehabi.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdlib.h>
#include <sys/mman.h>

#define PT_EHABI_CHUNK 256
#define PT_EHABI_CHUNKS 256

struct range {
    atomic_uint seq;
    atomic_uintptr_t lo, hi, index;
    atomic_int count;
};

static _Atomic(struct range *) chunks[PT_EHABI_CHUNKS];
static atomic_size_t ranges_used; /* slots [0, ranges_used) were ever used, their chunks published */
static pthread_mutex_t ranges_lock = PTHREAD_MUTEX_INITIALIZER;

static struct range *range_at(size_t i)
{
    return atomic_load_explicit(&chunks[i / PT_EHABI_CHUNK], memory_order_acquire) + i % PT_EHABI_CHUNK;
}

int pt_ehabi_add(uintptr_t lo, uintptr_t hi, const void *index, size_t count)
{
    if (lo >= hi || !index || count == 0 || count > INT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&ranges_lock);
    size_t used = atomic_load_explicit(&ranges_used, memory_order_relaxed), i = 0;
    while (i < used && atomic_load_explicit(&range_at(i)->hi, memory_order_relaxed))
        i++;
    int e = i == (size_t)PT_EHABI_CHUNKS * PT_EHABI_CHUNK ? ENOSPC : 0;
    if (!e && !atomic_load_explicit(&chunks[i / PT_EHABI_CHUNK], memory_order_relaxed)) {
        struct range *c = calloc(PT_EHABI_CHUNK, sizeof *c);
        if (c)
            atomic_store_explicit(&chunks[i / PT_EHABI_CHUNK], c, memory_order_release);
        else
            e = ENOMEM;
    }
    if (e) {
        pthread_mutex_unlock(&ranges_lock);
        errno = e;
        return -1;
    }
    struct range *r = range_at(i);
    unsigned s = atomic_load_explicit(&r->seq, memory_order_relaxed);
    atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&r->lo, lo, memory_order_relaxed);
    atomic_store_explicit(&r->index, (uintptr_t)index, memory_order_relaxed);
    atomic_store_explicit(&r->count, (int)count, memory_order_relaxed);
    atomic_store_explicit(&r->hi, hi, memory_order_relaxed);
    atomic_store_explicit(&r->seq, s + 2, memory_order_release);
    if (i == used)
        atomic_store_explicit(&ranges_used, used + 1, memory_order_release);
    pthread_mutex_unlock(&ranges_lock);
    return (int)i;
}

void pt_ehabi_remove(int id)
{
    if (id < 0 || (size_t)id >= atomic_load_explicit(&ranges_used, memory_order_acquire))
        return;
    pthread_mutex_lock(&ranges_lock);
    struct range *r = range_at((size_t)id);
    unsigned s = atomic_load_explicit(&r->seq, memory_order_relaxed);
    atomic_store_explicit(&r->seq, s + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    atomic_store_explicit(&r->hi, 0, memory_order_relaxed);
    atomic_store_explicit(&r->lo, 0, memory_order_relaxed);
    atomic_store_explicit(&r->index, 0, memory_order_relaxed);
    atomic_store_explicit(&r->count, 0, memory_order_relaxed);
    atomic_store_explicit(&r->seq, s + 2, memory_order_release);
    pthread_mutex_unlock(&ranges_lock);
}

uintptr_t pt_ehabi_find(uintptr_t pc, int *count)
{
    size_t used = atomic_load_explicit(&ranges_used, memory_order_acquire);
    for (size_t i = 0; i < used; i++) {
        struct range *r = range_at(i);
        for (int tries = 0; tries < 4; tries++) {
            unsigned s = atomic_load_explicit(&r->seq, memory_order_acquire);
            if (s & 1)
                continue; /* a writer is in the middle: look again */
            uintptr_t lo = atomic_load_explicit(&r->lo, memory_order_relaxed);
            uintptr_t hi = atomic_load_explicit(&r->hi, memory_order_relaxed);
            uintptr_t index = atomic_load_explicit(&r->index, memory_order_relaxed);
            int n = atomic_load_explicit(&r->count, memory_order_relaxed);
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&r->seq, memory_order_relaxed) != s)
                continue;
            if (pc >= lo && pc < hi) {
                *count = n;
                return index;
            }
            break;
        }
    }
    return 0;
}

/* Whether [lo, hi) and the code span of [code_lo, code_hi) are within
 * prel31's reach of each other both ways. */
static bool in_reach(uintptr_t lo, uintptr_t hi, uintptr_t code_lo, uintptr_t code_hi)
{
    uint64_t far = (uint64_t)(hi > code_lo ? hi - code_lo : code_lo - lo);
    uint64_t far2 = (uint64_t)(code_hi > lo ? code_hi - lo : hi - code_hi);
    return far < (UINT64_C(1) << 30) && far2 < (UINT64_C(1) << 30);
}

/* Memory for the tables, within reach of the code: where mmap puts it
 * (next to the code's own mapping, usually), else at hints around it. */
static void *map_near(uintptr_t code_lo, uintptr_t code_hi, size_t len)
{
    void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p != MAP_FAILED && in_reach((uintptr_t)p, (uintptr_t)p + len, code_lo, code_hi))
        return p;
    if (p != MAP_FAILED)
        munmap(p, len);
    for (uintptr_t step = 1u << 20; step && step < (1u << 29); step <<= 1)
        for (int sign = -1; sign <= 1; sign += 2) {
            uintptr_t hint = sign < 0 ? (code_lo & ~(uintptr_t)0xfffff) - step : (code_hi | 0xfffff) + 1 + step;
            p = mmap((void *)hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                continue;
            if (in_reach((uintptr_t)p, (uintptr_t)p + len, code_lo, code_hi))
                return p;
            munmap(p, len);
        }
    errno = ERANGE;
    return NULL;
}

int pt_ehabi_publish(struct pt_ehabi_map *m, const struct pt_ehabi_region *r, size_t n_regions, uintptr_t code,
                     size_t count, size_t stride, size_t end, bool big_endian)
{
    *m = (struct pt_ehabi_map){.id = -1};
    size_t n_index;
    size_t len = pt_ehabi_tables(NULL, 0, 0, code, count, stride, end, r, n_regions, big_endian, &n_index);
    uintptr_t code_hi = code + (count - 1) * stride + end;
    if (!len)
        return -1;
    uint8_t *p = map_near(code, code_hi, len);
    if (!p)
        return -1;
    if (!pt_ehabi_tables(p, len, (uintptr_t)p, code, count, stride, end, r, n_regions, big_endian, &n_index)) {
        int e = errno;
        munmap(p, len);
        errno = e;
        return -1;
    }
    mprotect(p, len, PROT_READ); /* nothing writes it again; a failure leaves it writable, still right */
    /* from the first entry's start: libgcc asks for pc - 2, also for the
     * first instruction interrupted by a signal (emit/ehabi.h) */
    m->id = pt_ehabi_add(code - PT_EHABI_SHIFT, code_hi, p, n_index);
    if (m->id < 0) {
        int e = errno;
        munmap(p, len);
        errno = e;
        return -1;
    }
    m->mem = p;
    m->len = len;
    return 0;
}

void pt_ehabi_unpublish(struct pt_ehabi_map *m)
{
    if (m->id < 0)
        return;
    pt_ehabi_remove(m->id);
    munmap(m->mem, m->len);
    *m = (struct pt_ehabi_map){.id = -1};
}

#if defined(__ARM_EABI__)
#include <dlfcn.h>
#include <link.h>

/* The loaded object's own table: what glibc's __gnu_Unwind_Find_exidx
 * answers (sysdeps/arm/find_exidx.c: _dl_find_object since 2.35). */
#if defined(DLFO_EH_SEGMENT_TYPE)
static uintptr_t object_exidx(uintptr_t pc, int *count)
{
    struct dl_find_object o;
    if (_dl_find_object((void *)pc, &o) < 0)
        return 0;
    *count = o.dlfo_eh_count;
    return (uintptr_t)o.dlfo_eh_frame;
}
#else
struct phdr_query {
    uintptr_t pc, table;
    int count;
};

static int phdr_match(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    struct phdr_query *q = arg;
    const ElfW(Phdr) *exidx = NULL;
    bool inside = false;
    for (size_t k = 0; k < info->dlpi_phnum; k++) {
        const ElfW(Phdr) *p = &info->dlpi_phdr[k];
        uintptr_t start = info->dlpi_addr + p->p_vaddr;
        if (p->p_type == PT_LOAD && q->pc >= start && q->pc < start + p->p_memsz)
            inside = true;
        else if (p->p_type == PT_ARM_EXIDX)
            exidx = p;
    }
    if (!inside)
        return 0;
    if (exidx) {
        q->table = info->dlpi_addr + exidx->p_vaddr;
        q->count = (int)(exidx->p_memsz / 8);
    }
    return 1;
}

static uintptr_t object_exidx(uintptr_t pc, int *count)
{
    struct phdr_query q = {.pc = pc};
    dl_iterate_phdr(phdr_match, &q);
    *count = q.count;
    return q.table;
}
#endif

/* libgcc's lookup, exported as __gnu_Unwind_Find_exidx (the version node
 * is GLIBC_2.4: see the top).  The hidden name is this library's own
 * address of it: the exported name, taken in a shared library, resolves
 * through the lookup scope to whichever definition comes first. */
static uintptr_t find_exidx(uintptr_t pc, int *count)
{
    uintptr_t t = pt_ehabi_find(pc, count);
    return t ? t : object_exidx(pc, count);
}
__attribute__((visibility("default"), alias("find_exidx"))) uintptr_t __gnu_Unwind_Find_exidx(uintptr_t pc,
                                                                                               int *count);

int pt_ehabi_usable(void)
{
    /* the definition the process's lookup scope gives libgcc's versioned
     * reference; NULL in a static program (no dynamic symbols: libgcc's
     * reference was bound to this one at link time) */
    void *seen = dlvsym(RTLD_DEFAULT, "__gnu_Unwind_Find_exidx", "GLIBC_2.4");
    if (seen && seen != (void *)find_exidx) {
        errno = ENOTSUP;
        return -1;
    }
    return 0;
}
#else
int pt_ehabi_usable(void)
{
    errno = ENOTSUP; /* no EHABI unwinder to feed on this machine */
    return -1;
}
#endif
