/* SPDX-License-Identifier: MIT */
/* Mem layer: code memory from libffi closures: perftramp's first choice, because
 * libffi already knows how this system wants executable memory made
 * (one RWX mapping, or an RW and an RX view of one file on hardened
 * systems).
 *
 * A libffi built with static trampolines (upstream's default on x86-64,
 * aarch64, i386 and arm Linux since 3.4; Debian turns them off) is
 * different: ffi_closure_alloc returns plain RW data and a code pointer
 * into a shared page of prebuilt trampolines, and the closure's first
 * word (ffi_closure.ftramp) holds the trampoline that ffi_closure_free
 * gives back.  Bytes written there are never executed, and bytes written
 * over the header make ffi_closure_free crash.  So: the probe writes only
 * past the header, and blocks used as code keep the header untouched too. */
#include "config.h"

#include "mem/codemem.h"

#include <errno.h>
#include <ffi.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* The closure header stays untouched: code starts after it. */
static size_t header_bytes(void)
{
    return (sizeof(ffi_closure) + 15) & ~(size_t)15;
}

static int ffi_alloc(struct pt_code_block *b, size_t bytes, size_t align)
{
    /* ffi_closure_alloc promises only malloc's alignment (8 mod 16 was
     * seen): ask for align - 1 more and start at the first aligned
     * executable address past the header. */
    size_t skip = header_bytes();
    size_t total = skip + bytes + (align - 1);
    void *code = NULL;
    void *closure = ffi_closure_alloc(total, &code);
    if (!closure || !code) {
        if (closure)
            ffi_closure_free(closure);
        errno = ENOMEM;
        return -1;
    }
    uintptr_t x0 = (uintptr_t)code + skip;
    uintptr_t x = (x0 + align - 1) & ~(uintptr_t)(align - 1);
    size_t off = skip + (x - x0);
    *b = (struct pt_code_block){.w = (uint8_t *)closure + off, .x = (uintptr_t)code + off,
                                .bytes = total - off, .backend = &pt_code_ffi, .kind = "libffi",
                                .base = closure, .map_bytes = total};
    return 0;
}

static void ffi_free(struct pt_code_block *b)
{
    if (b->base)
        ffi_closure_free(b->base);
    b->base = NULL;
}

/* libffi's memory is private (copy-on-write across fork), or libffi's own
 * business: no fork handlers. */
const struct pt_code_backend pt_code_ffi = {"libffi", ffi_alloc, ffi_free, NULL, NULL, NULL};

/* Reads n bytes at addr without faulting: the kernel copies them into a
 * pipe and says EFAULT where they are not readable.  mincore first, so a
 * range that is not mapped at all is never handed to the kernel either
 * (valgrind reports those as errors). */
static int read_without_fault(uintptr_t addr, void *out, size_t n)
{
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0)
        page = 4096;
    uintptr_t first = addr & ~(uintptr_t)(page - 1);
    unsigned char vec[4];
    size_t span = addr + n - first;
    if (span > sizeof vec * (size_t)page || mincore((void *)first, span, vec) != 0)
        return -1;
    int p[2];
    if (pipe2(p, O_CLOEXEC) != 0)
        return -1;
    int ok = write(p[1], (const void *)addr, n) == (ssize_t)n && read(p[0], out, n) == (ssize_t)n;
    int e = errno;
    close(p[0]);
    close(p[1]);
    errno = e;
    return ok ? 0 : -1;
}

int pt_ffi_closures_are_code(void)
{
    const size_t size = 4096;
    void *code = NULL;
    uint8_t *w = ffi_closure_alloc(size, &code);
    if (!w) {
        errno = ENOMEM;
        return -1;
    }
    int yes = 0;
    if (code) {
        /* Two marks that name this block, one right past the header and
         * one at its end: both must show at the code address. */
        size_t at[2] = {header_bytes(), size - 16};
        yes = 1;
        for (int i = 0; i < 2 && yes; i++) {
            uint8_t mark[16], seen[16];
            uint64_t where = (uint64_t)(uintptr_t)(w + at[i]);
            memcpy(mark, "perftramp-probe!", 8);
            memcpy(mark + 8, &where, 8);
            memcpy(w + at[i], mark, sizeof mark);
            yes = read_without_fault((uintptr_t)code + at[i], seen, sizeof seen) == 0 &&
                  memcmp(seen, mark, sizeof mark) == 0;
        }
    }
    ffi_closure_free(w); /* its header was never written */
    return yes;
}
