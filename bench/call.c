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

#include "api/context.h"
#include "mem/codemem.h"
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

/* Targets for the direct-call table (PERFTRAMP_NEAR_CALLS): it needs a
 * target within +-2 GiB of the arena, and the C functions above lie in
 * the executable, far from mmap'd code memory on a PIE.  So the same two
 * bodies, hand-assembled into a block of the same code memory (Intel SDM
 * vol. 2 encodings), serve as the near targets; the direct side of the
 * ratio calls the same bytes.
 *   empty: mov %rdi,%rax; ret
 *   work:  mov %rdi,%rax; mov $spin,%ecx;
 *          1: imul %rax,%rax; add $1,%rax; dec %ecx; jnz 1b; ret */
static const uint8_t near_empty_code[] = {0x48, 0x89, 0xf8, 0xc3};
static const uint8_t near_work_code[] = {0x48, 0x89, 0xf8, 0xb9, 0, 0, 0, 0,            /* spin at byte 4 */
                                         0x48, 0x0f, 0xaf, 0xc0, 0x48, 0x83, 0xc0, 0x01, /* imul, add */
                                         0xff, 0xc9, 0x75, 0xf4, 0xc3};                   /* dec, jnz -12, ret */
struct near_targets {
    struct pt_code_block b;
    target_fn empty, work;
};

/* The work body sits on a page of its own, 4 KiB past the empty one.
 * With both bodies in one 64 B-aligned block (work at +64), calls through
 * either table were +3.4 to +4.0 ns on the ~100 ns body against +1.0 ns
 * for the C target (call_ratio_100ns_near 1.034-1.046, _main_gen
 * 1.040-1.045, AMD EPYC, loaded); on its own page the same bytes gave
 * +0.8 ns (1.008) and +1.0 ns (1.010): a placement effect of the
 * hand-made block on the trampoline side only (the direct side ran at the
 * same 98 ns), not the cost of either table. */
#define NEAR_WORK_OFF 4160u

static void near_targets_make(struct near_targets *t)
{
    if (pt_code_alloc(&t->b, 8192, 64) < 0) {
        perror("pt_code_alloc");
        exit(1);
    }
    memcpy(t->b.w, near_empty_code, sizeof near_empty_code);
    memcpy(t->b.w + NEAR_WORK_OFF, near_work_code, sizeof near_work_code);
    t->empty = (target_fn)t->b.x;
    t->work = (target_fn)(t->b.x + NEAR_WORK_OFF);
}

static void near_work_set_spin(struct near_targets *t, uint32_t n)
{
    memcpy(t->b.w + NEAR_WORK_OFF + 4, &n, sizeof n);
}

/* Picks the near work target's count so that one direct call takes ~100 ns. */
static uint32_t calibrate_near_work(struct near_targets *t)
{
    uint32_t n = 64;
    for (int iter = 0; iter < 6; iter++) {
        near_work_set_spin(t, n);
        double best = 1e30;
        for (int k = 0; k < 5; k++) {
            double v = time_loop(loop_direct, t->work, 20000) / 20000;
            if (v < best)
                best = v;
        }
        uint32_t next = (uint32_t)((double)n * 100.0 / best + 0.5);
        if (next < 1)
            next = 1;
        if (next == n)
            break;
        n = next;
    }
    near_work_set_spin(t, n);
    return n;
}

static perftramp *open_flags(unsigned flags)
{
    struct perftramp_options o = {.outputs = 0, .flags = flags};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        perror("perftramp_open");
        exit(1);
    }
    return pt;
}

/* Whether the trampoline t was written from the direct-call table. */
static bool is_near(const perftramp *pt, target_fn t)
{
    return pt->near && memcmp((const void *)(uintptr_t)t, pt->near_layout.bytes,
                              pt->near_layout.insn_off[pt->near_layout.relocs[0]] + 1) == 0;
}

/* call_ratio_{empty,100ns}_near: the direct-call table; and, for the
 * same generated targets, the main table (call_ratio_*_main_gen): the
 * pair compares the two tables on the same bytes. */
static void run_wall_near(int pairs)
{
    if (!pt_arch_variant_of(pt_arch_host(), "near")) {
        bench_na("call_ratio_empty_near", "no direct-call table for this architecture");
        bench_na("call_ratio_100ns_near", "no direct-call table for this architecture");
        return;
    }
    struct near_targets nt;
    near_targets_make(&nt);
    perftramp *near = open_flags(PERFTRAMP_NEAR_CALLS), *ind = open_flags(0);
    target_fn n_empty = (target_fn)perftramp_wrap(near, (perftramp_fn)nt.empty, "near_empty");
    target_fn n_work = (target_fn)perftramp_wrap(near, (perftramp_fn)nt.work, "near_work");
    target_fn i_empty = (target_fn)perftramp_wrap(ind, (perftramp_fn)nt.empty, "gen_empty");
    target_fn i_work = (target_fn)perftramp_wrap(ind, (perftramp_fn)nt.work, "gen_work");
    if (!n_empty || !n_work || !i_empty || !i_work) {
        perror("perftramp_wrap");
        exit(1);
    }
    if (!is_near(near, n_empty) || !is_near(near, n_work)) {
        bench_na("call_ratio_empty_near", "the generated targets are out of the direct call's reach");
        bench_na("call_ratio_100ns_near", "the generated targets are out of the direct call's reach");
    } else {
        double d_ns, min_r;
        double r = call_ratio(nt.empty, n_empty, 20000, pairs, &d_ns, &min_r);
        bench_value("call_ratio_empty_near", "%.3f", r);
        double r_main = call_ratio(nt.empty, i_empty, 20000, pairs, &d_ns, &min_r);
        bench_value("call_ratio_empty_main_gen", "%.3f", r_main);
        bench_note("call_ratio_empty_near: direct call %.2f ns, through the direct-call table %.2f ns, through the "
                   "main table %.2f ns (the same generated target; median of %d pairs each)",
                   d_ns, d_ns * r, d_ns * r_main, pairs);
        uint32_t n = calibrate_near_work(&nt);
        r = call_ratio(nt.work, n_work, 500, pairs, &d_ns, &min_r);
        bench_value("call_ratio_100ns_near", "%.4f", r);
        r_main = call_ratio(nt.work, i_work, 500, pairs, &d_ns, &min_r);
        bench_value("call_ratio_100ns_main_gen", "%.4f", r_main);
        bench_note("call_ratio_100ns_near: target %.1f ns per direct call (%u imul+add), %+.2f ns through the "
                   "direct-call table, %+.2f ns through the main table",
                   d_ns, n, d_ns * (r - 1), d_ns * (r_main - 1));
    }
    perftramp_close(near);
    perftramp_close(ind);
    pt_code_free(&nt.b);
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
    bench_value("call_direct_ns_empty", "%.2f", d_ns);
    bench_note("call_ratio_empty: direct call %.2f ns, through the trampoline %.2f ns (median of %d pairs; ratio of "
               "the fastest blocks %.3f)",
               d_ns, d_ns * r, pairs, min_r);
    calibrate_spin();
    r = call_ratio(work_target, t_work, 500, pairs, &d_ns, &min_r);
    bench_value("call_ratio_100ns", "%.4f", r);
    bench_value("call_direct_ns_100ns", "%.1f", d_ns);
    bench_note("call_ratio_100ns: target %.1f ns per direct call (spin %ld), %+.2f ns through the trampoline (median "
               "of %d pairs; ratio of the fastest blocks %.4f)",
               d_ns, (long)spin, d_ns * (r - 1), pairs, min_r);
    perftramp_close(pt);
    run_wall_near(pairs);
    return 0;
}

/* count N: the main table on empty_target; count-near N: the direct-call
 * table on the generated empty target (both sides call the same bytes). */
static int run_count(long n, bool near)
{
    perftramp *pt = open_flags(near ? PERFTRAMP_NEAR_CALLS : 0);
    struct near_targets nt = {0};
    target_fn target = empty_target;
    if (near) {
        near_targets_make(&nt);
        target = nt.empty;
    }
    target_fn t_empty = (target_fn)perftramp_wrap(pt, (perftramp_fn)target, "empty_target");
    if (!t_empty || (near && !is_near(pt, t_empty))) {
        fprintf(stderr, "bench_call: %s\n", t_empty ? "the target is out of the direct call's reach" : strerror(errno));
        return 1;
    }
    volatile long sink = loop_direct(target, n) + loop_tramp(t_empty, n);
    (void)sink;
    perftramp_close(pt);
    if (near)
        pt_code_free(&nt.b);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && !strcmp(argv[1], "wall"))
        return run_wall();
    if (argc >= 3 && !strcmp(argv[1], "count"))
        return run_count(atol(argv[2]), false);
    if (argc >= 3 && !strcmp(argv[1], "count-near"))
        return run_count(atol(argv[2]), true);
    fprintf(stderr, "usage: %s wall | count N | count-near N\n", argv[0]);
    return 2;
}
