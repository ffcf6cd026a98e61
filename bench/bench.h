/* SPDX-License-Identifier: MIT */
/* Small helpers every benchmark shares: a monotonic clock, medians, the
 * quick mode, temp directories and the `key: value` output format.
 * Benchmarks report ratios against floors; nothing here asserts a time. */
#ifndef PERFTRAMP_BENCH_H
#define PERFTRAMP_BENCH_H

#include <dirent.h>
#include <stdarg.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static inline uint64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* BENCH_QUICK=1: fewer iterations, only to prove the harness still runs. */
static inline int bench_quick(void)
{
    const char *q = getenv("BENCH_QUICK");
    return q && *q && strcmp(q, "0") != 0;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Sorts v in place and returns its median. */
static inline double bench_median(double *v, size_t n)
{
    if (n == 0)
        return 0;
    qsort(v, n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static inline void bench_na(const char *key, const char *why)
{
    printf("%s: n/a (%s)\n", key, why);
    fflush(stdout);
}

static inline void bench_value(const char *key, const char *fmt, double v)
{
    printf("%s: ", key);
    printf(fmt, v);
    printf("\n");
    fflush(stdout);
}

/* Extra detail for bench/results.md, not a metric: `# key: text`. */
static inline void bench_note(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static inline void bench_note(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    printf("# ");
    vprintf(fmt, ap);
    printf("\n");
    va_end(ap);
    fflush(stdout);
}

/* A private temp directory; the caller removes it with bench_rmdir. */
static inline char *bench_mkdtemp(char *buf, size_t len)
{
    const char *base = getenv("TMPDIR");
    snprintf(buf, len, "%s/perftramp-bench-XXXXXX", base && *base ? base : "/tmp");
    return mkdtemp(buf);
}

/* Removes the plain files in dir (jit-*.dump, jitted-*.so, our own files)
 * and the directory itself. */
static inline void bench_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d)
        return;
    struct dirent *e;
    char path[4096];
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    closedir(d);
    rmdir(dir);
}

/* The perf map perftramp writes for this process. */
static inline void bench_unlink_perf_map(void)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    unlink(path);
}

/* Names built before timing, so that formatting them is not measured. */
static inline char *bench_names(size_t n, size_t stride)
{
    char *names = malloc(n * stride);
    if (!names) {
        perror("malloc");
        exit(1);
    }
    for (size_t i = 0; i < n; i++)
        if (snprintf(names + i * stride, stride, "bench_fn_%07zu", i) >= (int)stride) {
            fprintf(stderr, "bench_names: stride %zu is too short\n", stride);
            exit(1);
        }
    return names;
}
#define BENCH_NAME_STRIDE 24

#endif
