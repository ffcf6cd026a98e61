/* SPDX-License-Identifier: MIT */
/* The naive baseline: what a runtime does without perftramp (CPython's
 * perf trampoline today, per function): one mmap of executable memory per
 * trampoline, copy the code in, and one fprintf + fflush of a perf-map
 * line.  Timed exactly like bench/wrap.c (median over batches of BATCH
 * creations), so `naive_ns / wrap_ns_perfmap` compares like with like.
 *
 * The map lines go to a file in a private temp directory, not to
 * /tmp/perf-<pid>.map: same syscalls, no clash with perftramp's map. */
#include "bench.h"

#include <sys/mman.h>

#define BATCH 1000
#define ROUND 20000 /* unmapped between rounds: stay far below vm.max_map_count */

/* endbr64; push %rbp; mov %rsp,%rbp; call *8(%rip); pop %rbp; ret; + 8-byte literal */
static const unsigned char code[] = {0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0xff, 0x15, 0x02, 0x00,
                                     0x00, 0x00, 0x5d, 0xc3, 0,    0,    0,    0,    0,    0,    0,    0};

int main(void)
{
    int quick = bench_quick();
    size_t n = quick ? 10000 : 100000;
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    void **pages = calloc(ROUND, sizeof *pages);
    double *per = calloc(n / BATCH, sizeof *per);
    size_t n_batches = 0;
    long page = sysconf(_SC_PAGESIZE);
    char dir[256], path[320];
    if (!bench_mkdtemp(dir, sizeof dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/perf-naive.map", dir);
    FILE *map = fopen(path, "a");
    if (!map) {
        perror("fopen");
        return 1;
    }
    for (size_t base = 0; base < n; base += ROUND) {
        size_t in_round = n - base < ROUND ? n - base : ROUND;
        for (size_t b = 0; b + BATCH <= in_round; b += BATCH) {
            uint64_t t0 = bench_now_ns();
            for (size_t i = b; i < b + BATCH; i++) {
                void *p = mmap(NULL, (size_t)page, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS,
                               -1, 0);
                if (p == MAP_FAILED) {
                    perror("mmap");
                    return 1;
                }
                memcpy(p, code, sizeof code);
                pages[i] = p;
                fprintf(map, "%lx %zx %s\n", (unsigned long)(uintptr_t)p, sizeof code,
                        names + (base + i) * BENCH_NAME_STRIDE);
                fflush(map);
            }
            per[n_batches++] = (double)(bench_now_ns() - t0) / BATCH;
        }
        for (size_t i = 0; i < in_round; i++)
            munmap(pages[i], (size_t)page);
    }
    fclose(map);
    bench_rmdir(dir);
    bench_value("naive_ns", "%.1f", bench_median(per, n_batches));
    bench_note("naive_ns: %zu creations of mmap + fprintf + fflush", n_batches * BATCH);
    free(per);
    free(pages);
    free(names);
    return 0;
}
