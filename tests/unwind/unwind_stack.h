/* SPDX-License-Identifier: MIT */
/* The stack the Check-based unwinding tests walk: recorder <- target <-
 * [trampoline] <- caller <- test ... <- bottom.  target and caller never
 * inline, and one call site serves the direct call and the call through
 * the trampoline, so every frame below the caller matches.  Include once,
 * after <check.h>, "perftramp.h", "context.h" and "unwind_common.h". */
#ifndef PT_TEST_UNWIND_STACK_H
#define PT_TEST_UNWIND_STACK_H

#include <errno.h>
#include <string.h>

static struct pt_trace g_trace;
static void (*volatile g_recorder)(struct pt_trace *);

__attribute__((noinline)) static int target(int x)
{
    g_recorder(&g_trace);
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

typedef int (*int_fn)(int);

__attribute__((noinline)) static int caller(int_fn fn, int x)
{
    int r = fn(x);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

static perftramp *open_with(unsigned outputs)
{
    struct perftramp_options o = {.outputs = outputs};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    return pt;
}

/* Traces the direct call and the call through `tramp` with `recorder`;
 * returns the comparison's verdict (NULL: one extra frame, same bottom). */
static const char *trace_through(perftramp *pt, int_fn tramp, void (*recorder)(struct pt_trace *))
{
    int_fn fns[2] = {target, tramp};
    struct pt_trace out[2];
    g_recorder = recorder;
    for (volatile int k = 0; k < 2; k++) {
        ck_assert_int_eq(caller(fns[k], 1), 3);
        out[k] = g_trace;
    }
    uintptr_t lo = (uintptr_t)tramp;
    return pt_trace_compare(&out[0], &out[1], lo, lo + pt->layout.size);
}

#endif
