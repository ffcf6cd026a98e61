/* SPDX-License-Identifier: MIT */
/* A program outside the build: compiled against the INSTALLED library
 * with `pkg-config --cflags --libs perftramp` (also as C++), it wraps
 * functions of several register signatures and checks the results. */
#include <perftramp.h>
#include <stdio.h>

struct pair { long a, b; };
struct quad { long v[4]; }; /* returned through the hidden pointer */

static long ints(long a, long b, long c, long d, long e, long f) { return a - b + c - d + e - f; }
static double floats(double a, float b, double c, double d) { return a * b + c / d; }
static struct pair pair_of(long a) { struct pair p = {a, -a}; return p; }
static struct quad quad_of(long a) { struct quad q = {{a, a + 1, a + 2, a + 3}}; return q; }

int main(void)
{
    static struct perftramp_options opts; /* all zeros: the defaults */
    perftramp *pt = perftramp_open(&opts);
    if (!pt) { perror("perftramp_open"); return 1; }
    long (*ti)(long, long, long, long, long, long) =
        (long (*)(long, long, long, long, long, long))perftramp_wrap(pt, (perftramp_fn)ints, "consumer::ints");
    double (*tf)(double, float, double, double) =
        (double (*)(double, float, double, double))perftramp_wrap(pt, (perftramp_fn)floats, "consumer::floats");
    struct pair (*tp)(long) = (struct pair (*)(long))perftramp_wrap(pt, (perftramp_fn)pair_of, "consumer::pair");
    struct quad (*tq)(long) = (struct quad (*)(long))perftramp_wrap(pt, (perftramp_fn)quad_of, "consumer::quad");
    if (!ti || !tf || !tp || !tq) { perror("perftramp_wrap"); return 1; }
    int ok = ti(1, 2, 3, 4, 5, 6) == -3 && tf(1.5, 2.0f, 9.0, 3.0) == 6.0 && tp(5).b == -5 && tq(7).v[3] == 10;
    printf("consumer (perftramp %s): %s\n", perftramp_version(), ok ? "all signatures passed through" : "MISMATCH");
    return perftramp_close(pt) == 0 && ok ? 0 : 1;
}
