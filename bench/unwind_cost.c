/* SPDX-License-Identifier: MIT */
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
#include "api/context.h"
#include "perftramp.h"

#include "../bench/bench.h"
#include "../bench/unwind_walk.h"

/* Median CPU ns per unwind step over `rounds` rounds of `iters` walks. */
static double step_ns(int_fn fn, int rounds, int iters)
{
    double v[32];
    caller(fn, 0); /* the first walk after a registration sorts new objects */
    for (int r = 0; r < rounds; r++) {
        uint64_t t0 = cpu_ns();
        for (int i = 0; i < iters; i++)
            caller(fn, i);
        uint64_t t1 = cpu_ns();
        v[r] = (double)(t1 - t0) / iters / g_frames;
    }
    return bench_median(v, (size_t)rounds);
}

static perftramp *open_unwind(void)
{
    struct perftramp_options o = {.outputs = PERFTRAMP_UNWIND};
    return perftramp_open(&o);
}

int main(void)
{
    const int quick = bench_quick();
    const size_t big = quick ? 100000 : 1000000;
    const int reps = quick ? 1 : 3, rounds = quick ? 3 : 9, iters = quick ? 200 : 2000;
    /* 100 live trampolines for the whole run; the other 999,900 come and
     * go in a second context, so the two states alternate and drift in
     * the machine's speed hits both */
    perftramp *small = open_unwind();
    if (!small) {
        bench_na("unwind_ratio_1M_vs_100", strerror(errno));
        return 0;
    }
    int_fn first = NULL;
    for (size_t i = 0; i < 100; i++) {
        int_fn f = (int_fn)perftramp_wrap(small, (perftramp_fn)target, "bench_unwind");
        if (!f) {
            bench_na("unwind_ratio_1M_vs_100", strerror(errno));
            return 0;
        }
        if (!first)
            first = f;
    }
    double a[8], b[8], b_new[8], a_direct[8], b_direct[8], first_walk_ms = 0;
    size_t objects = 0;
    int frames = 0;
    for (int r = 0; r < reps; r++) {
        a[r] = step_ns(first, rounds, iters);
        a_direct[r] = step_ns(target, rounds, iters);
        frames = g_frames;
        perftramp *pt = open_unwind();
        int_fn last = NULL;
        for (size_t i = 100; pt && i < big; i++)
            if (!(last = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "bench_unwind")))
                break;
        if (!pt || !last) {
            bench_na("unwind_ratio_1M_vs_100", strerror(errno));
            return 0;
        }
        uint64_t t0 = bench_now_ns();
        caller(last, 0);
        first_walk_ms = (double)(bench_now_ns() - t0) / 1e6;
        b[r] = step_ns(first, rounds, iters);
        b_new[r] = step_ns(last, rounds, iters);
        b_direct[r] = step_ns(target, rounds, iters);
        objects = small->slots.n_arenas + pt->slots.n_arenas;
        perftramp_close(pt);
    }
    double sa = bench_median(a, (size_t)reps), sb = bench_median(b, (size_t)reps);
    double sbn = bench_median(b_new, (size_t)reps);
    double da = bench_median(a_direct, (size_t)reps), db = bench_median(b_direct, (size_t)reps);

    bench_note("unwind_cost: %zu live trampolines in %zu arenas (one libgcc object each), %d frames per walk%s",
               big, objects, frames, quick ? " (BENCH_QUICK: 100k instead of 1M)" : "");
    bench_note("unwind_cost: first walk after registering them %.1f ms (libgcc sorts each new object once)",
               first_walk_ms);
    bench_value("unwind_step_ns_100", "%.1f", sa);
    bench_value("unwind_step_ns_1M", "%.1f", sb);
    bench_value("unwind_step_ns_1M_newest", "%.1f", sbn);
    bench_value("unwind_objects_1M", "%.0f", (double)objects);
    bench_value("unwind_ratio_1M_vs_100", "%.3f", (sb > sbn ? sb : sbn) / sa);
    bench_value("unwind_ratio_direct_1M_vs_100", "%.3f", db / da);
    perftramp_close(small);
    return 0;
}
