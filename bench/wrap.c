/* What creating a trampoline costs, per output configuration, and the
 * floor a durable output cannot beat: one write(2) of a jitdump group.
 *
 * Prints wrap_ns_{none,perfmap,jitdump,all}, write_floor_ns and
 * dump_bytes_per_trampoline.  Each wrap figure is the median, over batches
 * of BATCH consecutive wraps, of the ns per wrap in the batch (timing each
 * wrap alone would mostly measure the clock); at least 100k wraps per
 * configuration in the full run.  Every round opens a fresh context, so
 * arena growth is part of what is measured. */
#include "bench.h"

#include "eh_frame.h"
#include "layout.h"
#include "perftramp.h"

#include <fcntl.h>
#include <sys/stat.h>

#define BATCH 1000

static long bench_target(long x)
{
    return x + 1;
}

struct wrap_result {
    double median_ns, mean_ns;
    size_t wraps;
    int truncated; /* stopped early: over the time budget */
    double dump_bytes; /* jitdump bytes per trampoline, 0 when no dump */
};

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* Runs rounds of n wraps with `outputs` until `budget_ns` is spent (at
 * least one round).  Returns 0, or the errno of perftramp_open. */
static int run_config(unsigned outputs, size_t n, int max_rounds, uint64_t budget_ns, struct wrap_result *r)
{
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    size_t max_batches = (n / BATCH) * (size_t)max_rounds;
    double *per_wrap = calloc(max_batches, sizeof *per_wrap);
    size_t n_batches = 0;
    uint64_t total_ns = 0, start = bench_now_ns();
    memset(r, 0, sizeof *r);
    for (int round = 0; round < max_rounds; round++) {
        if (round > 0 && bench_now_ns() - start > budget_ns)
            break;
        char dir[256], dump[320];
        if (!bench_mkdtemp(dir, sizeof dir)) {
            perror("mkdtemp");
            exit(1);
        }
        struct perftramp_options o = {.outputs = outputs, .jitdump_dir = dir};
        perftramp *pt = perftramp_open(&o);
        if (!pt) {
            int e = errno;
            bench_rmdir(dir);
            free(names);
            free(per_wrap);
            return e;
        }
        snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
        off_t dump_before = file_size(dump);
        size_t done = 0;
        for (size_t b = 0; b + BATCH <= n; b += BATCH) {
            /* an output whose cost grows with the live count must not
             * stall the whole run: stop the round, say so */
            if (bench_now_ns() - start > 3 * budget_ns) {
                r->truncated = 1;
                break;
            }
            uint64_t t0 = bench_now_ns();
            for (size_t i = b; i < b + BATCH; i++)
                if (!perftramp_wrap(pt, (perftramp_fn)bench_target, names + i * BENCH_NAME_STRIDE)) {
                    perror("perftramp_wrap");
                    exit(1);
                }
            uint64_t dt = bench_now_ns() - t0;
            per_wrap[n_batches++] = (double)dt / BATCH;
            total_ns += dt;
            r->wraps += BATCH;
            done += BATCH;
        }
        if (perftramp_close(pt) < 0)
            perror("perftramp_close");
        off_t dump_after = file_size(dump);
        if (dump_before >= 0 && dump_after > dump_before && r->dump_bytes == 0)
            r->dump_bytes = (double)(dump_after - dump_before) / (double)done;
        bench_rmdir(dir);
        if (outputs & PERFTRAMP_PERF_MAP)
            bench_unlink_perf_map();
    }
    r->mean_ns = (double)total_ns / (double)r->wraps;
    r->median_ns = bench_median(per_wrap, n_batches);
    free(names);
    free(per_wrap);
    return 0;
}

/* The jitdump group for one trampoline when the dump is not available:
 * UNWINDING_INFO (16 + 24 + blob, padded to 8) + LOAD (16 + 40 + name +
 * NUL + code), per DESIGN.md's jitdump layout. */
static size_t estimated_group_bytes(void)
{
    struct pt_layout l;
    struct pt_buf blob;
    size_t eh;
    if (pt_layout_build(&l, pt_arch_host(), NULL) < 0)
        return 0;
    pt_buf_init(&blob, l.arch->big_endian);
    if (pt_eh_jitdump_blob(&blob, &l, &eh) < 0) {
        pt_buf_free(&blob);
        return 0;
    }
    size_t unwinding = 16 + 24 + ((blob.len + 7) & ~(size_t)7);
    size_t load = 16 + 40 + strlen("bench_fn_0000000") + 1 + l.size;
    pt_buf_free(&blob);
    return unwinding + load;
}

/* Median ns of one write(2) of `bytes` to a file in a temp directory on
 * the same file system the jitdump goes to (append, like the dump). */
static double write_floor(size_t bytes, size_t n)
{
    char dir[256], path[320];
    if (!bench_mkdtemp(dir, sizeof dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(path, sizeof path, "%s/floor.bin", dir);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    if (fd < 0) {
        perror("open");
        exit(1);
    }
    char *buf = calloc(1, bytes);
    size_t n_batches = n / BATCH;
    double *per_write = calloc(n_batches, sizeof *per_write);
    for (size_t b = 0; b < n_batches; b++) {
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < BATCH; i++)
            if (write(fd, buf, bytes) != (ssize_t)bytes) {
                perror("write");
                exit(1);
            }
        per_write[b] = (double)(bench_now_ns() - t0) / BATCH;
    }
    close(fd);
    double m = bench_median(per_write, n_batches);
    free(per_write);
    free(buf);
    bench_rmdir(dir);
    return m;
}

int main(void)
{
    int quick = bench_quick();
    size_t n = quick ? 10000 : 100000;
    int rounds = quick ? 1 : 5;
    uint64_t budget = (quick ? 2 : 12) * 1000000000ull;
    static const struct {
        const char *key;
        unsigned outputs;
    } configs[] = {
        {"wrap_ns_none", 0},
        {"wrap_ns_perfmap", PERFTRAMP_PERF_MAP},
        {"wrap_ns_jitdump", PERFTRAMP_JITDUMP},
        {"wrap_ns_all", PERFTRAMP_ALL},
    };
    double dump_bytes = 0;
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        struct wrap_result r;
        int e = run_config(configs[c].outputs, n, rounds, budget, &r);
        if (e) {
            bench_na(configs[c].key, e == ENOTSUP ? "ENOTSUP" : strerror(e));
            continue;
        }
        bench_value(configs[c].key, "%.1f", r.median_ns);
        bench_note("%s: %zu wraps, median %.1f ns, mean %.1f ns per wrap%s", configs[c].key, r.wraps, r.median_ns,
                   r.mean_ns, r.truncated ? " (STOPPED EARLY: over the time budget)" : "");
        if (configs[c].outputs == PERFTRAMP_JITDUMP)
            dump_bytes = r.dump_bytes;
    }

    size_t group = (size_t)(dump_bytes + 0.5);
    const char *group_from = "measured jitdump";
    if (group == 0) {
        group = estimated_group_bytes();
        group_from = "estimated from the layout; jitdump not available";
    }
    if (group) {
        double floor_ns = write_floor(group, n);
        bench_value("write_floor_ns", "%.1f", floor_ns);
        bench_note("write_floor_ns: write(2) of %zu bytes (%s), %zu writes", group, group_from, n);
    } else {
        bench_na("write_floor_ns", "no group size");
    }
    if (dump_bytes > 0)
        bench_value("dump_bytes_per_trampoline", "%.1f", dump_bytes);
    else
        bench_na("dump_bytes_per_trampoline", "ENOTSUP");
    return 0;
}
