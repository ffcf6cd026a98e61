/* SPDX-License-Identifier: MIT */
/* Targets with every register-passed signature the x86-64 contract
 * covers, and on i686 those that fit its five stack words.  Compiled in
 * their own file so calls cannot be inlined. */
#ifndef PERFTRAMP_CONTRACT_TARGETS_H
#define PERFTRAMP_CONTRACT_TARGETS_H

#include <stdint.h>

struct two_longs { long a, b; };
struct two_doubles { double x, y; };
struct long_double_mix { long a; double d; };
struct big { long v[6]; };
typedef double v2df __attribute__((vector_size(16)));

long five_ints(long a, long b, long c, long d, long e);
long six_ints(long a, long b, long c, long d, long e, long f);
double eight_doubles(double a, double b, double c, double d, double e, double f, double g, double h);
double mixed(int a, double b, long c, float d, char e, double f, short g, double h, long i, double j, int k,
             double l, double n);
long variadic_sum(int n, ...);
double variadic_doubles(int n, ...);
struct two_longs ret_two_longs(long a, long b);
struct two_doubles ret_two_doubles(double x, double y);
struct long_double_mix ret_mix(long a, double d);
struct big ret_big(long seed);
long double ret_long_double(double a, int b); /* returned in x87 st(0) */
#if defined(__x86_64__)
__int128 ret_int128(__int128 a, __int128 b);
v2df ret_vector(v2df a, v2df b);
#endif
float ret_float(float a, float b);
int stack_is_aligned(void);
long add_k(long x); /* returns x + K where K is the target's identity */
long add_1(long x);
long add_2(long x);
long add_3(long x);


/* Walks its own frame chain while it is live: out[0] = the caller's
 * frame pointer, out[1] = the return address, out[2] = the frame pointer
 * saved by the caller. */
void frame_chain(void **out);

#endif
