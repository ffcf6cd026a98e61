/* SPDX-License-Identifier: MIT */
/* The workload of bench/report_time.sh: N named trampolines, then every one
 * of them called round-robin for SECONDS of CPU time, so that perf record's
 * call chains pass through all of them.
 *   usage: bench_report_prog jitdump|elf N SECONDS
 * jitdump writes $JITDUMPDIR/jit-<pid>.dump (perf record -k 1 + perf inject
 * --jit); elf writes $PERFTRAMP_ELF_DIR/perftramp-<pid>-<n>.so (a plain
 * perf record).  Prints "ok N" on success; exits 1 with a message when an
 * output is refused (the timing would not be the one asked for). */
#include "perftramp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* noinline + "+ 1": a real frame below every trampoline, not a tail call. */
long report_work(long spins);
__attribute__((noinline)) long report_work(long spins)
{
    volatile unsigned long acc = 0;
    for (long i = 0; i < spins; i++)
        acc = acc + ((unsigned long)i ^ (acc >> 3));
    return (long)(acc >> 1) + 1;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 4 || (strcmp(argv[1], "jitdump") && strcmp(argv[1], "elf")) || atol(argv[2]) <= 0) {
        fprintf(stderr, "usage: %s jitdump|elf N SECONDS\n", argv[0]);
        return 2;
    }
    unsigned output = strcmp(argv[1], "elf") == 0 ? PERFTRAMP_ELF : PERFTRAMP_JITDUMP;
    size_t n = (size_t)atol(argv[2]);
    double seconds = atof(argv[3]);
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = output});
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    if (perftramp_output_error(pt, output)) {
        fprintf(stderr, "the %s output is disabled: %s\n", argv[1], strerror(perftramp_output_error(pt, output)));
        return 1;
    }
    long (**tramp)(long) = calloc(n, sizeof *tramp);
    if (!tramp)
        return 1;
    for (size_t i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "bench::fn_%05zu", i);
        tramp[i] = (long (*)(long))perftramp_wrap(pt, (perftramp_fn)report_work, name);
        if (!tramp[i]) {
            fprintf(stderr, "perftramp_wrap %s: %s\n", name, strerror(errno));
            return 1;
        }
    }
    double end = cpu_seconds() + seconds;
    long sum = 0;
    do
        for (size_t i = 0; i < n; i++)
            sum += tramp[i](2000);
    while (cpu_seconds() < end);
    printf("ok %zu (%ld)\n", n, sum & 1);
    free(tramp);
    perftramp_close(pt);
    return 0;
}
