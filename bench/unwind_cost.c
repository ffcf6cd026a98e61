/* The cost of one in-process unwind step (libgcc's _Unwind_Backtrace, the
 * unwinder of C++ exceptions and backtrace(3)) with 100 and with 1,000,000
 * live trampolines registered by PERFTRAMP_UNWIND.  One registered object
 * per arena, and arenas that grow to 16 MiB, keep the ratio near 1; one
 * object per trampoline would make it grow with the count (GCC 12's libgcc
 * searches its objects linearly on every step).
 *
 * Prints (bench/run.sh format):
 *   unwind_ratio_1M_vs_100: step time through a trampoline, 1M / 100 live
 *   unwind_ratio_direct_1M_vs_100: the same for a walk with no trampoline
 *   unwind_step_ns_100, unwind_step_ns_1M, unwind_objects_1M (arenas) */
#include "context.h"
#include "perftramp.h"

#include "../bench/bench.h"

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

/* Median ns per unwind step over `rounds` rounds of `iters` walks. */
static double step_ns(int_fn fn, int rounds, int iters)
{
    double v[32];
    caller(fn, 0); /* first walk after a registration sorts the new objects */
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = bench_now_ns();
        for (int i = 0; i < iters; i++)
            caller(fn, i);
        uint64_t t1 = bench_now_ns();
        v[r] = (double)(t1 - t0) / iters / g_frames;
    }
    return bench_median(v, (size_t)rounds);
}

int main(void)
{
    const int quick = bench_quick();
    const size_t big = quick ? 100000 : 1000000;
    const int rounds = quick ? 3 : 15, iters = quick ? 200 : 2000;
    struct perftramp_options o = {.outputs = PERFTRAMP_UNWIND};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        bench_na("unwind_ratio_1M_vs_100", strerror(errno));
        return 0;
    }
    int_fn first = NULL;
    for (size_t i = 0; i < 100; i++) {
        int_fn f = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "bench_unwind");
        if (!f) {
            bench_na("unwind_ratio_1M_vs_100", strerror(errno));
            return 0;
        }
        if (!first)
            first = f;
    }
    double small = step_ns(first, rounds, iters);
    double small_direct = step_ns(target, rounds, iters);
    int frames_small = g_frames;

    int_fn last = first;
    for (size_t i = 100; i < big; i++) {
        int_fn f = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "bench_unwind");
        if (!f) {
            bench_na("unwind_ratio_1M_vs_100", strerror(errno));
            return 0;
        }
        last = f;
    }
    uint64_t t0 = bench_now_ns();
    caller(last, 0);
    double first_walk_ms = (double)(bench_now_ns() - t0) / 1e6;
    double large = step_ns(first, rounds, iters);
    double large_last = step_ns(last, rounds, iters);
    double large_direct = step_ns(target, rounds, iters);

    bench_note("unwind_cost: %zu live trampolines in %zu arenas (one libgcc object each), %d frames per walk%s",
               big, pt->n_arenas, frames_small, quick ? " (BENCH_QUICK: 100k instead of 1M)" : "");
    bench_note("unwind_cost: first walk after registering them %.1f ms (libgcc sorts each new object once)",
               first_walk_ms);
    bench_value("unwind_step_ns_100", "%.1f", small);
    bench_value("unwind_step_ns_1M", "%.1f", large);
    bench_value("unwind_step_ns_1M_newest", "%.1f", large_last);
    bench_value("unwind_objects_1M", "%.0f", (double)pt->n_arenas);
    bench_value("unwind_ratio_1M_vs_100", "%.3f", (large > large_last ? large : large_last) / small);
    bench_value("unwind_ratio_direct_1M_vs_100", "%.3f", large_direct / small_direct);
    perftramp_close(pt);
    return 0;
}
