/* SPDX-License-Identifier: MIT */
/* The trampoline contract and unwinding, on the architecture this is
 * compiled for: a self-contained harness (no Check: Debian's Check is not
 * multi-arch) that tests/arch/run_foreign.sh builds statically with the
 * cross gcc, the library sources and libffi.a, and runs under
 * qemu-<arch>-static (or natively for the host).  Output: one line per
 * check, then "N passed, N failed".  Exit 0 only when all pass.
 *
 * What a table in src/arch/ must satisfy for this harness (every arch):
 *  - .name is the qemu name (qemu-<name>-static) and tests/ref/<name>.S;
 *    .clang_target is the GNU triple of the cross tools
 *    (<triple>-gcc, <triple>-as) and of Debian's multiarch directory
 *    /usr/lib/<triple> holding libffi.a; or libffi.a in
 *    $PT_CROSS_PREFIX/<name>/lib (default /opt/perftramp-cross).
 *  - pt_arch_host() finds the table when compiled for that arch.
 *  - The contract below: every register argument kind of the ABI reaches
 *    the target untouched, every register return comes back untouched,
 *    the hidden struct-return pointer works.  Set INT_ARG_REGS and
 *    FP_ARG_REGS for the ABI (defaults: 8 and 8).
 *  - Unwind: the table's CFI, registered with libgcc's __register_frame,
 *    lets _Unwind_Backtrace from the target see exactly one frame more than
 *    a direct call (inside the trampoline) and the same frames below.
 *    The caller's CFA and frame-pointer register must come out as in the
 *    direct call, and a run with no CFI registered (control) must not.
 *  - Every instruction boundary: a copy of the trampoline with instruction
 *    k replaced by the table's .trap traps there; unwinding from the signal
 *    handler through the signal frame into the trampoline at that pc must
 *    reach the caller with the same ip/CFA/frame pointer and the same
 *    bottom.  Needs libgcc to unwind the platform's signal frame (checked
 *    first with a trap in compiled code; under qemu-user 7.2 ppc64le it
 *    cannot, and the summary says so).  The trap must fit before the data
 *    words (x86-64's 2-byte ud2 at the final 1-byte ret does not: skipped).
 *  - Frame-pointer walk (where FP_WALK is defined for the arch): the
 *    frame chain from the target passes through the trampoline's frame.
 *    s390x needs -mbackchain (run_foreign.sh adds it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sigsetjmp, siginfo_t, MAP_ANONYMOUS */
#endif
#include "emit/eh_frame.h"
#include "emit/layout.h"
#include "perftramp.h"
#include "arch/table.h"

#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

/* Argument registers of each ABI (arguments beyond them go on the stack,
 * which trampolines do not support). */
#if defined(__s390x__)
#define INT_ARG_REGS 5 /* r2-r6 */
#define FP_ARG_REGS 4  /* f0 f2 f4 f6 */
#else
#define INT_ARG_REGS 8 /* x0-x7, a0-a7, r3-r10, rdi.. (x86-64 has 6) */
#define FP_ARG_REGS 8  /* v0-v7, fa0-fa7, f1-f8 (of 13), xmm0-7 */
#endif
#if defined(__x86_64__)
#undef INT_ARG_REGS
#define INT_ARG_REGS 6
#endif

/* Frame-pointer chains this harness knows how to walk. */
#if defined(__aarch64__) || defined(__x86_64__)
#define FP_WALK 1 /* frame record {prev fp, return address} at fp */
#define FP_PREV(fp) (((void **)(fp))[0])
#define FP_RA(fp) (((void **)(fp))[1])
#elif defined(__riscv)
#define FP_WALK 1 /* s0 = CFA; ra at -8, prev s0 at -16 (psABI) */
#define FP_PREV(fp) (((void **)(fp))[-2])
#define FP_RA(fp) (((void **)(fp))[-1])
#elif defined(__powerpc64__)
#define FP_WALK 1 /* back chain at 0(r1); a callee saves LR at 16 in its caller's frame (ELFv2 ABI 2.2.2) */
#define FP_PREV(fp) (((void **)(fp))[0])
#define FP_RA(fp) (((void **)FP_PREV(fp))[2])
#elif defined(__s390x__) && defined(PT_S390_BACKCHAIN) /* run_foreign.sh: -mbackchain */
/* -mbackchain: __builtin_frame_address(0) is the entry r15, the caller's
 * frame, where the function saved its r14 (at 112) and whose 0(r15) holds
 * the back chain to the next frame */
#define FP_WALK 1
#define FP_PREV(fp) (((void **)(fp))[0])
#define FP_RA(fp) (((void **)(fp))[14])
#endif

#if defined(__clang__)
#define NOINLINE __attribute__((noinline, unused))
#else
#define NOINLINE __attribute__((noinline, noclone, unused))
#endif

static int passed, failed;

/* Per-section tallies for the one-line summary run_foreign.sh prints. */
enum { SEC_CONTRACT, SEC_LIFECYCLE, SEC_UNWIND, SEC_FP, SEC_BOUNDARY, SEC_COUNT };
static const char *const sec_name[SEC_COUNT] = {"contract", "lifecycle", "unwind", "fp-walk", "cfi-boundaries"};
static int section, sec_pass[SEC_COUNT], sec_total[SEC_COUNT];

static void check(bool ok, const char *what)
{
    sec_total[section]++;
    if (ok) {
        passed++;
        sec_pass[section]++;
    } else {
        failed++;
    }
    printf("%s - %s\n", ok ? "ok" : "not ok", what);
    fflush(stdout);
}

static perftramp *pt;

static perftramp_fn wrap(void *target, const char *name)
{
    perftramp_fn f = perftramp_wrap(pt, (perftramp_fn)target, name);
    if (!f) {
        printf("perftramp_wrap(%s): %s\n", name, strerror(errno));
        exit(1);
    }
    return f;
}
#define WRAP(type, fn) ((type)wrap((void *)(fn), #fn))

/* ---- targets: weighted sums detect a lost, swapped or clobbered argument */

NOINLINE static long t_i8(long a, long b, long c, long d, long e, long f, long g, long h)
{
    return a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + 17 * g + 19 * h;
}
NOINLINE static long t_i6(long a, long b, long c, long d, long e, long f)
{
    return a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f;
}
NOINLINE static long t_i5(long a, long b, long c, long d, long e)
{
    return a + 3 * b + 5 * c + 7 * d + 11 * e;
}
NOINLINE static int t_narrow(signed char a, unsigned short b, int c, unsigned d)
{
    return a * 1000000 + b * 10 + c - (int)d;
}
NOINLINE static signed char t_schar(signed char a) { return (signed char)(a - 1); }
NOINLINE static unsigned short t_ushort(unsigned short a) { return (unsigned short)(a + 1); }
NOINLINE static void *t_ptr(void *p) { return (char *)p + 1; }

NOINLINE static double t_d8(double a, double b, double c, double d, double e, double f, double g, double h)
{
    return a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + 17 * g + 19 * h;
}
NOINLINE static double t_d4(double a, double b, double c, double d)
{
    return a + 3 * b + 5 * c + 7 * d;
}
NOINLINE static float t_f8(float a, float b, float c, float d, float e, float f, float g, float h)
{
    return a + 3 * b + 5 * c + 7 * d + 11 * e + 13 * f + 17 * g + 19 * h;
}
NOINLINE static float t_f4(float a, float b, float c, float d)
{
    return a + 3 * b + 5 * c + 7 * d;
}
NOINLINE static long double t_ld(long double a, long double b) { return a * 3 + b; }

NOINLINE static double t_mix6(int a, double b, long c, float d, unsigned e, double f)
{
    return a + 3 * b + 5 * (double)c + 7 * d + 11 * (double)e + 13 * f;
}
NOINLINE static double t_mix16(long i0, double d0, long i1, double d1, long i2, double d2, long i3, double d3,
                               long i4, double d4, long i5, double d5, long i6, double d6, long i7, double d7)
{
    return (double)(i0 + 3 * i1 + 5 * i2 + 7 * i3 + 11 * i4 + 13 * i5 + 17 * i6 + 19 * i7) +
           1000 * (d0 + 3 * d1 + 5 * d2 + 7 * d3 + 11 * d4 + 13 * d5 + 17 * d6 + 19 * d7);
}

NOINLINE static long t_vsum(int n, ...)
{
    va_list ap;
    long s = 0;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        s += (long)(2 * i + 1) * va_arg(ap, long);
    va_end(ap);
    return s;
}
NOINLINE static double t_vmix(int n, ...)
{
    va_list ap;
    double s = 0;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        s += (i % 2) ? (double)(2 * i + 1) * va_arg(ap, double) : (double)(2 * i + 1) * (double)va_arg(ap, long);
    va_end(ap);
    return s;
}

struct two_l { long a, b; };
struct dl { double d; long l; };
struct ff { float a, b; };
struct hfa4 { double a, b, c, d; };
struct big { long v[6]; };

NOINLINE static struct two_l t_two_l(long a, long b) { return (struct two_l){a * 2, b * 3}; }
NOINLINE static struct dl t_dl(double d, long l) { return (struct dl){d * 2, l * 3}; }
NOINLINE static struct ff t_ff(float a, float b) { return (struct ff){a * 2, b * 3}; }
NOINLINE static struct hfa4 t_hfa4(double a, double b) { return (struct hfa4){a, b, a + b, a * b}; }
NOINLINE static struct big t_big(long x)
{
    struct big r;
    for (int i = 0; i < 6; i++)
        r.v[i] = x * (i + 1);
    return r;
}
NOINLINE static long t_by_value(struct two_l s, struct ff f) { return s.a * 5 + s.b * 7 + (long)(f.a * 11 + f.b * 13); }

#if defined(__powerpc64__)
/* ELFv2 probes (hand-written: C cannot observe r12 at entry or r2 after a
 * call).  elfv2_r12 returns the r12 it was entered with: a global entry
 * point computes the callee's TOC from it (ELFv2 2.3.2.1).  elfv2_clobber_r2
 * wrecks r2 as a callee in another module would (its own TOC).
 * elfv2_call_r2(fn) calls fn the way a caller that does NOT restore r2
 * itself would, and returns r2 after the call minus r2 before: 0 when the
 * callee (the trampoline) restored the TOC from its save slot. */
long elfv2_r12(void);
long elfv2_clobber_r2(void);
long elfv2_call_r2(void *fn);
__asm__(".text\n"
        ".globl elfv2_r12\n.type elfv2_r12,@function\nelfv2_r12:\n mr 3,12\n blr\n"
        ".globl elfv2_clobber_r2\n.type elfv2_clobber_r2,@function\nelfv2_clobber_r2:\n li 2,0x1234\n li 3,0\n blr\n"
        ".globl elfv2_call_r2\n.type elfv2_call_r2,@function\nelfv2_call_r2:\n"
        " mflr 0\n std 0,16(1)\n std 31,-8(1)\n stdu 1,-112(1)\n mr 31,2\n"
        " mr 12,3\n mtctr 12\n bctrl\n subf 3,31,2\n mr 2,31\n"
        " addi 1,1,112\n ld 0,16(1)\n ld 31,-8(1)\n mtlr 0\n blr\n");
#endif

/* ---- contract */

static void test_contract(void)
{
    char what[128];
#if INT_ARG_REGS >= 8
    {
        long (*f)(long, long, long, long, long, long, long, long) =
            WRAP(long (*)(long, long, long, long, long, long, long, long), t_i8);
        long want = t_i8(1, -2, 3, 1L << 40, 5, -6, 7, 0x7fffffffffL);
        check(f(1, -2, 3, 1L << 40, 5, -6, 7, 0x7fffffffffL) == want, "8 integer arguments");
    }
#endif
#if INT_ARG_REGS >= 6
    {
        long (*f)(long, long, long, long, long, long) = WRAP(long (*)(long, long, long, long, long, long), t_i6);
        check(f(9, -8, 7, -6, 5, 1L << 50) == t_i6(9, -8, 7, -6, 5, 1L << 50), "6 integer arguments");
    }
#endif
    {
        long (*f)(long, long, long, long, long) = WRAP(long (*)(long, long, long, long, long), t_i5);
        check(f(-1, 2, -3, 4, 1L << 33) == t_i5(-1, 2, -3, 4, 1L << 33), "5 integer arguments");
    }
    {
        int (*f)(signed char, unsigned short, int, unsigned) = WRAP(int (*)(signed char, unsigned short, int, unsigned), t_narrow);
        check(f(-7, 65535, -123, 4000000000u) == t_narrow(-7, 65535, -123, 4000000000u), "narrow integer arguments (sign/zero extension)");
        signed char (*c)(signed char) = WRAP(signed char (*)(signed char), t_schar);
        check(c(-128) == 127 && c(0) == -1, "signed char return");
        unsigned short (*s)(unsigned short) = WRAP(unsigned short (*)(unsigned short), t_ushort);
        check(s(65535) == 0 && s(1) == 2, "unsigned short return");
        void *(*p)(void *) = WRAP(void *(*)(void *), t_ptr);
        char buf[2];
        check(p(buf) == buf + 1, "pointer argument and return");
    }
#if FP_ARG_REGS >= 8
    {
        double (*f)(double, double, double, double, double, double, double, double) =
            WRAP(double (*)(double, double, double, double, double, double, double, double), t_d8);
        check(f(0.5, -1.25, 3e10, 4, 5.5, -6, 7.125, 1e-3) == t_d8(0.5, -1.25, 3e10, 4, 5.5, -6, 7.125, 1e-3),
              "8 double arguments, double return");
        float (*g)(float, float, float, float, float, float, float, float) =
            WRAP(float (*)(float, float, float, float, float, float, float, float), t_f8);
        check(g(0.5f, -1.25f, 3e10f, 4, 5.5f, -6, 7.125f, 1e-3f) == t_f8(0.5f, -1.25f, 3e10f, 4, 5.5f, -6, 7.125f, 1e-3f),
              "8 float arguments, float return");
    }
#endif
    {
        double (*f)(double, double, double, double) = WRAP(double (*)(double, double, double, double), t_d4);
        check(f(0.5, -1.25, 3e10, 1e-300) == t_d4(0.5, -1.25, 3e10, 1e-300), "4 double arguments, double return");
        float (*g)(float, float, float, float) = WRAP(float (*)(float, float, float, float), t_f4);
        check(g(0.5f, -1.25f, 3e10f, 1e-30f) == t_f4(0.5f, -1.25f, 3e10f, 1e-30f), "4 float arguments, float return");
#if !defined(__x86_64__) /* x86-64 passes long double on the stack */
        long double (*l)(long double, long double) = WRAP(long double (*)(long double, long double), t_ld);
        check(l(1.0L / 3, 2.5L) == t_ld(1.0L / 3, 2.5L), "long double arguments and return");
#endif
    }
    {
        double (*f)(int, double, long, float, unsigned, double) = WRAP(double (*)(int, double, long, float, unsigned, double), t_mix6);
        check(f(-3, 1.5, 1L << 35, 2.25f, 7u, -9.75) == t_mix6(-3, 1.5, 1L << 35, 2.25f, 7u, -9.75),
              "mixed integer and floating-point arguments");
    }
#if INT_ARG_REGS >= 8 && FP_ARG_REGS >= 8 && !defined(__powerpc64__)
    /* (not ppc64: ELFv2 gives every argument a parameter save area
     * doubleword and only the first eight travel in r3-r10, so i4-i7 of
     * these 16 would go on the stack) */
    {
        double (*f)(long, double, long, double, long, double, long, double, long, double, long, double, long, double, long, double) =
            WRAP(double (*)(long, double, long, double, long, double, long, double, long, double, long, double, long, double, long,
                            double),
                 t_mix16);
        check(f(1, .5, 2, 1.5, 3, 2.5, 4, 3.5, 5, 4.5, 6, 5.5, 7, 6.5, 8, 7.5) ==
                  t_mix16(1, .5, 2, 1.5, 3, 2.5, 4, 3.5, 5, 4.5, 6, 5.5, 7, 6.5, 8, 7.5),
              "8 integer + 8 double arguments interleaved");
    }
#endif
    {
        long (*v)(int, ...) = WRAP(long (*)(int, ...), t_vsum);
        long want = INT_ARG_REGS >= 8 ? t_vsum(7, 1L, 2L, 3L, 4L, 5L, 6L, 1L << 40) : t_vsum(4, 1L, 2L, 3L, 1L << 40);
        long got = INT_ARG_REGS >= 8 ? v(7, 1L, 2L, 3L, 4L, 5L, 6L, 1L << 40) : v(4, 1L, 2L, 3L, 1L << 40);
        snprintf(what, sizeof what, "variadic call, %d integer arguments", INT_ARG_REGS >= 8 ? 8 : 5);
        check(got == want, what);
        double (*m)(int, ...) = WRAP(double (*)(int, ...), t_vmix);
        check(m(4, 10L, 0.25, -3L, 1e20) == t_vmix(4, 10L, 0.25, -3L, 1e20), "variadic call, mixed integer and double");
        int (*sn)(char *, size_t, const char *, ...) = WRAP(int (*)(char *, size_t, const char *, ...), snprintf);
        char buf[64];
        int n = sn(buf, sizeof buf, "%d|%.3f", -42, 2.5);
        check(n == 9 && strcmp(buf, "-42|2.500") == 0, "variadic libc snprintf through a trampoline");
    }
    {
        struct two_l (*f)(long, long) = WRAP(struct two_l (*)(long, long), t_two_l);
        struct two_l r = f(5, -7);
        check(r.a == 10 && r.b == -21, "struct {long,long} return (register pair or hidden pointer)");
        struct dl (*g)(double, long) = WRAP(struct dl (*)(double, long), t_dl);
        struct dl s = g(1.25, 9);
        check(s.d == 2.5 && s.l == 27, "struct {double,long} return");
        struct ff (*h)(float, float) = WRAP(struct ff (*)(float, float), t_ff);
        struct ff t = h(1.5f, -2);
        check(t.a == 3 && t.b == -6, "struct {float,float} return");
        struct hfa4 (*k)(double, double) = WRAP(struct hfa4 (*)(double, double), t_hfa4);
        struct hfa4 u = k(3, 0.5);
        check(u.a == 3 && u.b == 0.5 && u.c == 3.5 && u.d == 1.5, "struct {4 x double} return (HFA or hidden pointer)");
        struct big (*b)(long) = WRAP(struct big (*)(long), t_big);
        struct big w = b(-4);
        bool ok = true;
        for (int i = 0; i < 6; i++)
            ok = ok && w.v[i] == -4L * (i + 1);
        check(ok, "48-byte struct return through the hidden pointer (x8 / a0 / r3 / r2 / rdi)");
        long (*bv)(struct two_l, struct ff) = WRAP(long (*)(struct two_l, struct ff), t_by_value);
        struct two_l x = {3, -4};
        struct ff y = {2.5f, 4};
        check(bv(x, y) == t_by_value(x, y), "small structs passed by value");
    }
#if defined(__powerpc64__)
    {
        long (*r12)(void) = WRAP(long (*)(void), elfv2_r12);
        check(r12() == (long)(uintptr_t)elfv2_r12, "ELFv2: the target is entered with r12 = its address");
        check(elfv2_call_r2((void *)elfv2_clobber_r2) != 0, "ELFv2: the r2 probe sees a clobbered TOC (control)");
        check(elfv2_call_r2((void *)wrap((void *)elfv2_clobber_r2, "elfv2_clobber_r2")) == 0,
              "ELFv2: the trampoline restores the caller's TOC (r2) after the call");
    }
#endif
}

/* ---- wrap, release, reuse */

NOINLINE static long id0(long x) { return x * 10 + 0; }
NOINLINE static long id1(long x) { return x * 10 + 1; }
NOINLINE static long id2(long x) { return x * 10 + 2; }
NOINLINE static long id3(long x) { return x * 10 + 3; }
static long (*const ids[4])(long) = {id0, id1, id2, id3};

#define MANY 3000 /* more than one 64 KiB arena on every table */

static void test_lifecycle(void)
{
    static perftramp_fn t[MANY];
    static uintptr_t freed[MANY / 2];
    char name[32];
    bool ok = true;
    for (int i = 0; i < MANY; i++) {
        snprintf(name, sizeof name, "fn_%d", i);
        t[i] = wrap((void *)ids[i % 4], name);
    }
    for (int i = 0; i < MANY; i++)
        ok = ok && ((long (*)(long))t[i])(i) == i * 10L + i % 4;
    check(ok, "3000 trampolines over several arenas each call their own target");

    const struct pt_arch *a = pt_arch_host();
    struct pt_layout l;
    check(a && pt_layout_build(&l, a, NULL) == 0 && memcmp((void *)t[0], (void *)t[1], l.size) != 0,
          "two trampolines differ in their bytes (per-trampoline tag)");

    ok = true;
    for (int i = 0; i < MANY; i += 2) {
        ok = ok && perftramp_release(pt, t[i]) == 0;
        freed[i / 2] = (uintptr_t)t[i];
    }
    check(ok, "release every other trampoline");
    errno = 0;
    check(perftramp_release(pt, t[0]) == -1 && errno == EINVAL, "double release fails with EINVAL");
    errno = 0;
    check(perftramp_release(pt, (perftramp_fn)id0) == -1 && errno == EINVAL, "release of a non-trampoline fails with EINVAL");
    errno = 0;
    check(perftramp_release(pt, (perftramp_fn)((uintptr_t)t[1] + 4)) == -1 && errno == EINVAL,
          "release of an address inside a trampoline fails with EINVAL");
    errno = 0;
    check(perftramp_wrap(pt, NULL, "x") == NULL && errno == EINVAL, "wrap of NULL fails with EINVAL");

    ok = true;
    size_t reused = 0;
    for (int i = 0; i < MANY; i += 2) {
        snprintf(name, sizeof name, "again_%d", i);
        t[i] = wrap((void *)ids[(i + 1) % 4], name);
        for (int k = 0; k < MANY / 2; k++)
            if (freed[k] == (uintptr_t)t[i]) {
                reused++;
                break;
            }
    }
    for (int i = 0; i < MANY; i++)
        ok = ok && ((long (*)(long))t[i])(i) == i * 10L + (i % 2 ? i % 4 : (i + 1) % 4);
    check(reused == MANY / 2, "released slots are reused");
    check(ok, "reused slots call their new targets, the others still their old ones");
    ok = true;
    for (int i = 0; i < MANY; i++)
        ok = ok && perftramp_release(pt, t[i]) == 0;
    check(ok, "release all");
}

/* ---- unwinding */

#define MAX_FRAMES 64
/* Per frame: the ip, the CFA, and the frame-pointer register as unwound
 * (the caller's values must come out exactly as in a direct call). 
 * libgcc's _Unwind_GetCFA of a frame is that frame's sp (the CFA of the
 * frame above it), so a wrong CFA rule in the trampoline shows up as a
 * wrong CFA of its caller. */
#if defined(__x86_64__)
#define FP_DWARF 6 /* rbp */
#elif defined(__aarch64__)
#define FP_DWARF 29 /* x29 */
#elif defined(__riscv)
#define FP_DWARF 8 /* s0 */
#elif defined(__powerpc64__)
#define FP_DWARF 31 /* r31, gcc's frame pointer */
#elif defined(__s390x__)
#define FP_DWARF 11 /* r11, gcc's frame pointer */
#endif
struct trace {
    int n;
    uintptr_t ip[MAX_FRAMES], cfa[MAX_FRAMES], fp[MAX_FRAMES];
    _Unwind_Reason_Code end;
};
static struct trace trace;
static void *fp_ra[3];

static _Unwind_Reason_Code trace_cb(struct _Unwind_Context *ctx, void *arg)
{
    struct trace *t = arg;
    if (t->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    t->ip[t->n] = _Unwind_GetIP(ctx);
    t->cfa[t->n] = _Unwind_GetCFA(ctx);
#ifdef FP_DWARF
    t->fp[t->n] = _Unwind_GetGR(ctx, FP_DWARF);
#endif
    t->n++;
    return _URC_NO_REASON;
}

NOINLINE static long unwind_target(long x)
{
    memset(&trace, 0, sizeof trace);
    trace.end = _Unwind_Backtrace(trace_cb, &trace);
#ifdef FP_WALK
    void *fp = __builtin_frame_address(0);
    for (int i = 0; i < 3 && fp; i++) {
        fp_ra[i] = FP_RA(fp);
        fp = FP_PREV(fp);
    }
#endif
    return x + 1;
}

NOINLINE static long call_through(long (*f)(long), long x)
{
    long r = f(x);
    __asm__ volatile("" : "+r"(r)::"memory"); /* no tail call */
    return r;
}

void __register_frame(void *);
void __deregister_frame(void *);

/* Maps `len` bytes within +-1 GiB of `near` (pcrel|sdata4 FDE pointers
 * reach +-2 GiB): try hints above and below. */
static void *map_near(uintptr_t near, size_t len)
{
    for (long step = 1; step < 1024; step *= 2) {
        for (int sign = -1; sign <= 1; sign += 2) {
            uintptr_t hint = (near & ~(uintptr_t)0xfffff) + (uintptr_t)(sign * step) * 0x100000u;
            void *p = mmap((void *)hint, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
            if (p == MAP_FAILED)
                continue;
            intptr_t d = (intptr_t)((uintptr_t)p - near);
            if (d > -(1L << 30) && d < (1L << 30))
                return p;
            munmap(p, len);
        }
    }
    return NULL;
}

/* State of the three unwind runs (see test_unwind). */
static struct {
    long (*fn[3])(long);
    void *eh;
    struct trace tr[3];
    void *ra[3][3];
    long got[3];
} uw;

NOINLINE static void unwind_prepare(int k)
{
    if (k == 2)
        __register_frame(uw.eh);
    memset(fp_ra, 0, sizeof fp_ra);
}

NOINLINE static void unwind_record(int k, long got)
{
    uw.got[k] = got;
    uw.tr[k] = trace;
    memcpy(uw.ra[k], fp_ra, sizeof fp_ra);
}

NOINLINE static void test_unwind(void)
{
    const struct pt_arch *a = pt_arch_host();
    struct pt_layout l;
    if (!a || pt_layout_build(&l, a, NULL) < 0) {
        check(false, "host table lays out");
        return;
    }
    long (*tramp)(long) = (long (*)(long))wrap((void *)unwind_target, "unwind_target");
    uintptr_t x = (uintptr_t)tramp;

    /* .eh_frame for this one trampoline, emitted from the table, near it. */
    size_t cap = 4096;
    uint8_t *eh = map_near(x, cap);
    check(eh != NULL, "map memory for .eh_frame within reach of the code");
    if (!eh)
        return;
    struct pt_buf prog, b;
    pt_buf_init(&prog, a->big_endian);
    pt_buf_init_fixed(&b, eh, cap, a->big_endian);
    int r = pt_cfi_program(&prog, &l);
    size_t cie = pt_eh_cie(&b, a);
    pt_eh_fde(&b, cie, (int64_t)(x - (uintptr_t)eh), l.size, prog.data, prog.len);
    pt_eh_terminator(&b);
    check(r == 0 && !prog.failed && !b.failed, "emit CIE + FDE for the trampoline");
    pt_buf_free(&prog);
    printf("# %s: trampoline %zu bytes (code %zu), .eh_frame %zu bytes (CIE + 1 FDE + terminator)\n", a->name, l.size,
           l.code_len, b.len);

    /* One call site for all three runs, so every frame below is the same:
     * 0 direct; 1 through the trampoline with no CFI registered (control:
     * the unwinder cannot pass it, so the checks below can fail);
     * 2 through the trampoline with its CFI registered. */
    memset(&uw, 0, sizeof uw);
    uw.fn[0] = unwind_target;
    uw.fn[1] = uw.fn[2] = tramp;
    uw.eh = eh;
    /* an unknown trip count and a body with no branch on k (those sit in
     * noinline helpers): neither gcc nor clang can split the call site */
    static volatile int runs = 3;
    for (int k = 0; k < runs; k++) {
        unwind_prepare(k);
        long g = call_through(uw.fn[k], k);
        unwind_record(k, g);
    }
    struct trace *tr = uw.tr;
    void *(*ra)[3] = uw.ra;
    long *got = uw.got;
    __deregister_frame(eh);
    check(got[0] == 1 && got[1] == 2 && got[2] == 3, "the unwind target returns through the trampoline");

    struct trace *direct = &tr[0], *bare = &tr[1], *via = &tr[2];
    printf("# frames: direct %d (end %d), through trampoline %d (end %d), unregistered %d\n", direct->n, direct->end,
           via->n, via->end, bare->n);
    check(bare->n < direct->n + 1, "without registered CFI the unwinder stops at the trampoline (control)");
    check(via->n == direct->n + 1, "_Unwind_Backtrace sees exactly one frame more through the trampoline");
    check(via->n >= 2 && via->ip[1] > x && via->ip[1] <= x + l.code_len, "the extra frame is inside the trampoline");
    bool same = via->n == direct->n + 1 && via->ip[0] == direct->ip[0];
    for (int i = 1; same && i < direct->n; i++)
        same = via->ip[i + 1] == direct->ip[i] && via->cfa[i + 1] == direct->cfa[i] && via->fp[i + 1] == direct->fp[i];
    check(same, "the frames above and below the trampoline are those of the direct call (ip, CFA, frame pointer), "
                "down to the same bottom");
    check(via->end == direct->end, "the unwind ends the same way as the direct call's");
    if (!same)
        for (int i = 0; i < via->n || i < direct->n; i++)
            printf("# %2d direct %#lx via %#lx\n", i, i < direct->n ? (unsigned long)direct->ip[i] : 0ul,
                   i < via->n ? (unsigned long)via->ip[i] : 0ul);

#ifdef FP_WALK
    section = SEC_FP;
    check((uintptr_t)ra[2][0] > x && (uintptr_t)ra[2][0] <= x + l.code_len && ra[2][1] == ra[0][0] &&
              ra[2][2] == ra[0][1],
          "frame-pointer chain passes through the trampoline's frame record");
    if (sec_pass[SEC_FP] == 0)
        printf("# fp chain: trampoline %#lx; direct %p %p %p; through it %p %p %p\n", (unsigned long)x, ra[0][0], ra[0][1],
               ra[0][2], ra[2][0], ra[2][1], ra[2][2]);
#else
    (void)ra;
    printf("# frame-pointer walk not implemented for this arch in the harness\n");
#endif
    perftramp_release(pt, (perftramp_fn)tramp);
    munmap(eh, cap);
}

/* ---- CFI at every instruction boundary, by execution
 *
 * For each instruction k of the table, a copy of the trampoline has its
 * instruction k replaced by the table's trap.  Calling it traps with the
 * machine state of boundary k; the signal handler unwinds with
 * _Unwind_Backtrace, through the kernel's (qemu's) signal frame, into the
 * trampoline at exactly that pc (the row for offset k), and on into the
 * caller.  The frames below the trampoline must be those of a direct
 * call from the same call site.  A trap in a compiled function is the
 * control that proves this platform's signal frames unwind at all. */

static sigjmp_buf trap_jmp;
static struct trace trap_trace;

static void on_trap(int sig, siginfo_t *si, void *uc)
{
    (void)sig;
    (void)si;
    (void)uc;
    memset(&trap_trace, 0, sizeof trap_trace);
    trap_trace.end = _Unwind_Backtrace(trace_cb, &trap_trace);
    siglongjmp(trap_jmp, 1);
}

NOINLINE static long trapping(long x)
{
    __asm__ volatile("" : "+r"(x));
    __builtin_trap(); /* unconditional: no .cold split */
    return x;
}

/* The frames of `t` from the one whose ip is in [lo, hi] on must be those
 * of `direct` from its second frame on (same caller, same bottom).
 * Returns the index of the matching frame, or -1. */
static int same_below(const struct trace *t, uintptr_t lo, uintptr_t hi, const struct trace *direct)
{
    for (int j = 0; j < t->n; j++) {
        if (t->ip[j] < lo || t->ip[j] > hi)
            continue;
        if (t->n - j != direct->n)
            return -1;
        for (int i = 1; i < direct->n; i++)
            if (t->ip[j + i] != direct->ip[i] || t->cfa[j + i] != direct->cfa[i] || t->fp[j + i] != direct->fp[i])
                return -1;
        return j;
    }
    return -1;
}

/* State of the boundary runs.  Run -2 is the direct reference, -1 the
 * control (a trap in compiled code), k >= 0 a trap at instruction k.  The
 * loop body is the same three calls for every run, so the call into the
 * code under test is one call site and every frame below it is equal. */
static struct {
    const struct pt_arch *a;
    struct pt_layout l;
    uint8_t *mem;
    long (*fn)(long);
    struct trace direct;
    int control, bad, checked;
    long result;
} bd;

NOINLINE static void boundary_prepare(int k)
{
    if (k == -2) {
        bd.fn = unwind_target;
    } else if (k == -1) {
        bd.fn = trapping;
    } else {
        bd.fn = NULL;
        if (bd.l.insn_off[k] + bd.a->trap_len > bd.l.word_off[0])
            return; /* a trap spilling into the target word would misdirect the call */
        pt_layout_write(&bd.l, bd.mem, (uint64_t)(uintptr_t)id1, 0x7470);
        memcpy(bd.mem + bd.l.insn_off[k], bd.a->trap, bd.a->trap_len);
        __builtin___clear_cache((char *)bd.mem, (char *)bd.mem + bd.l.size);
        bd.fn = (long (*)(long))(void *)bd.mem;
    }
}

NOINLINE static int boundary_run(int k)
{
    if (!bd.fn)
        return 0;
    if (sigsetjmp(trap_jmp, 1))
        return 1;
    bd.result = call_through(bd.fn, k);
    return 0;
}

static const char *boundary_note = "";

static void print_trace(const char *what, const struct trace *t)
{
    printf("# %s:", what);
    for (int i = 0; i < t->n; i++)
        printf(" %#lx/cfa %#lx/fp %#lx", (unsigned long)t->ip[i], (unsigned long)t->cfa[i], (unsigned long)t->fp[i]);
    printf("\n");
}

NOINLINE static void boundary_record(int k, int trapped)
{
    char what[160];
    if (k == -2) {
        bd.direct = trace;
        return;
    }
    if (k == -1) {
        bd.control =
            trapped ? same_below(&trap_trace, (uintptr_t)trapping, (uintptr_t)trapping + 256, &bd.direct) : -1;
        if (bd.control < 0) {
            printf("# signal frames do not unwind here (control): per-boundary check not possible\n");
            boundary_note = " (cfi-boundaries not run: libgcc cannot unwind this platform's signal frame)";
            print_trace("direct", &bd.direct);
            print_trace("trap in compiled code", &trap_trace);
        }
        return;
    }
    if (bd.control < 0)
        return;
    uintptr_t pc = (uintptr_t)bd.mem + bd.l.insn_off[k];
    if (bd.fn == NULL) {
        printf("# boundary %d (+%zu): the table's %u-byte trap would overwrite the data words: not checked\n", k,
               bd.l.insn_off[k], bd.a->trap_len);
        return;
    }
    /* the signal frame's pc is the trap (aarch64, riscv64, x86-64) or just
     * after it (s390x: the PSW; libgcc then looks up pc - 1) */
    int j = trapped ? same_below(&trap_trace, pc, pc + bd.a->trap_len, &bd.direct) : -1;
    snprintf(what, sizeof what, "unwind from boundary %d (+%zu, before `%s`) reaches the caller and the same bottom", k,
             bd.l.insn_off[k], bd.a->insns[k].text);
    check(j >= 0, what);
    bd.checked++;
    if (j < 0) {
        bd.bad++;
        printf("# trapped %d at %#lx\n", trapped, (unsigned long)pc);
        print_trace("direct", &bd.direct);
        print_trace("from the trap", &trap_trace);
    }
}

NOINLINE static void test_boundaries(void)
{
    memset(&bd, 0, sizeof bd);
    bd.a = pt_arch_host();
    if (!bd.a || pt_layout_build(&bd.l, bd.a, NULL) < 0)
        return;
    /* private RWX code (no arena), rewritten for every boundary, with its
     * .eh_frame 4 KiB further on */
    size_t len = 8192;
    bd.mem = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bd.mem == MAP_FAILED) {
        check(false, "map RWX memory for patched trampolines");
        return;
    }
    uint8_t *eh = bd.mem + 4096;
    struct pt_buf prog, b;
    pt_buf_init(&prog, bd.a->big_endian);
    pt_buf_init_fixed(&b, eh, 4096, bd.a->big_endian);
    int r = pt_cfi_program(&prog, &bd.l);
    size_t cie = pt_eh_cie(&b, bd.a);
    pt_eh_fde(&b, cie, -4096, bd.l.size, prog.data, prog.len);
    pt_eh_terminator(&b);
    pt_buf_free(&prog);
    if (r < 0 || b.failed) {
        check(false, "emit CIE + FDE for the patched trampoline");
        return;
    }

    struct sigaction sa, old[5];
    const int sigs[5] = {SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE};
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    for (int s = 0; s < 5; s++)
        sigaction(sigs[s], &sa, &old[s]);
    __register_frame(eh);

    static volatile int n_runs;
    n_runs = (int)bd.a->n_insns;
    for (int k = -2; k < n_runs; k++) {
        boundary_prepare(k);
        int trapped = boundary_run(k);
        boundary_record(k, trapped);
    }
    __deregister_frame(eh);
    for (int s = 0; s < 5; s++)
        sigaction(sigs[s], &old[s], NULL);
    munmap(bd.mem, len);
    if (bd.control >= 0)
        printf("# %d of %zu instruction boundaries checked: unwinding from a trap there reaches the caller (%d bad)\n",
               bd.checked, bd.a->n_insns, bd.bad);
}

#if defined(__aarch64__)
/* ---- AArch64 BTI: the landing pad works where it is enforced
 *
 * Code in a PROT_BTI page may be entered by an indirect call (BLR) only
 * at a BTI c (or PACIxSP) instruction, else the branch raises a Branch
 * Target exception (SIGILL).  The trampoline is copied into such a page
 * and called; the control copy has its `bti c` replaced by a NOP and must
 * trap, which proves the page is really guarded. */
#ifndef PROT_BTI
#define PROT_BTI 0x10 /* Linux arch/arm64/include/uapi/asm/mman.h */
#endif

NOINLINE static void test_bti(void)
{
    const struct pt_arch *a = pt_arch_host();
    struct pt_layout l;
    if (!a || pt_layout_build(&l, a, NULL) < 0)
        return;
    size_t len = 4096;
    uint8_t *mem = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED) {
        check(false, "map memory for the BTI check");
        return;
    }
    pt_layout_write(&l, mem, (uint64_t)(uintptr_t)id2, 1);
    pt_layout_write(&l, mem + 256, (uint64_t)(uintptr_t)id2, 2);
    static const uint8_t nop[4] = {0x1f, 0x20, 0x03, 0xd5}; /* hint #0 */
    memcpy(mem + 256, nop, sizeof nop);
    __builtin___clear_cache((char *)mem, (char *)mem + len);
    if (mprotect(mem, len, PROT_READ | PROT_EXEC | PROT_BTI) != 0) {
        printf("# BTI: mprotect(PROT_BTI) refused (%s): landing pad not checked\n", strerror(errno));
        munmap(mem, len);
        return;
    }
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGILL, &sa, &old);
    bd.fn = (long (*)(long))(void *)mem;
    int trapped_good = boundary_run(7);
    long good = bd.result;
    bd.fn = (long (*)(long))(void *)(mem + 256);
    int trapped_bad = boundary_run(7);
    sigaction(SIGILL, &old, NULL);
    munmap(mem, len);
    check(!trapped_good && good == 72, "BTI-guarded page: an indirect call lands on `bti c` and runs");
    check(trapped_bad, "BTI-guarded page: the same code without `bti c` traps (control: the page is guarded)");
}
#endif

int main(void)
{
    const struct pt_arch *a = pt_arch_host();
    printf("# arch %s\n", a ? a->name : "(no table)");
    struct perftramp_options opts = {.outputs = 0};
    pt = perftramp_open(&opts);
    if (!pt) {
        printf("perftramp_open: %s\n", strerror(errno));
        printf("0 passed, 1 failed\n");
        return 1;
    }
    section = SEC_CONTRACT;
    test_contract();
#if defined(__aarch64__)
    test_bti();
#endif
    section = SEC_LIFECYCLE;
    test_lifecycle();
    section = SEC_UNWIND;
    test_unwind();
    section = SEC_BOUNDARY;
    test_boundaries();
    section = SEC_LIFECYCLE;
    check(perftramp_close(pt) == 0, "close");
    printf("# summary:");
    for (int s = 0, first = 1; s < SEC_COUNT; s++)
        if (sec_total[s]) {
            printf("%s %s %d/%d", first ? "" : ",", sec_name[s], sec_pass[s], sec_total[s]);
            first = 0;
        }
    printf("%s\n", boundary_note);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
