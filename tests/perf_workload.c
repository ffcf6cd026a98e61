/* SPDX-License-Identifier: MIT */
/* The end-to-end workload for tests/perf_e2e.sh: a toy interpreter shaped
 * like CPython.  One evaluator function, pt_eval(), runs every
 * "interpreted function"; each of those is entered through its own
 * trampoline wrapping that SAME evaluator, so a profile can tell them
 * apart only by the trampoline frames:
 *
 *   main -> py::main -> pt_eval -> py::outer -> pt_eval -> py::middle
 *        -> pt_eval -> py::inner -> pt_eval (hot loop)
 *
 * py::never is wrapped but never called: its name must never show up.
 * Usage: perf_workload jitdump|perfmap SECONDS   (jitdump dir: $JITDUMPDIR)
 * Built with -fno-omit-frame-pointer so perf --call-graph fp works. */
#include <perftramp.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct frame;
typedef long (*eval_fn)(const struct frame *);

struct frame {
    const struct frame *callee; /* the function this one calls, or NULL */
    eval_fn callee_entry;       /* its trampoline */
    long spins;                 /* work done by a leaf */
};

long pt_eval(const struct frame *f);

/* The evaluator.  noinline, and the "+ 1" keeps the call from becoming a
 * tail call, as in a real interpreter that uses the callee's result. */
__attribute__((noinline)) long pt_eval(const struct frame *f)
{
    if (f->callee)
        return f->callee_entry(f->callee) + 1;
    volatile unsigned long acc = 0; /* unsigned: wraps, never overflows */
    for (long i = 0; i < f->spins; i++)
        acc = acc + ((unsigned long)i ^ (acc >> 3)); /* the hot loop */
    return (long)(acc >> 1);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    if (argc != 3 || (strcmp(argv[1], "jitdump") && strcmp(argv[1], "perfmap"))) {
        fprintf(stderr, "usage: %s jitdump|perfmap SECONDS\n", argv[0]);
        return 2;
    }
    double seconds = atof(argv[2]);
    struct perftramp_options o = {.outputs = strcmp(argv[1], "jitdump") ? PERFTRAMP_PERF_MAP : PERFTRAMP_JITDUMP};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    const char *names[4] = {"py::main", "py::outer", "py::middle", "py::inner"};
    eval_fn entry[4];
    for (int i = 0; i < 4; i++)
        entry[i] = (eval_fn)perftramp_wrap(pt, (perftramp_fn)pt_eval, names[i]);
    eval_fn never = (eval_fn)perftramp_wrap(pt, (perftramp_fn)pt_eval, "py::never");
    for (int i = 0; i < 4; i++)
        if (!entry[i] || !never) {
            fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
            return 1;
        }
    struct frame frames[4];
    for (int i = 0; i < 4; i++) {
        frames[i].callee = i < 3 ? &frames[i + 1] : NULL;
        frames[i].callee_entry = i < 3 ? entry[i + 1] : NULL;
        frames[i].spins = 200000;
    }
    printf("pid %ld\n", (long)getpid());
    fflush(stdout);
    long calls = 0;
    unsigned long sum = 0;
    double end = now() + seconds;
    while (now() < end) {
        sum += (unsigned long)entry[0](&frames[0]);
        calls++;
    }
    printf("calls %ld (%lu)\n", calls, sum & 1);
    int r = perftramp_output_error(pt, o.outputs);
    if (r) {
        fprintf(stderr, "output failed: %s\n", strerror(r));
        return 1;
    }
    return perftramp_close(pt) == 0 ? 0 : 1;
}
