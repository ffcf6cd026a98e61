/* SPDX-License-Identifier: MIT */
/* The walk bench/unwind_cost.c and bench/scaling.c time: caller() calls a
 * function (directly, or through a trampoline) whose target() counts the
 * frames _Unwind_Backtrace (libgcc) steps through.  cpu_ns() is this
 * thread's CPU time, immune to preemption. */
#ifndef PERFTRAMP_BENCH_UNWIND_WALK_H
#define PERFTRAMP_BENCH_UNWIND_WALK_H

#include <stdint.h>
#include <time.h>
#include <unwind.h>

static volatile int g_frames;

static _Unwind_Reason_Code count(struct _Unwind_Context *ctx, void *arg)
{
    (void)ctx;
    (*(int *)arg)++;
    return _URC_NO_REASON;
}

__attribute__((noinline)) static int target(int x)
{
    int n = 0;
    _Unwind_Backtrace(count, &n);
    g_frames = n;
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

static uint64_t cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

#endif
