/* SPDX-License-Identifier: MIT */
/* The program tests/gdb_bt.sh and bench/gdb_bt_time.sh debug: makes N
 * trampolines (argv[1], default 0), then one more named "py::chosen" that
 * calls gdb_target, and calls it from gdb_caller.  gdb breaks in
 * gdb_target; `bt` must show gdb_target <- py::chosen <- gdb_caller <- main.
 * argv[2] = "release": release the others first (the chunk is rebuilt).
 * argv[2] = "wait": print "ready <pid>" and wait inside gdb_target until
 * a debugger attaches and sets gdb_go (bench/gdb_bt_time.sh). */
#include "perftramp.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*int_fn)(int);

__attribute__((noinline)) int gdb_target(int x);
__attribute__((noinline)) int gdb_caller(int_fn fn, int x);
__attribute__((noinline)) int gdb_other(int x);

volatile int gdb_wait, gdb_go;

int gdb_target(int x)
{
    if (gdb_wait) {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        while (!gdb_go)
            usleep(1000);
    }
    __asm__ volatile("" ::: "memory");
    return x * 2;
}

int gdb_other(int x)
{
    return x;
}

int gdb_caller(int_fn fn, int x)
{
    int r = fn(x);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

int main(int argc, char **argv)
{
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    int release = argc > 2 && strcmp(argv[2], "release") == 0;
    gdb_wait = argc > 2 && strcmp(argv[2], "wait") == 0;
    struct perftramp_options o = {.outputs = PERFTRAMP_GDB};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    perftramp_fn *others = calloc((size_t)n + 1, sizeof *others);
    char name[64];
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "py::other_%ld", i);
        if (!(others[i] = perftramp_wrap(pt, (perftramp_fn)gdb_other, name))) {
            fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
            return 1;
        }
    }
    if (release)
        for (long i = 0; i < n; i++)
            perftramp_release(pt, others[i]);
    int_fn chosen = (int_fn)perftramp_wrap(pt, (perftramp_fn)gdb_target, "py::chosen");
    if (!chosen) {
        fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
        return 1;
    }
    int r = gdb_caller(chosen, 20);
    printf("result %d\n", r);
    fflush(stdout);
    free(others);
    return perftramp_close(pt) == 0 && r == 41 ? 0 : 1;
}
