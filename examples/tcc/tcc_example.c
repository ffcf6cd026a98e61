/* SPDX-License-Identifier: MIT */
/* examples/tcc: a JIT built on libtcc whose code perf, gdb and the
 * unwinders understand, through perftramp_publish.
 *
 *   tcc_example OUTPUTS spin SECONDS   spin in tcc_leaf for SECONDS of CPU
 *                                      time (profile it with perf)
 *   tcc_example OUTPUTS backtrace      _Unwind_Backtrace from a C callback
 *                                      called by tcc code: must reach main
 *   tcc_example OUTPUTS probe          call the (empty) callback once: a
 *                                      place for gdb's `break tcc_probe`
 * OUTPUTS: comma-separated perfmap,jitdump,unwind,gdb or none.
 * Prints "pid N" and "fn NAME ADDR SIZE" per compiled function. */
#define _GNU_SOURCE
#include "program.h"
#include "tcc_jit.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

typedef int (*tcc_fn)(int n, int probe);

static bool want_backtrace;
static struct tcc_jit *jit;
static int backtrace_ok = -1;

int main(int argc, char **argv);

struct walk {
    int next;      /* index of the tcc function expected next, leaf first */
    bool main_seen;
    int frames;
};

static _Unwind_Reason_Code step(struct _Unwind_Context *ctx, void *arg)
{
    struct walk *w = arg;
    uintptr_t ip = (uintptr_t)_Unwind_GetIP(ctx);
    w->frames++;
    if (w->next < (int)TCC_PROGRAM_FNS) {
        const void *addr;
        size_t size;
        if (tcc_jit_range(jit, tcc_program[w->next][0], &addr, &size) == 0 && ip > (uintptr_t)addr &&
            ip <= (uintptr_t)addr + size)
            w->next++;
    } else if ((uintptr_t)_Unwind_GetRegionStart(ctx) == (uintptr_t)main) {
        w->main_seen = true;
    }
    return w->frames < 64 ? _URC_NO_REASON : _URC_END_OF_STACK;
}

/* Called by tcc_leaf. */
void tcc_probe(void);
void __attribute__((noinline)) tcc_probe(void)
{
    if (!want_backtrace)
        return;
    struct walk w = {0};
    _Unwind_Backtrace(step, &w);
    printf("backtrace: %d frames, %d of %zu tcc functions in order, main %s\n", w.frames, w.next,
           (size_t)TCC_PROGRAM_FNS, w.main_seen ? "reached" : "not reached");
    backtrace_ok = w.next == (int)TCC_PROGRAM_FNS && w.main_seen;
}

static int __attribute__((noinline)) run(tcc_fn f, int n, int probe)
{
    int r = f(n, probe);
    __asm__ volatile("" ::: "memory");
    return r;
}

static unsigned parse_outputs(const char *s)
{
    static const struct {
        const char *name;
        unsigned bit;
    } names[] = {{"perfmap", PERFTRAMP_PERF_MAP}, {"jitdump", PERFTRAMP_JITDUMP}, {"unwind", PERFTRAMP_UNWIND},
                 {"gdb", PERFTRAMP_GDB}, {"none", 0}};
    unsigned bits = 0;
    char *copy = strdup(s), *save = NULL;
    for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        size_t k = 0;
        while (k < sizeof names / sizeof names[0] && strcmp(names[k].name, t) != 0)
            k++;
        if (k == sizeof names / sizeof names[0]) {
            fprintf(stderr, "tcc_example: unknown output %s\n", t);
            exit(2);
        }
        bits |= names[k].bit;
    }
    free(copy);
    return bits;
}

static double cpu_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc < 3) {
        fprintf(stderr, "usage: %s OUTPUTS spin SECONDS | backtrace | probe\n", argv[0]);
        return 2;
    }
    struct perftramp_options o = {.outputs = parse_outputs(argv[1])};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        perror("perftramp_open");
        return 1;
    }
    jit = tcc_jit_new(pt, 1 << 20);
    if (!jit || tcc_jit_symbol(jit, "tcc_probe", (const void *)tcc_probe) < 0)
        return 1;
    if (getenv("TCC_JIT_PACKED")) {
        /* the trap, for tests/clients/tcc.sh: every function in one tcc image */
        const char *names[TCC_PROGRAM_FNS];
        char source[4096] = "";
        for (size_t k = 0; k < TCC_PROGRAM_FNS; k++) {
            names[k] = tcc_program[k][0];
            strncat(source, tcc_program[k][1], sizeof source - strlen(source) - 1);
        }
        if (tcc_jit_compile_group(jit, names, TCC_PROGRAM_FNS, source) < 0)
            return 1;
    } else {
        for (size_t k = 0; k < TCC_PROGRAM_FNS; k++)
            if (!tcc_jit_compile(jit, tcc_program[k][0], tcc_program[k][1]))
                return 1;
    }
    tcc_fn outer = NULL;
    for (size_t k = 0; k < TCC_PROGRAM_FNS; k++) {
        const void *addr;
        size_t size;
        tcc_jit_range(jit, tcc_program[k][0], &addr, &size);
        printf("fn %s %p %zu\n", tcc_program[k][0], addr, size);
        outer = (tcc_fn)(uintptr_t)addr;
    }
    printf("pid %d\n", (int)getpid());
    fflush(stdout);
    int rc = 0;
    if (strcmp(argv[2], "spin") == 0) {
        double until = cpu_seconds() + (argc > 3 ? atof(argv[3]) : 1.0);
        unsigned long rounds = 0;
        unsigned sink = 0; /* wraps: only its last bit is printed */
        while (cpu_seconds() < until) {
            sink += (unsigned)run(outer, 200000, 0);
            rounds++;
        }
        printf("spun %lu rounds (%u)\n", rounds, sink & 1u);
    } else if (strcmp(argv[2], "backtrace") == 0) {
        want_backtrace = true;
        run(outer, 10, 1);
        rc = backtrace_ok == 1 ? 0 : 1;
    } else if (strcmp(argv[2], "probe") == 0) {
        printf("result %d\n", run(outer, 10, 1));
    } else {
        fprintf(stderr, "tcc_example: unknown mode %s\n", argv[2]);
        rc = 2;
    }
    tcc_jit_free(jit);
    perftramp_close(pt);
    return rc;
}
