/* SPDX-License-Identifier: MIT */
/* The autopkgtest's client of the installed library: main calls
 * pkgtest::outer, a trampoline to outer(), which calls pkgtest::hot, a
 * trampoline to spin(), for the number of milliseconds given (default
 * 200).  Outputs from $PERFTRAMP.  Prints "pid N" and the result; exits 0
 * only when every call went through and the library closed cleanly. */
#include <errno.h>
#include <perftramp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

typedef long (*long_fn)(long);
static long_fn hot;
static volatile long sink;

/* Not a leaf: gcc keeps no frame pointer in leaf functions
 * (-momit-leaf-frame-pointer), and perf --call-graph fp would then skip
 * the trampoline that called it. */
__attribute__((noinline)) static void step(long i)
{
    sink += i;
}

static long spin(long n)
{
    for (long i = 0; i < n; i++)
        step(i);
    return n;
}

static long outer(long n)
{
    return hot(n);
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

int main(int argc, char **argv)
{
    double ms = argc > 1 ? atof(argv[1]) : 200;
    perftramp *pt = perftramp_open(NULL);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    hot = (long_fn)perftramp_wrap(pt, (perftramp_fn)spin, "pkgtest::hot");
    long_fn top = (long_fn)perftramp_wrap(pt, (perftramp_fn)outer, "pkgtest::outer");
    if (!hot || !top) {
        fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
        return 1;
    }
    printf("pid %ld\n", (long)getpid());
    long calls = 0, sum = 0;
    for (double end = now_ms() + ms; now_ms() < end; calls++)
        sum += top(100000);
    printf("perftramp %s: %ld calls through pkgtest::outer and pkgtest::hot\n", perftramp_version(), calls);
    perftramp_release(pt, (perftramp_fn)top);
    perftramp_release(pt, (perftramp_fn)hot);
    return perftramp_close(pt) == 0 && calls > 0 && sum == calls * 100000 ? 0 : 1;
}
