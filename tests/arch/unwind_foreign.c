/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_UNWIND on any architecture, without Check: a static program
 * tests/arch/unwind_foreign.sh builds with each foreign table's cross gcc and
 * runs under qemu-<arch>-static (natively for the host).  libgcc's
 * _Unwind_Backtrace from a target sees exactly one extra frame through a
 * trampoline and the same bottom as a direct call: one trampoline, then
 * the first and the last of 20,001 (several arenas), with PERFTRAMP_GDB on
 * as well in a second pass (its ELF images are built in the table's byte
 * order).  The control: without PERFTRAMP_UNWIND the walk must not reach
 * the bottom.  Prints "N passed, M failed". */
#include "api/context.h"
#include "perftramp.h"
#include "../unwind/unwind_common.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unwind.h>

static struct pt_trace g_trace;
static int passed, failed;

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    struct pt_trace *t = arg;
    if (t->n >= PT_MAX_FRAMES)
        return _URC_END_OF_STACK;
    t->ip[t->n++] = (uintptr_t)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}

__attribute__((noinline)) static void record(void)
{
    g_trace.n = 0;
    _Unwind_Backtrace(collect, &g_trace);
    __asm__ volatile("" ::: "memory");
}

__attribute__((noinline)) static long target(long x)
{
    record();
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

typedef long (*long_fn)(long);

__attribute__((noinline)) static long caller(long_fn fn, long x)
{
    long r = fn(x);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

/* NULL when the walk through `tramp` is the direct walk plus one frame. */
static const char *walk(perftramp *pt, long_fn tramp)
{
    long_fn fns[2] = {target, tramp};
    struct pt_trace out[2];
    for (volatile int k = 0; k < 2; k++) {
        if (caller(fns[k], 1) != 3)
            return "wrong return value";
        out[k] = g_trace;
    }
    uintptr_t lo = (uintptr_t)tramp;
    return pt_trace_compare(&out[0], &out[1], lo, lo + pt->layout.size);
}

static void expect(int ok, const char *arch, const char *what, const char *why)
{
    if (ok) {
        passed++;
    } else {
        failed++;
        printf("FAIL %s: %s%s%s\n", arch, what, why ? ": " : "", why ? why : "");
    }
}

int main(void)
{
    static const unsigned passes[3] = {0, PERFTRAMP_UNWIND, PERFTRAMP_UNWIND | PERFTRAMP_GDB};
    for (int p = 0; p < 3; p++) {
        struct perftramp_options o = {.outputs = passes[p]};
        perftramp *pt = perftramp_open(&o);
        if (!pt) {
            printf("FAIL perftramp_open(%#x): %s\n", passes[p], strerror(errno));
            return 1;
        }
        const char *arch = pt->arch->name;
        long_fn first = (long_fn)perftramp_wrap(pt, (perftramp_fn)target, "py::first");
        if (!first) {
            printf("FAIL perftramp_wrap: %s\n", strerror(errno));
            return 1;
        }
        const char *why = walk(pt, first);
        if (passes[p] == 0) {
            expect(why != NULL, arch, "control: the walk reached the bottom without registration", NULL);
            perftramp_close(pt);
            continue;
        }
        expect(why == NULL, arch, "one trampoline", why);
        long_fn last = first;
        for (int i = 0; i < 20000 && last; i++)
            last = (long_fn)perftramp_wrap(pt, (perftramp_fn)target, "py::many");
        expect(last != NULL, arch, "wrap 20,000", NULL);
        if (last) {
            expect(walk(pt, first) == NULL, arch, "first of 20,001", walk(pt, first));
            expect(walk(pt, last) == NULL, arch, "last of 20,001", walk(pt, last));
        }
        printf("# %s: outputs %#x, %zu arenas\n", arch, passes[p], pt->slots.n_arenas);
        expect(perftramp_close(pt) == 0, arch, "close", strerror(errno));
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
