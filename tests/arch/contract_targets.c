/* SPDX-License-Identifier: MIT */
/* Tests (x86-64 contract, tests/arch/check_contract.c): the targets, one per
 * register-passed signature, in their own file so no call is inlined. */
#include "contract_targets.h"

#include <stdarg.h>

long five_ints(long a, long b, long c, long d, long e)
{
    return a + 10 * b + 100 * c + 1000 * d + 10000 * e;
}

long six_ints(long a, long b, long c, long d, long e, long f)
{
    return a + 10 * b + 100 * c + 1000 * d + 10000 * e + 100000 * f;
}

double eight_doubles(double a, double b, double c, double d, double e, double f, double g, double h)
{
    return a + 2 * b + 4 * c + 8 * d + 16 * e + 32 * f + 64 * g + 128 * h;
}

double mixed(int a, double b, long c, float d, char e, double f, short g, double h, long i, double j, int k,
             double l, double n)
{
    return a + b * 2 + (double)c * 3 + d * 4 + e * 5 + f * 6 + g * 7 + h * 8 + (double)i * 9 + j * 10 + k * 11 +
           l * 12 + n * 14;
}

long variadic_sum(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    long s = 0;
    for (int i = 0; i < n; i++)
        s = s * 3 + va_arg(ap, long);
    va_end(ap);
    return s;
}

double variadic_doubles(int n, ...)
{
    va_list ap;
    va_start(ap, n);
    double s = 0;
    for (int i = 0; i < n; i++)
        s = s * 3 + va_arg(ap, double);
    va_end(ap);
    return s;
}

struct two_longs ret_two_longs(long a, long b)
{
    return (struct two_longs){a * 7, b * 11};
}

struct two_doubles ret_two_doubles(double x, double y)
{
    return (struct two_doubles){x / 2, y * 3};
}

struct long_double_mix ret_mix(long a, double d)
{
    return (struct long_double_mix){a - 1, d + 0.5};
}

struct big ret_big(long seed)
{
    struct big b;
    for (int i = 0; i < 6; i++)
        b.v[i] = seed * (i + 1);
    return b;
}

long double ret_long_double(double a, int b)
{
    return a * b + 0.25L;
}

#if defined(__x86_64__)
__int128 ret_int128(__int128 a, __int128 b)
{
    return a * 3 + b;
}

v2df ret_vector(v2df a, v2df b)
{
    return a * b;
}
#endif

float ret_float(float a, float b)
{
    return a - b;
}

int stack_is_aligned(void)
{
    /* the compiler assumes the ABI's 16-byte alignment at the call: if the
     * trampoline broke it, this local would be misaligned */
    double __attribute__((aligned(16))) probe[2] = {1, 2};
    volatile uintptr_t where = (uintptr_t)probe;
    return where % 16 == 0;
}

long add_k(long x)
{
    return x + 1000;
}

long add_1(long x)
{
    return x + 1;
}

long add_2(long x)
{
    return x + 2;
}

long add_3(long x)
{
    return x + 3;
}

void frame_chain(void **out)
{
    void **fp = __builtin_frame_address(0);
    out[0] = fp[0];
    out[1] = fp[1];
    out[2] = ((void **)fp[0])[0];
}
