/* SPDX-License-Identifier: MIT */
/* Curves, not points: at 10^2, 10^4, 10^6 and 10^7 live trampolines
 * (BENCH_QUICK: 10^2 and 10^4), with PERFTRAMP_UNWIND on (and
 * PERFTRAMP_FORGET_NAMES),
 *   - wrap time: mean ns per wrap over the whole fill, and the median ns
 *     per wrap of batches of 1000 wrapped (then released) at that count;
 *   - resident memory per trampoline: growth of the resident set
 *     (/proc/self/statm) over the fill, divided by the count;
 *   - unwind time: CPU ns per _Unwind_Backtrace step through the newest
 *     trampoline, with all of them registered (libgcc).
 * Each count in a fresh context.  Prints `scaling_*_<count>` keys and one
 * `# scaling:` row per count; bench/run.sh makes the table and the data
 * file `make bench-plot` draws (bench/scaling.gp). */
#include "bench.h"
#include "unwind_walk.h"

#include "api/context.h"
#include "perftramp.h"

#include <sys/wait.h>

static double rss_bytes(void)
{
    long size = 0, resident = 0;
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2) {
        perror("/proc/self/statm");
        exit(1);
    }
    fclose(f);
    return (double)resident * (double)sysconf(_SC_PAGESIZE);
}

/* Median CPU ns per unwind step, over 7 rounds of 200 walks. */
static double step_ns(int_fn fn)
{
    double v[7];
    caller(fn, 0); /* the first walk after a registration sorts new objects */
    for (int r = 0; r < 7; r++) {
        uint64_t t0 = cpu_ns();
        for (int i = 0; i < 200; i++)
            caller(fn, i);
        v[r] = (double)(cpu_ns() - t0) / 200 / g_frames;
    }
    return bench_median(v, 7);
}

#define BATCH 1000

static int measure(size_t n, const char *label)
{
    /* no name copy: the curves are the code's and the unwinder's
     * (bytes_per_trampoline_none gives what the default's copy adds) */
    struct perftramp_options o = {.outputs = PERFTRAMP_UNWIND, .flags = PERFTRAMP_FORGET_NAMES};
    perftramp *pt = perftramp_open(&o);
    if (!pt)
        return -1;
    double rss0 = rss_bytes();
    uint64_t t0 = bench_now_ns();
    int_fn last = NULL;
    for (size_t i = 0; i < n; i++)
        if (!(last = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "bench_scaling"))) {
            int e = errno;
            perftramp_close(pt);
            errno = e;
            return -1;
        }
    double fill_ns = (double)(bench_now_ns() - t0) / (double)n;
    double per = (rss_bytes() - rss0) / (double)n;
    double unwind = step_ns(last);
    /* wraps at this count: batches wrapped then released, so the count
     * stays put (released slots are reused: the free list's cost too) */
    double v[9];
    perftramp_fn batch[BATCH];
    for (int r = 0; r < 9; r++) {
        uint64_t b0 = bench_now_ns();
        for (size_t i = 0; i < BATCH; i++)
            if (!(batch[i] = perftramp_wrap(pt, (perftramp_fn)target, "bench_scaling_batch"))) {
                perror("perftramp_wrap");
                exit(1);
            }
        v[r] = (double)(bench_now_ns() - b0) / BATCH;
        for (size_t i = 0; i < BATCH; i++)
            perftramp_release(pt, batch[i]);
    }
    double at_ns = bench_median(v, 9);
    char key[64];
    snprintf(key, sizeof key, "scaling_wrap_ns_%s", label);
    bench_value(key, "%.1f", fill_ns);
    snprintf(key, sizeof key, "scaling_wrap_at_ns_%s", label);
    bench_value(key, "%.1f", at_ns);
    snprintf(key, sizeof key, "scaling_bytes_%s", label);
    bench_value(key, "%.1f", per);
    snprintf(key, sizeof key, "scaling_unwind_step_ns_%s", label);
    bench_value(key, "%.1f", unwind);
    bench_note("scaling: %zu live | %.1f ns per wrap (fill) | %.1f ns per wrap (at this count) | %.1f B resident "
               "per trampoline | %.1f ns per unwind step | %zu arenas | %d frames",
               n, fill_ns, at_ns, per, unwind, pt->slots.n_arenas, g_frames);
    perftramp_close(pt);
    return 0;
}

int main(void)
{
    static const struct {
        size_t n;
        const char *label;
    } counts[] = {{100, "1e2"}, {10000, "1e4"}, {1000000, "1e6"}, {10000000, "1e7"}};
    size_t k_max = bench_quick() ? 2 : 4;
    for (size_t k = 0; k < k_max; k++) {
        /* each count in its own process: libffi's allocator keeps the
         * pages of a closed context resident and hands them out again,
         * which would hide the next count's memory */
        uint64_t t0 = bench_now_ns();
        fflush(stdout);
        pid_t child = fork();
        if (child < 0) {
            perror("fork");
            return 1;
        }
        if (child == 0) {
            if (measure(counts[k].n, counts[k].label) < 0) {
                char key[64];
                snprintf(key, sizeof key, "scaling_wrap_ns_%s", counts[k].label);
                bench_na(key, strerror(errno));
                _exit(1);
            }
            _exit(0);
        }
        int status;
        if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
            bench_note("scaling: %s failed (status %#x): larger counts not tried", counts[k].label, status);
            break;
        }
        bench_note("scaling: %s took %.1f s", counts[k].label, (double)(bench_now_ns() - t0) / 1e9);
    }
    return 0;
}
