/* SPDX-License-Identifier: MIT */
/* The frame-pointer control of tests/guest/proofs.sh: a plain C chain,
 * main -> ctl_outer -> ctl_inner -> ctl_spin, no trampoline and no
 * perftramp.  If perf's --call-graph fp cannot walk even this one on a
 * machine, the fp proofs do not apply there: the walk is the kernel's and
 * perf's, not perftramp's.  Built with -fno-omit-frame-pointer (and
 * -mbackchain on s390x).  Usage: fp_control SECONDS (of CPU time). */
#include <stdlib.h>
#include <time.h>

static double cpu_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ctl_spin calls this once per turn of main's loop, so it is no leaf: a
 * leaf may keep no frame record (riscv64's gcc saves only s0 there, at a
 * slot a frame walk reads as the return address) */
__attribute__((noinline)) long ctl_result(unsigned long acc) { return (long)(acc & 1); }

__attribute__((noinline)) long ctl_spin(long n)
{
    volatile unsigned long acc = 0;
    for (long i = 0; i < n; i++)
        acc = acc + ((unsigned long)i ^ (acc >> 3));
    return ctl_result(acc) + 1;
}

__attribute__((noinline)) long ctl_inner(long n) { return ctl_spin(n) + 1; }
__attribute__((noinline)) long ctl_outer(long n) { return ctl_inner(n) + 1; }

int main(int argc, char **argv)
{
    double end = cpu_now() + (argc > 1 ? atof(argv[1]) : 1.0);
    long sum = 0;
    while (cpu_now() < end)
        sum += ctl_outer(200000);
    return (int)(sum & 0); /* 0, but the loop's result is used */
}
