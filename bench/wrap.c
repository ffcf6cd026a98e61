/* SPDX-License-Identifier: MIT */
/* What creating a trampoline costs, per output configuration, and the
 * floor a durable output cannot beat: one write(2) of a jitdump group.
 *
 * Prints wrap_ns_{none,perfmap,jitdump,all,elf}, write_floor_ns and
 * dump_bytes_per_trampoline.  Each wrap figure is the median, over batches
 * of `batch` consecutive wraps, of the ns per wrap in the batch (timing each
 * wrap alone would mostly measure the clock); at least 100k wraps per
 * configuration in the full run.  Every round opens a fresh context, so
 * arena growth is part of what is measured. */
#include "bench.h"

#include "api/context.h"
#include "emit/eh_frame.h"
#include "emit/layout.h"
#include "mem/codemem.h"
#include "perftramp.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>

/* Batches last ~50 us or less: on a shared machine (load 5-10 on 2 cores
 * here) a batch of several ms nearly always contains a preemption, which
 * then shows up in the median; short batches mostly do not. */
#define BATCH_FAST 1000 /* wraps of ~30-60 ns: the clock costs <3% */
#define BATCH_IO 40     /* wraps and floor writes of ~1 us */
#define BATCH_SLOW 10   /* wraps of 10+ us (PERFTRAMP_GDB) */

static long bench_target(long x)
{
    return x + 1;
}

struct wrap_result {
    double median_ns, mean_ns;
    size_t wraps;
    int truncated; /* stopped early: over the time budget */
    double dump_bytes; /* jitdump bytes per trampoline, 0 when no dump */
    double faults;     /* minor page faults per wrap (getrusage) */
};

static off_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? st.st_size : -1;
}

/* The write floor: write(2)s of one jitdump group's byte count, appended
 * to a file on the same file system as the dump. */
struct floor {
    int fd;
    size_t bytes;
    char *buf;
    char dir[256];
    double *per_write; /* ns per write, one entry per batch */
    size_t n_batches, cap;
};

static void floor_open(struct floor *f, size_t bytes, size_t max_batches)
{
    char path[320];
    memset(f, 0, sizeof *f);
    if (!bench_mkdtemp(f->dir, sizeof f->dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(path, sizeof path, "%s/floor.bin", f->dir);
    f->fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    f->bytes = bytes;
    f->buf = calloc(1, bytes);
    f->cap = max_batches;
    f->per_write = calloc(max_batches, sizeof *f->per_write);
    if (f->fd < 0 || !f->buf || !f->per_write) {
        perror("floor");
        exit(1);
    }
}

static void floor_batch(struct floor *f)
{
    if (f->n_batches == f->cap)
        return;
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < BATCH_IO; i++)
        if (write(f->fd, f->buf, f->bytes) != (ssize_t)f->bytes) {
            perror("write");
            exit(1);
        }
    f->per_write[f->n_batches++] = (double)(bench_now_ns() - t0) / BATCH_IO;
}

static double floor_close(struct floor *f)
{
    double m = bench_median(f->per_write, f->n_batches);
    close(f->fd);
    free(f->buf);
    free(f->per_write);
    bench_rmdir(f->dir);
    return m;
}

/* The code floor (wrap_vs_floor): what writing a trampoline's bytes into
 * fresh pages of the same kind of code memory costs, page faults
 * included, with none of perftramp's logic.  It mirrors the arenas: the
 * same growth (64 KiB doubling to 16 MiB), the FDE area written when a
 * block is made, then one slot's template per "wrap" at the same stride.
 * Blocks are new mappings, private anonymous memory as libffi's closures
 * use, or shared anonymous memory for perftramp's double mapping; they are
 * unmapped only at the end, so every page is fresh.  Never pre-faulted:
 * that is what the arenas may do better than the floor. */
struct code_floor {
    const struct pt_layout *layout;
    size_t stride, fde_size, eh_fixed;
    int map_flags;
    struct {
        uint8_t *p;
        size_t bytes;
    } blocks[512];
    size_t n_blocks, next_bytes, n_slots, used; /* of the newest block */
    double *per_slot;                           /* ns per slot write, one per batch */
    size_t n_batches, cap;
};

static void code_floor_open(struct code_floor *f, const struct perftramp *pt, size_t max_batches)
{
    memset(f, 0, sizeof *f);
    f->layout = &pt->layout;
    f->stride = pt->slots.stride;
    f->fde_size = pt->slots.fde_size;
    f->eh_fixed = pt->slots.eh_fixed;
    const struct pt_code_backend *b = pt_code_backend_chosen();
    f->map_flags = MAP_ANONYMOUS | (b && b != &pt_code_ffi ? MAP_SHARED : MAP_PRIVATE);
    f->cap = max_batches;
    f->per_slot = calloc(max_batches ? max_batches : 1, sizeof *f->per_slot);
    if (!f->per_slot) {
        perror("calloc");
        exit(1);
    }
}

/* A new round: arenas start small again, as in a fresh context. */
static void code_floor_round(struct code_floor *f)
{
    f->next_bytes = 64 * 1024;
    f->n_slots = f->used = 0;
}

static uint8_t *code_floor_slot(struct code_floor *f)
{
    if (f->used == f->n_slots) {
        if (f->n_blocks == sizeof f->blocks / sizeof f->blocks[0]) {
            fprintf(stderr, "code floor: too many blocks\n");
            exit(1);
        }
        uint8_t *p = mmap(NULL, f->next_bytes, PROT_READ | PROT_WRITE, f->map_flags, -1, 0);
        if (p == MAP_FAILED) {
            perror("mmap");
            exit(1);
        }
        f->blocks[f->n_blocks].p = p;
        f->blocks[f->n_blocks++].bytes = f->next_bytes;
        f->n_slots = (f->next_bytes - f->eh_fixed) / (f->stride + f->fde_size);
        f->used = 0;
        /* the FDE area, written whole when an arena is made */
        memset(p + f->n_slots * f->stride, 0x5a, f->n_slots * f->fde_size + f->eh_fixed);
        if (f->next_bytes < 16 * 1024 * 1024)
            f->next_bytes *= 2;
    }
    return f->blocks[f->n_blocks - 1].p + f->used++ * f->stride;
}

static void code_floor_batch(struct code_floor *f, size_t batch)
{
    if (f->n_batches == f->cap)
        return;
    uint64_t t0 = bench_now_ns();
    for (size_t i = 0; i < batch; i++) {
        uint8_t *w = code_floor_slot(f);
        memcpy(w, f->layout->bytes, f->layout->size);
        memcpy(w + f->layout->word_off[PT_WORD_TAG], &i, sizeof i); /* per-slot bytes, as the tag */
    }
    f->per_slot[f->n_batches++] = (double)(bench_now_ns() - t0) / (double)batch;
}

static double code_floor_close(struct code_floor *f)
{
    for (size_t k = 0; k < f->n_blocks; k++)
        munmap(f->blocks[k].p, f->blocks[k].bytes);
    double m = bench_median(f->per_slot, f->n_batches);
    free(f->per_slot);
    return m;
}

static long minor_faults(void)
{
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? ru.ru_minflt : 0;
}

/* Runs rounds of n wraps with `outputs` until `budget_ns` is spent (at
 * least one round).  With a floor, a batch of floor writes follows every
 * batch of wraps, so both see the same machine (others share it).
 * Returns 0, or the errno of perftramp_open. */
static int run_config(unsigned outputs, size_t n, size_t batch, int max_rounds, uint64_t budget_ns,
                      struct floor *floor, struct wrap_result *r)
{
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    size_t max_batches = (n / batch) * (size_t)max_rounds;
    double *per_wrap = calloc(max_batches, sizeof *per_wrap);
    size_t n_batches = 0;
    uint64_t total_ns = 0, start = bench_now_ns();
    long faults = 0;
    memset(r, 0, sizeof *r);
    for (int round = 0; round < max_rounds; round++) {
        if (round > 0 && bench_now_ns() - start > budget_ns)
            break;
        char dir[256], dump[320];
        if (!bench_mkdtemp(dir, sizeof dir)) {
            perror("mkdtemp");
            exit(1);
        }
        struct perftramp_options o = {.outputs = outputs, .jitdump_dir = dir, .elf_dir = dir};
        perftramp *pt = perftramp_open(&o);
        /* PERFTRAMP_ELF refused (e.g. a noexec TMPDIR) leaves a working
         * context on the usual memory: its time would not be the ELF one */
        int elf_error = pt && (outputs & PERFTRAMP_ELF) ? perftramp_output_error(pt, PERFTRAMP_ELF) : 0;
        if (elf_error) {
            perftramp_close(pt);
            pt = NULL;
            errno = elf_error;
        }
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
        for (size_t b = 0; b + batch <= n; b += batch) {
            /* an output whose cost grows with the live count must not
             * stall the whole run: stop the round, say so */
            if (bench_now_ns() - start > 3 * budget_ns) {
                r->truncated = 1;
                break;
            }
            long f0 = minor_faults();
            uint64_t t0 = bench_now_ns();
            for (size_t i = b; i < b + batch; i++)
                if (!perftramp_wrap(pt, (perftramp_fn)bench_target, names + i * BENCH_NAME_STRIDE)) {
                    perror("perftramp_wrap");
                    exit(1);
                }
            uint64_t dt = bench_now_ns() - t0;
            faults += minor_faults() - f0;
            per_wrap[n_batches++] = (double)dt / (double)batch;
            total_ns += dt;
            r->wraps += batch;
            done += batch;
            if (floor)
                floor_batch(floor);
        }
        off_t dump_after = file_size(dump); /* before CLOSE: groups only */
        if (perftramp_close(pt) < 0)
            perror("perftramp_close");
        if (dump_before >= 0 && dump_after > dump_before && r->dump_bytes == 0)
            r->dump_bytes = (double)(dump_after - dump_before) / (double)done;
        bench_rmdir(dir);
        if (outputs & PERFTRAMP_PERF_MAP)
            bench_unlink_perf_map();
    }
    r->mean_ns = (double)total_ns / (double)r->wraps;
    r->faults = (double)faults / (double)r->wraps;
    r->median_ns = bench_median(per_wrap, n_batches);
    free(names);
    free(per_wrap);
    return 0;
}

/* The jitdump group for one trampoline when the dump is not available:
 * UNWINDING_INFO (16 + 24 + blob, padded to 8) + LOAD (16 + 40 + name +
 * NUL + code), per the jitdump layout in docs/facts.md. */
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

/* The group size, from a short jitdump run: dump bytes per wrap. */
static size_t probe_group_bytes(void)
{
    struct wrap_result r;
    if (run_config(PERFTRAMP_JITDUMP, 1000, BATCH_IO, 1, 60000000000ull, NULL, &r) != 0 || r.dump_bytes <= 0)
        return 0;
    return (size_t)(r.dump_bytes + 0.5);
}

/* ---- gdb_vs_none and all_vs_floor (issue 19, items 3 and 4) -----------
 * Ratios measured in one run: a batch of the measured thing, then a batch
 * of its floor, over and over, each figure the median over its batches,
 * so both see the same machine (others share it). */
#define BATCH_RATIO 50 /* wraps of 0.1-2 us: short batches, few preemptions */

static perftramp *ratio_open(unsigned outputs, unsigned flags, char *dir, size_t dir_len)
{
    if (!bench_mkdtemp(dir, dir_len)) {
        perror("mkdtemp");
        exit(1);
    }
    struct perftramp_options o = {.outputs = outputs, .jitdump_dir = dir, .flags = flags};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        int e = errno;
        bench_rmdir(dir);
        errno = e;
    }
    return pt;
}

static double ratio_wrap_batch(perftramp *pt, const char *names, size_t from)
{
    uint64_t t0 = bench_now_ns();
    for (size_t i = from; i < from + BATCH_RATIO; i++)
        if (!perftramp_wrap(pt, (perftramp_fn)bench_target, names + i * BENCH_NAME_STRIDE)) {
            perror("perftramp_wrap");
            exit(1);
        }
    return (double)(bench_now_ns() - t0) / BATCH_RATIO;
}

/* wrap_ns_gdb / wrap_ns_none with no debugger attached: a batch of wraps
 * into a PERFTRAMP_GDB context, then one into a context with no output,
 * both filling fresh slots of arenas of the same kind. */
static void measure_gdb_vs_none(size_t n)
{
    char dir_none[256], dir_gdb[256];
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    /* what GDB adds to the code alone, its name copies included */
    perftramp *none = ratio_open(0, PERFTRAMP_FORGET_NAMES, dir_none, sizeof dir_none);
    perftramp *gdb = none ? ratio_open(PERFTRAMP_GDB, 0, dir_gdb, sizeof dir_gdb) : NULL;
    if (!none || !gdb) {
        bench_na("gdb_vs_none", strerror(errno));
        if (none) {
            perftramp_close(none);
            bench_rmdir(dir_none);
        }
        free(names);
        return;
    }
    size_t nb = n / BATCH_RATIO;
    double *t_none = calloc(nb, sizeof *t_none), *t_gdb = calloc(nb, sizeof *t_gdb);
    for (size_t b = 0; b < nb; b++) {
        t_gdb[b] = ratio_wrap_batch(gdb, names, b * BATCH_RATIO);
        t_none[b] = ratio_wrap_batch(none, names, b * BATCH_RATIO);
    }
    double m_none = bench_median(t_none, nb), m_gdb = bench_median(t_gdb, nb);
    bench_value("gdb_vs_none", "%.2f", m_gdb / m_none);
    bench_note("gdb_vs_none: PERFTRAMP_GDB %.1f ns / no output (PERFTRAMP_FORGET_NAMES) %.1f ns per wrap (medians of "
               "%zu interleaved batches of %d, no debugger)",
               m_gdb, m_none, nb, BATCH_RATIO);
    perftramp_close(gdb);
    perftramp_close(none);
    bench_rmdir(dir_gdb);
    bench_rmdir(dir_none);
    free(t_none);
    free(t_gdb);
    free(names);
}

/* wrap_ns_all / (one write(2) of a perf map line + one of a jitdump
 * group): a batch of PERFTRAMP_ALL wraps, then a batch of those two
 * writes per wrap, to files in the same directories the outputs use. */
static void measure_all_vs_floor(size_t n, size_t group_bytes)
{
    char dir[256], path[320];
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    perftramp *all = ratio_open(PERFTRAMP_ALL, 0, dir, sizeof dir);
    if (!all || group_bytes == 0) {
        bench_na("all_vs_floor", all ? "no jitdump group size" : strerror(errno));
        if (all) {
            perftramp_close(all);
            bench_rmdir(dir);
            bench_unlink_perf_map();
        }
        free(names);
        return;
    }
    /* the floor's files: a map line in /tmp (where the perf map is), a
     * group in the dump's directory */
    char map_dir[256];
    if (!bench_mkdtemp(map_dir, sizeof map_dir)) {
        perror("mkdtemp");
        exit(1);
    }
    snprintf(path, sizeof path, "%s/floor.map", map_dir);
    int map_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    snprintf(path, sizeof path, "%s/floor.dump", dir);
    int dump_fd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
    char *group = calloc(1, group_bytes);
    char line[96];
    int line_len = snprintf(line, sizeof line, "%lx %x %s\n", 0x7f0123456780ul, 0x20, "bench_fn_0000000");
    if (map_fd < 0 || dump_fd < 0 || !group) {
        perror("floor files");
        exit(1);
    }
    size_t nb = n / BATCH_RATIO;
    double *t_all = calloc(nb, sizeof *t_all), *t_floor = calloc(nb, sizeof *t_floor);
    for (size_t b = 0; b < nb; b++) {
        t_all[b] = ratio_wrap_batch(all, names, b * BATCH_RATIO);
        uint64_t t0 = bench_now_ns();
        for (size_t i = 0; i < BATCH_RATIO; i++)
            if (write(map_fd, line, (size_t)line_len) != line_len ||
                write(dump_fd, group, group_bytes) != (ssize_t)group_bytes) {
                perror("write");
                exit(1);
            }
        t_floor[b] = (double)(bench_now_ns() - t0) / BATCH_RATIO;
    }
    double m_all = bench_median(t_all, nb), m_floor = bench_median(t_floor, nb);
    bench_value("all_vs_floor", "%.2f", m_all / m_floor);
    bench_note("all_vs_floor: PERFTRAMP_ALL %.1f ns per wrap / %.1f ns for a write(2) of a %d-byte map line and one of a "
               "%zu-byte jitdump group (medians of %zu interleaved batches of %d)",
               m_all, m_floor, line_len, group_bytes, nb, BATCH_RATIO);
    close(map_fd);
    close(dump_fd);
    perftramp_close(all);
    bench_rmdir(dir);
    bench_rmdir(map_dir);
    bench_unlink_perf_map();
    free(group);
    free(t_all);
    free(t_floor);
    free(names);
}

/* wrap_ns_none against the code floor, batch by batch, with the arenas'
 * pre-fault on and (wrap_ns_none_noprefault) off, round by round.  Every
 * context stays open until the end: libffi's allocator hands the memory
 * of a closed context out again, and then the next round's arenas would
 * not be cold (~140 MB for the full run). */
struct none_run {
    const char *suffix;
    bool prefault;
    double *per_wrap;
    size_t n_batches, wraps;
    long faults;
    uint64_t total_ns;
    struct code_floor floor;
};

static void wrap_vs_code_floor(size_t n, int rounds)
{
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    perftramp **open = calloc((size_t)rounds * 2, sizeof *open);
    struct none_run runs[2] = {{.suffix = "", .prefault = true}, {.suffix = "_noprefault", .prefault = false}};
    size_t max_batches = (n / BATCH_FAST) * (size_t)rounds;
    size_t n_open = 0;
    for (int k = 0; k < 2; k++)
        runs[k].per_wrap = calloc(max_batches, sizeof(double));
    for (int round = 0; round < rounds; round++)
        for (int k = 0; k < 2; k++) {
            struct none_run *r = &runs[k];
            /* the code's cost against writing its bytes: no name copy
             * (the default's, wrap_ns_none_names, adds a malloc) */
            struct perftramp_options o = {.outputs = 0, .flags = PERFTRAMP_FORGET_NAMES};
            perftramp *pt = perftramp_open(&o);
            if (!pt) {
                bench_na("wrap_ns_none", strerror(errno));
                bench_na("wrap_vs_floor", strerror(errno));
                return;
            }
            open[n_open++] = pt;
            if (round == 0)
                code_floor_open(&r->floor, pt, max_batches);
            code_floor_round(&r->floor);
            pt_code_prefault_enable(r->prefault);
            for (size_t b = 0; b + BATCH_FAST <= n; b += BATCH_FAST) {
                long f0 = minor_faults();
                uint64_t t0 = bench_now_ns();
                for (size_t i = b; i < b + BATCH_FAST; i++)
                    if (!perftramp_wrap(pt, (perftramp_fn)bench_target, names + i * BENCH_NAME_STRIDE)) {
                        perror("perftramp_wrap");
                        exit(1);
                    }
                uint64_t dt = bench_now_ns() - t0;
                r->faults += minor_faults() - f0;
                r->per_wrap[r->n_batches++] = (double)dt / BATCH_FAST;
                r->total_ns += dt;
                r->wraps += BATCH_FAST;
                code_floor_batch(&r->floor, BATCH_FAST);
            }
            pt_code_prefault_enable(true);
        }
    for (int k = 0; k < 2; k++) {
        struct none_run *r = &runs[k];
        char key[64];
        size_t slots = r->floor.n_batches * BATCH_FAST;
        const struct perftramp *pt = open[0];
        double floor_ns = code_floor_close(&r->floor);
        double median = bench_median(r->per_wrap, r->n_batches);
        snprintf(key, sizeof key, "wrap_ns_none%s", r->suffix);
        bench_value(key, "%.1f", median);
        bench_note("%s: %zu wraps in batches of %d on cold arenas, median %.1f ns, mean %.1f ns per wrap, %.4f minor "
                   "faults per wrap",
                   key, r->wraps, BATCH_FAST, median, (double)r->total_ns / (double)r->wraps,
                   (double)r->faults / (double)r->wraps);
        snprintf(key, sizeof key, "code_floor_ns%s", r->suffix);
        bench_value(key, "%.1f", floor_ns);
        bench_note("%s: %zu slot writes (%zu B of template at a %zu B stride, FDE area per block) into fresh %s "
                   "mappings, page faults included, interleaved batch by batch with the wraps",
                   key, slots, pt->layout.size, pt->slots.stride,
                   r->floor.map_flags & MAP_SHARED ? "shared anonymous" : "private anonymous");
        snprintf(key, sizeof key, "wrap_vs_floor%s", r->suffix);
        bench_value(key, "%.2f", floor_ns > 0 ? median / floor_ns : 0);
        free(r->per_wrap);
    }
    for (size_t i = 0; i < n_open; i++)
        perftramp_close(open[i]);
    free(open);
    free(names);
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
        size_t batch;
        int detail; /* not a metric of its own: a note for results.md */
    } configs[] = {
        /* no output, by default: the name copy for a later replay */
        {"wrap_ns_none_names", 0, BATCH_FAST, 1},
        {"wrap_ns_perfmap", PERFTRAMP_PERF_MAP, BATCH_IO, 0},
        {"wrap_ns_jitdump", PERFTRAMP_JITDUMP, BATCH_IO, 0},
        {"wrap_ns_unwind", PERFTRAMP_UNWIND, BATCH_FAST, 1},
        {"wrap_ns_gdb", PERFTRAMP_GDB, BATCH_SLOW, 1},
        {"wrap_ns_all", PERFTRAMP_ALL, BATCH_SLOW, 0},
        /* arena files of 1k slots: each batch writes slots and symbols
         * into the mapped file, and now and then starts a new file */
        {"wrap_ns_elf", PERFTRAMP_ELF, BATCH_IO, 0},
    };
    wrap_vs_code_floor(n, rounds); /* first: no memory freed before it */
    size_t group = probe_group_bytes();
    const char *group_from = "measured from the jitdump";
    if (group == 0) {
        group = estimated_group_bytes();
        group_from = "estimated from the layout; jitdump not available";
    }
    struct floor floor;
    floor_open(&floor, group ? group : 1, (n / BATCH_IO) * (size_t)rounds);
    double dump_bytes = 0;
    for (size_t c = 0; c < sizeof configs / sizeof configs[0]; c++) {
        struct wrap_result r;
        int with_floor = configs[c].outputs == PERFTRAMP_JITDUMP;
        int e = run_config(configs[c].outputs, n, configs[c].batch, rounds, budget, with_floor ? &floor : NULL, &r);
        if (e) {
            if (configs[c].detail)
                bench_note("%s: n/a (%s)", configs[c].key, strerror(e));
            else
                bench_na(configs[c].key, e == ENOTSUP ? "ENOTSUP" : strerror(e));
            continue;
        }
        if (!configs[c].detail)
            bench_value(configs[c].key, "%.1f", r.median_ns);
        bench_note("%s: %zu wraps in batches of %zu, median %.1f ns, mean %.1f ns per wrap%s", configs[c].key, r.wraps,
                   configs[c].batch, r.median_ns, r.mean_ns,
                   r.truncated ? " (STOPPED EARLY: over the time budget)" : "");
        if (with_floor)
            dump_bytes = r.dump_bytes;
    }
    if (floor.n_batches == 0) /* no jitdump run to interleave with */
        for (size_t b = 0; b < n / BATCH_IO; b++)
            floor_batch(&floor);
    size_t floor_writes = floor.n_batches * BATCH_IO;
    double floor_ns = floor_close(&floor);
    if (group) {
        bench_value("write_floor_ns", "%.1f", floor_ns);
        bench_note("write_floor_ns: write(2) of %zu bytes (%s), %zu writes%s", group, group_from, floor_writes,
                   dump_bytes > 0 ? ", interleaved batch by batch with the jitdump wraps" : "");
    } else {
        bench_na("write_floor_ns", "no group size");
    }
    measure_gdb_vs_none(n);
    measure_all_vs_floor(n, group);
    if (dump_bytes > 0)
        bench_value("dump_bytes_per_trampoline", "%.1f", dump_bytes);
    else
        bench_na("dump_bytes_per_trampoline", "ENOTSUP");
    return 0;
}
