/* SPDX-License-Identifier: MIT */
/* Mem layer: cache maintenance, written out per architecture instead of left to
 * __builtin___clear_cache, which does not do it everywhere (checked with
 * GCC 12 and clang 14, Debian 12): on ppc64le GCC emits nothing and clang
 * calls libgcc's __clear_cache, an empty function there; on riscv64 clang
 * calls that same empty function; on aarch64 both call __clear_cache out
 * of line; on s390x both emit nothing.  tests/mem/icache_flush.sh finds the
 * sequences below in the cross builds of perftramp_wrap and of the release
 * path. */
#include "config.h"

#include "mem/icache.h"

#include <stdatomic.h>

#if defined(__powerpc64__)
#include <sys/auxv.h>
#endif
#if defined(__arm__)
#include <sys/syscall.h>
#include <unistd.h>
#endif
#if defined(__riscv) && defined(__has_include) && !defined(PT_NO_SYS_CACHECTL)
#if __has_include(<sys/cachectl.h>)
#include <sys/cachectl.h>
#define PT_HAVE_RISCV_FLUSH_ICACHE 1
#endif
#endif

#if defined(__aarch64__) || defined(__powerpc64__)
/* Line sizes never change while the process runs: read them once (an
 * EL0 read of CTR_EL0 traps to the kernel on some cores). 0: not yet. */
static _Atomic uintptr_t dline_cached, iline_cached;
#endif

#if defined(__aarch64__)
/* Arm ARM, "Synchronization and coherency issues between data and
 * instruction accesses": clean each D-cache line to the point of
 * unification, DSB ISH, invalidate each I-cache line, DSB ISH, ISB.  The
 * IC IVAU is broadcast to every core of the inner shareable domain.
 * CTR_EL0.IDC/DIC could let some cores skip a step; the full sequence is
 * right on all of them. */
static void flush_range(uintptr_t start, uintptr_t end)
{
    uintptr_t dline = atomic_load_explicit(&dline_cached, memory_order_relaxed);
    uintptr_t iline = atomic_load_explicit(&iline_cached, memory_order_relaxed);
    if (!dline || !iline) {
        uint64_t ctr;
        __asm__ volatile("mrs %0, ctr_el0" : "=r"(ctr));
        /* DminLine [19:16], IminLine [3:0]: log2 of the smallest line, in 4-byte words */
        dline = (uintptr_t)4 << ((ctr >> 16) & 0xf);
        iline = (uintptr_t)4 << (ctr & 0xf);
        atomic_store_explicit(&dline_cached, dline, memory_order_relaxed);
        atomic_store_explicit(&iline_cached, iline, memory_order_relaxed);
    }
    for (uintptr_t p = start & ~(dline - 1); p < end; p += dline)
        __asm__ volatile("dc cvau, %0" ::"r"(p) : "memory");
    __asm__ volatile("dsb ish" ::: "memory");
    for (uintptr_t p = start & ~(iline - 1); p < end; p += iline)
        __asm__ volatile("ic ivau, %0" ::"r"(p) : "memory");
    __asm__ volatile("dsb ish\n\tisb" ::: "memory");
}
#elif defined(__powerpc64__)
/* A cache block size from the aux vector (the kernel passes
 * AT_DCACHEBSIZE/AT_ICACHEBSIZE on Power); when absent or odd, 32 bytes,
 * the smallest block of any 64-bit Power core: stepping by less than the
 * real block only repeats work. */
static uintptr_t block_size(unsigned long type)
{
    unsigned long v = getauxval(type);
    return v >= 16 && !(v & (v - 1)) ? (uintptr_t)v : 32;
}

/* Power ISA Book II, "Instruction Storage": dcbst each data block (store
 * it to memory), sync (wait for the stores), icbi each instruction block
 * (invalidate it everywhere), sync (wait for the invalidations on every
 * processor), isync (discard what this processor prefetched). */
static void flush_range(uintptr_t start, uintptr_t end)
{
    uintptr_t dline = atomic_load_explicit(&dline_cached, memory_order_relaxed);
    uintptr_t iline = atomic_load_explicit(&iline_cached, memory_order_relaxed);
    if (!dline || !iline) {
        dline = block_size(AT_DCACHEBSIZE);
        iline = block_size(AT_ICACHEBSIZE);
        atomic_store_explicit(&dline_cached, dline, memory_order_relaxed);
        atomic_store_explicit(&iline_cached, iline, memory_order_relaxed);
    }
    for (uintptr_t p = start & ~(dline - 1); p < end; p += dline)
        __asm__ volatile("dcbst 0,%0" ::"r"(p) : "memory");
    __asm__ volatile("sync" ::: "memory");
    for (uintptr_t p = start & ~(iline - 1); p < end; p += iline)
        __asm__ volatile("icbi 0,%0" ::"r"(p) : "memory");
    __asm__ volatile("sync\n\tisync" ::: "memory");
}
#elif defined(__riscv)
/* fence.i only orders this hart's own fetches (RISC-V unprivileged ISA,
 * "Zifencei"), and the thread may move to another hart.  The kernel's
 * riscv_flush_icache(start, end, flags) with flags 0 makes every hart
 * that runs this process execute fence.i before it next runs its code
 * (SYS_RISCV_FLUSH_ICACHE_LOCAL, 1, would limit it to this thread).
 * glibc wraps it as __riscv_flush_icache (<sys/cachectl.h>); without the
 * header, the system call itself: number 259 = __NR_arch_specific_syscall
 * (244) + 15 (Linux arch/riscv/include/uapi/asm/unistd.h), arguments in
 * a0-a2, number in a7. */
static void flush_range(uintptr_t start, uintptr_t end)
{
#ifdef PT_HAVE_RISCV_FLUSH_ICACHE
    __riscv_flush_icache((void *)start, (void *)end, 0);
#else
    register uintptr_t a0 __asm__("a0") = start;
    register uintptr_t a1 __asm__("a1") = end;
    register uintptr_t a2 __asm__("a2") = 0;
    register uintptr_t a7 __asm__("a7") = 259;
    __asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
#endif
}
#elif defined(__arm__)
/* 32-bit Arm: the cache maintenance operations are privileged (Arm ARM
 * DDI 0406C, B4.2.1: CP15 c7 at PL1), so Linux offers a system call:
 * cacheflush(start, end, 0), __ARM_NR_cacheflush = 0x0f0002 (Linux
 * arch/arm/include/uapi/asm/unistd.h, arch/arm/kernel/traps.c).  It
 * cleans the data cache to the point of unification and invalidates the
 * instruction cache over the range, with ARMv7's maintenance broadcast to
 * every core of the inner shareable domain.  Flags must be 0. */
static void flush_range(uintptr_t start, uintptr_t end)
{
    syscall(__ARM_NR_cacheflush, start, end, 0);
}
#elif defined(__s390x__)
/* z/Architecture has no cache instructions for programs: a CPU sees its
 * own earlier stores when it fetches through the same logical address,
 * but prefetched copies may survive stores through another address (our
 * double-mapped memory: Principles of Operation, "Instruction Fetching")
 * until a serializing operation discards them.  BCR 15,0 serializes. */
static void flush_range(uintptr_t start, uintptr_t end)
{
    (void)start;
    (void)end;
    __asm__ volatile("bcr 15,0" ::: "memory");
}
#else
/* x86-64: instruction fetch snoops stores by physical address (its table
 * says no flush). */
static void flush_range(uintptr_t start, uintptr_t end)
{
    __builtin___clear_cache((char *)start, (char *)end);
}
#endif

void pt_icache_flush(const struct pt_arch *arch, uintptr_t x, size_t len)
{
    if (arch->icache != PT_ICACHE_FLUSH || len == 0)
        return;
    flush_range(x, x + len);
}
