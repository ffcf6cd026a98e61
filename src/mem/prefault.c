/* SPDX-License-Identifier: MIT */
/* Mem layer: pre-faulting a new arena's pages in one system call.
 *
 * A trampoline is ~32 bytes of code plus ~24 of in-arena FDE, so an arena
 * filled page by page takes one page fault every few dozen wraps; in a VM
 * a fault costs microseconds (bench/PERFORMANCE.md, "cold arenas").
 * MADV_POPULATE_WRITE (Linux 5.14) faults the whole range in writable at
 * once, without writing it.  Older kernels say EINVAL: the pages then fault
 * on first write, as they did before, so every failure is ignored.
 *
 * The arena asks for its slots a chunk at a time, ahead of the fill
 * (mem/arena.c): populating a 16 MiB arena at once made the kernel zero
 * pages long before their first slot was written, so every wrap then
 * missed the cache on its slot (perf: a third of the wrap in its memcpy).
 *
 * Only whole pages inside the range are asked for: a libffi block may share
 * its first and last page with the allocator's other data.  File-backed
 * ELF arenas are left alone: populating them would dirty (and write back)
 * file pages no trampoline may ever use. */
#include "mem/codemem.h"

#include <stdatomic.h>
#include <sys/mman.h>
#include <unistd.h>

#ifndef MADV_POPULATE_WRITE
#define MADV_POPULATE_WRITE 23 /* Linux include/uapi/asm-generic/mman-common.h */
#endif

static atomic_bool prefault_off;

void pt_code_prefault_enable(bool on)
{
    atomic_store(&prefault_off, !on);
}

void pt_code_prefault(const struct pt_code_block *b, size_t off, size_t len)
{
    long page = sysconf(_SC_PAGESIZE);
    if (b->elf || !b->w || page <= 0 || off >= b->bytes || atomic_load(&prefault_off))
        return;
    if (len > b->bytes - off)
        len = b->bytes - off;
    uintptr_t mask = (uintptr_t)page - 1;
    uintptr_t start = ((uintptr_t)b->w + off + mask) & ~mask;
    uintptr_t end = ((uintptr_t)b->w + off + len) & ~mask;
    if (end > start)
        (void)madvise((void *)start, end - start, MADV_POPULATE_WRITE);
}
