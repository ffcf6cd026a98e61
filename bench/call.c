/* SPDX-License-Identifier: MIT */
/* What calling through a trampoline costs.
 *
 *   bench_call wall       call_ratio_empty, call_ratio_100ns: wall time of a
 *                         loop of calls through a trampoline / the same loop
 *                         calling the target directly.  Blocks of the two
 *                         loops alternate and the figure is the median of
 *                         the per-pair ratios, so drift on a shared machine
 *                         hits both sides alike.
 *   bench_call count N    runs loop_direct and loop_tramp N times each, for
 *                         `valgrind --tool=callgrind --toggle-collect=loop_X`:
 *                         the Ir difference / N is the instructions a
 *                         trampoline adds to a call (bench/run.sh does it).
 *
 * Both loops call through a function pointer argument, so the only
 * difference is the trampoline itself. */
#include "bench.h"

#include "perftramp.h"

typedef long (*target_fn)(long);

/* noipa: no inlining, cloning or merging of identical bodies, so both loops
 * keep their own symbol and make a real indirect call.  clang has no noipa:
 * noinline there, and clang does not merge functions unless asked to. */
#if defined(__clang__)
#define BENCH_NOIPA __attribute__((noinline, used))
#else
#define BENCH_NOIPA __attribute__((noipa))
#endif
BENCH_NOIPA long loop_direct(target_fn f, long n);
BENCH_NOIPA long loop_tramp(target_fn f, long n);
BENCH_NOIPA long loop_direct(target_fn f, long n)
{
    unsigned long s = 0; /* wraps: the targets return arbitrary values */
    for (long i = 0; i < n; i++)
        s += (unsigned long)f(i);
    return (long)s;
}
BENCH_NOIPA long loop_tramp(target_fn f, long n)
{
    unsigned long s = 0; /* wraps: the targets return arbitrary values */
    for (long i = 0; i < n; i++)
        s += (unsigned long)f(i);
    return (long)s;
}

BENCH_NOIPA static long empty_target(long x)
{
    return x;
}

/* A dependent multiply-add chain: latency-bound, so its time per call is
 * steady; `spin` is calibrated to make one call last about 100 ns. */
static volatile long spin = 64;
BENCH_NOIPA static long work_target(long x)
{
    unsigned long v = (unsigned long)x;
    for (long k = spin; k > 0; k--)
        v = v * 6364136223846793005ul + 1442695040888963407ul;
    return (long)v;
}

static double time_loop(long (*loop)(target_fn, long), target_fn f, long n)
{
    uint64_t t0 = bench_now_ns();
    volatile long sink = loop(f, n);
    (void)sink;
    return (double)(bench_now_ns() - t0);
}

/* Median over `pairs` of t(tramp) / t(direct), each side `n` calls.
 * Blocks are short (~50 us) and many: on a shared machine a preemption or
 * a neighbour's burst spoils a few pairs, which the median ignores. */
static double call_ratio(target_fn direct, target_fn tramp, long n, int pairs, double *direct_ns, double *min_ratio)
{
    double *ratio = calloc((size_t)pairs, sizeof *ratio);
    double *per_call = calloc((size_t)pairs, sizeof *per_call);
    double min_d = 1e300, min_t = 1e300;
    time_loop(loop_direct, direct, n); /* warm up caches and predictors */
    time_loop(loop_tramp, tramp, n);
    for (int p = 0; p < pairs; p++) {
        double d, t;
        if (p % 2) { /* alternate the order: neither side always goes first */
            d = time_loop(loop_direct, direct, n);
            t = time_loop(loop_tramp, tramp, n);
        } else {
            t = time_loop(loop_tramp, tramp, n);
            d = time_loop(loop_direct, direct, n);
        }
        ratio[p] = t / d;
        per_call[p] = d / (double)n;
        if (d < min_d)
            min_d = d;
        if (t < min_t)
            min_t = t;
    }
    double m = bench_median(ratio, (size_t)pairs);
    *direct_ns = bench_median(per_call, (size_t)pairs);
    *min_ratio = min_t / min_d;
    free(ratio);
    free(per_call);
    return m;
}

/* Picks `spin` so that one direct call of work_target takes ~100 ns. */
static void calibrate_spin(void)
{
    for (int iter = 0; iter < 6; iter++) {
        double best = 1e30;
        for (int k = 0; k < 5; k++) {
            double t = time_loop(loop_direct, work_target, 20000) / 20000;
            if (t < best)
                best = t;
        }
        long next = (long)((double)spin * 100.0 / best + 0.5);
        if (next < 1)
            next = 1;
        if (next == spin)
            break;
        spin = next;
    }
}

static perftramp *open_or_die(void)
{
    struct perftramp_options o = {.outputs = 0};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        perror("perftramp_open");
        exit(1);
    }
    return pt;
}

static int run_wall(void)
{
    int quick = bench_quick();
    perftramp *pt = open_or_die();
    target_fn t_empty = (target_fn)perftramp_wrap(pt, (perftramp_fn)empty_target, "empty_target");
    target_fn t_work = (target_fn)perftramp_wrap(pt, (perftramp_fn)work_target, "work_target");
    if (!t_empty || !t_work) {
        perror("perftramp_wrap");
        return 1;
    }
    double d_ns, min_r;
    int pairs = quick ? 101 : 4001;
    double r = call_ratio(empty_target, t_empty, 20000, pairs, &d_ns, &min_r);
    bench_value("call_ratio_empty", "%.3f", r);
    bench_note("call_ratio_empty: direct call %.2f ns, through the trampoline %.2f ns (median of %d pairs; ratio of "
               "the fastest blocks %.3f)",
               d_ns, d_ns * r, pairs, min_r);
    calibrate_spin();
    r = call_ratio(work_target, t_work, 500, pairs, &d_ns, &min_r);
    bench_value("call_ratio_100ns", "%.4f", r);
    bench_note("call_ratio_100ns: target %.1f ns per direct call (spin %ld), %+.2f ns through the trampoline (median "
               "of %d pairs; ratio of the fastest blocks %.4f)",
               d_ns, (long)spin, d_ns * (r - 1), pairs, min_r);
    perftramp_close(pt);
    return 0;
}

static int run_count(long n)
{
    perftramp *pt = open_or_die();
    target_fn t_empty = (target_fn)perftramp_wrap(pt, (perftramp_fn)empty_target, "empty_target");
    if (!t_empty) {
        perror("perftramp_wrap");
        return 1;
    }
    volatile long sink = loop_direct(empty_target, n) + loop_tramp(t_empty, n);
    (void)sink;
    perftramp_close(pt);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "wall"))
        return run_wall();
    if (argc >= 3 && !strcmp(argv[1], "count"))
        return run_count(atol(argv[2]));
    fprintf(stderr, "usage: %s wall | count N\n", argv[0]);
    return 2;
}
