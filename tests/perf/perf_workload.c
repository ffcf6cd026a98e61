/* SPDX-License-Identifier: MIT */
/* The end-to-end workload for tests/perf/perf_e2e.sh: a toy interpreter shaped
 * like CPython.  One evaluator function, pt_eval(), runs every
 * "interpreted function"; each of those is entered through its own
 * trampoline wrapping that SAME evaluator, so a profile can tell them
 * apart only by the trampoline frames:
 *
 *   main -> py::main -> pt_eval -> py::outer -> pt_eval -> py::middle
 *        -> pt_eval -> py::inner -> LEAF
 *
 * LEAF depends on the mode (third argument):
 *   eval    pt_eval's own hot loop (a C function with an rbp frame).
 *   hidden  py::inner wraps pt_hidden_spin (tests/perf/hidden_rbp.S) instead of
 *           pt_eval: it spins with GARBAGE in %rbp, so only DWARF (its own
 *           CFI, then the trampolines') unwinds the samples taken there.
 *   edges   py::inner's pt_eval calls pt_hidden_loop, which calls the
 *           trampoline py::leaf (wrapping pt_return_arg, which returns at
 *           once) in a tight loop with garbage in %rbp: many samples land
 *           on the trampoline's own instructions, including the entry and
 *           the `ret` where its frame is not (or no longer) set up.
 * (hidden and edges need tests/perf/hidden_rbp.S, x86-64, or tests/guest/hidden_fp.S,
 * the other architectures' emulated machines: without either they exit 77.)
 *
 * py::never is wrapped but never called: its name must never show up.
 * Output elf (PERFTRAMP_ELF, tests/perf/elf_perf.sh): the trampolines live in
 * file-backed ELF arenas ($PERFTRAMP_ELF_DIR).  With PT_WORKLOAD_LATE=1,
 * halfway through, a new trampoline py::late (py::inner's target) is
 * wrapped and takes py::inner's place in the chain: a name written into
 * the file after the code started running (and perf started recording).
 * Usage: perf_workload jitdump|perfmap|elf SECONDS [eval|hidden|edges]
 * (SECONDS of CPU time)
 * (jitdump dir: $JITDUMPDIR).  Built with -fno-omit-frame-pointer so
 * perf --call-graph fp works through the C frames. */
#include <perftramp.h>

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

struct frame;
typedef long (*eval_fn)(const struct frame *);

struct frame {
    long spins;                 /* work done by a leaf; FIRST: pt_hidden_spin reads it */
    const struct frame *callee; /* the function this one calls, or NULL */
    eval_fn callee_entry;       /* its trampoline */
    long (*leaf_tramp)(long);   /* edges mode: py::leaf, called by pt_hidden_loop */
};
_Static_assert(offsetof(struct frame, spins) == 0, "pt_hidden_spin(const long *) reads frame->spins");

long pt_eval(const struct frame *f);
#if defined(__x86_64__) || defined(PT_HIDDEN_FP)
/* tests/perf/hidden_rbp.S; for the other architectures tests/guest/hidden_fp.S,
 * linked by tests/guest/perf_guest.sh, which defines PT_HIDDEN_FP */
long pt_hidden_spin(const long *spins);
long pt_hidden_loop(long (*fn)(long), long arg, long n);
long pt_return_arg(long x);
#define HAVE_HIDDEN_RBP 1
#endif

/* The evaluator.  noinline, and the "+ 1" keeps the call from becoming a
 * tail call, as in a real interpreter that uses the callee's result. */
__attribute__((noinline)) long pt_eval(const struct frame *f)
{
    if (f->callee)
        return f->callee_entry(f->callee) + 1;
#ifdef HAVE_HIDDEN_RBP
    if (f->leaf_tramp)
        return pt_hidden_loop(f->leaf_tramp, f->spins, f->spins / 8) + 1;
#endif
    volatile unsigned long acc = 0; /* unsigned: wraps, never overflows */
    for (long i = 0; i < f->spins; i++)
        acc = acc + ((unsigned long)i ^ (acc >> 3)); /* the hot loop */
    return (long)(acc >> 1);
}

/* CPU time, not wall time: cpu-clock samples this process's CPU time, so a
 * loaded machine gives it as many samples as an idle one (only later). */
static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static perftramp_fn wrap(perftramp *pt, perftramp_fn target, const char *name)
{
    perftramp_fn t = perftramp_wrap(pt, target, name);
    if (!t) {
        fprintf(stderr, "perftramp_wrap %s: %s\n", name, strerror(errno));
        exit(1);
    }
    return t;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 3 ? argv[3] : "eval";
    if (argc < 3 || argc > 4 || (strcmp(argv[1], "jitdump") && strcmp(argv[1], "perfmap") && strcmp(argv[1], "elf")) ||
        (strcmp(mode, "eval") && strcmp(mode, "hidden") && strcmp(mode, "edges"))) {
        fprintf(stderr, "usage: %s jitdump|perfmap|elf SECONDS [eval|hidden|edges]\n", argv[0]);
        return 2;
    }
#ifndef HAVE_HIDDEN_RBP
    if (strcmp(mode, "eval")) {
        printf("SKIP: mode %s needs tests/perf/hidden_rbp.S, written for x86-64 only\n", mode);
        return 77;
    }
#endif
    double seconds = atof(argv[2]);
    struct perftramp_options o = {.outputs = strcmp(argv[1], "jitdump") == 0 ? PERFTRAMP_JITDUMP
                                             : strcmp(argv[1], "elf") == 0   ? PERFTRAMP_ELF
                                                                             : PERFTRAMP_PERF_MAP};
    const char *late_env = getenv("PT_WORKLOAD_LATE");
    bool late = late_env && strcmp(late_env, "1") == 0;
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    const char *names[4] = {"py::main", "py::outer", "py::middle", "py::inner"};
    perftramp_fn target[4] = {(perftramp_fn)pt_eval, (perftramp_fn)pt_eval, (perftramp_fn)pt_eval,
                              (perftramp_fn)pt_eval};
    long (*leaf)(long) = NULL;
#ifdef HAVE_HIDDEN_RBP
    if (strcmp(mode, "hidden") == 0)
        target[3] = (perftramp_fn)pt_hidden_spin; /* py::inner: the garbage-rbp spinner */
#endif
    eval_fn entry[4];
    for (int i = 0; i < 4; i++)
        entry[i] = (eval_fn)wrap(pt, target[i], names[i]);
    (void)wrap(pt, (perftramp_fn)pt_eval, "py::never");
#ifdef HAVE_HIDDEN_RBP
    if (strcmp(mode, "edges") == 0)
        leaf = (long (*)(long))wrap(pt, (perftramp_fn)pt_return_arg, "py::leaf");
#endif
    struct frame frames[4];
    for (int i = 0; i < 4; i++) {
        frames[i].callee = i < 3 ? &frames[i + 1] : NULL;
        frames[i].callee_entry = i < 3 ? entry[i + 1] : NULL;
        frames[i].spins = 200000;
        frames[i].leaf_tramp = i == 3 ? leaf : NULL;
    }
    printf("pid %ld mode %s\n", (long)getpid(), mode);
    fflush(stdout);
    long calls = 0;
    unsigned long sum = 0;
    double end = now() + seconds, halfway = now() + seconds / 2;
    while (now() < end) {
        if (late && now() >= halfway) {
            frames[2].callee_entry = (eval_fn)wrap(pt, target[3], "py::late");
            printf("late py::late\n");
            fflush(stdout);
            late = false;
        }
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
