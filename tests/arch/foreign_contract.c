/* SPDX-License-Identifier: MIT */
/* The trampoline contract and unwinding, on the architecture this is
 * compiled for: a self-contained harness (no Check: Debian's Check is not
 * multi-arch) that tests/arch/run_foreign.sh builds statically with the
 * cross gcc, the library sources and libffi.a, and runs under
 * qemu-<arch>-static (or natively for the host).  Output: one line per
 * check, a "# summary:" line, one "proof: <id> proven|failed <detail>"
 * line per proof (executed, unwound, every-boundary), then "N passed, N
 * failed".  Exit 0 only when all pass.
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
 *    FP_ARG_REGS for the ABI (defaults: 8 and 8); an ABI that passes
 *    every argument on the stack (i386) sets ARG_WORDS, the stack words
 *    its trampoline passes (tests needing more are left out).
 *  - Unwind: the table's CFI, registered with libgcc's __register_frame
 *    (on 32-bit Arm, whose libgcc reads EHABI tables only: the EHABI
 *    entries the emitter derives from the same rows, found through the
 *    library's __gnu_Unwind_Find_exidx),
 *    lets _Unwind_Backtrace from the target see exactly one frame more than
 *    a direct call (inside the trampoline) and the same frames below.
 *    The caller's CFA and frame-pointer register must come out as in the
 *    direct call, and a run with no CFI registered (control) must not.
 *  - Every instruction boundary (see "CFI at every instruction boundary"
 *    below): a copy of the trampoline with a trap over instruction k
 *    stops there; unwinding from the trap with libgcc, the caller's return
 *    address, CFA and callee-saved registers (and every frame below) must
 *    be those of a direct call, with the save slots of registers already
 *    reloaded poisoned; plus the call's return point seen from inside the
 *    target: N = instructions + 1 boundaries.  A new arch lists its ABI's
 *    callee-saved registers and how to read a ucontext_t there (csr,
 *    uc_get, UC_PC); where libgcc cannot unwind the platform's signal
 *    frame (ppc64le under qemu-user), a small assembly frame with hand-
 *    written CFI hands the interrupted registers to the unwinder.
 *  - Frame-pointer walk (where FP_WALK is defined for the arch): the
 *    frame chain from the target passes through the trampoline's frame.
 *    s390x needs -mbackchain (run_foreign.sh adds it).
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE 1 /* sigsetjmp, siginfo_t, MAP_ANONYMOUS */
#endif
#include "emit/eh_frame.h"
#include "emit/ehabi.h"
#include "emit/layout.h"
#include "outputs/outputs.h"
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
#include <ucontext.h>
#include <unwind.h>

/* Argument registers of each ABI (arguments beyond them go on the stack,
 * which trampolines do not support). */
#if defined(__s390x__)
#define INT_ARG_REGS 5 /* r2-r6 */
#define FP_ARG_REGS 4  /* f0 f2 f4 f6 */
#elif defined(__arm__)
#define INT_ARG_REGS 4 /* r0-r3 (AAPCS 6.1.1) */
#define FP_ARG_REGS 8  /* d0-d7, hard-float (AAPCS 6.1.2) */
#else
#define INT_ARG_REGS 8 /* x0-x7, a0-a7, r3-r10, rdi.. (x86-64 has 6) */
#define FP_ARG_REGS 8  /* v0-v7, fa0-fa7, f1-f8 (of 13), xmm0-7 */
#endif
#if defined(__x86_64__)
#undef INT_ARG_REGS
#define INT_ARG_REGS 6
#elif defined(__i386__)
/* cdecl: every argument on the stack; the trampoline passes five words
 * (src/arch/i686.c, include/perftramp.h) */
#undef INT_ARG_REGS
#undef FP_ARG_REGS
#define INT_ARG_REGS 5
#define FP_ARG_REGS 0
#define ARG_WORDS 5
#endif

#ifndef ARG_WORDS
#define ARG_WORDS 99 /* arguments travel in registers: no stack words to count */
#endif

/* Frame-pointer chains this harness knows how to walk. */
#if defined(__aarch64__) || defined(__x86_64__) || defined(__i386__)
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
#elif defined(__arm__) && defined(PT_ARM_APCS) /* run_foreign.sh: -marm -mapcs-frame */
/* APCS frames: fp (r11, __builtin_frame_address(0)) points at the saved
 * pc slot; the caller's fp is 12 bytes below it, the return address 4
 * (the layout the kernel's perf_callchain_user walks) */
#define FP_WALK 1
#define FP_PREV(fp) (((void **)(fp))[-3])
#define FP_RA(fp) (((void **)(fp))[-1])
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

/* 2^n in a long, for values that must not fit 32 bits where a long
 * holds 64 (2^(n mod 31) where it holds 32: 32-bit Arm) */
#define WIDE(n) ((long)(1UL << ((n) % (8 * sizeof(long) - 1))))

static int passed, failed;

/* Per-section tallies for the one-line summary run_foreign.sh prints. */
enum { SEC_CONTRACT, SEC_LIFECYCLE, SEC_UNWIND, SEC_FP, SEC_BOUNDARY, SEC_POISON, SEC_COUNT };
static const char *const sec_name[SEC_COUNT] = {"contract", "lifecycle", "unwind", "fp-walk", "cfi-boundaries",
                                                "poison-control"};
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
NOINLINE static long t_i4(long a, long b, long c, long d) { return a + 3 * b + 5 * c + 7 * d; }
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

#if defined(__i386__)
/* i386: five words of stack arguments of every kind, the conventions that
 * pass arguments in registers (regparm, fastcall: the trampoline leaves
 * eax, ecx and edx alone), a callee that pops a stack word (fastcall with
 * a third argument), and the stack alignment the target is entered with. */
NOINLINE static double t_d2i(double a, double b, int c) { return a + 3 * b + 5 * c; }
NOINLINE static long double t_ldi(long double a, int b, int c) { return a * 3 + b - 7 * c; }
NOINLINE static double t_mix5(int a, float b, double c, unsigned d) { return a + 3 * b + 5 * c + 7 * (double)d; }
NOINLINE __attribute__((regparm(3))) static long t_regparm(long a, long b, long c, long d, long e)
{
    return a + 3 * b + 5 * c + 7 * d + 11 * e;
}
NOINLINE __attribute__((fastcall)) static long t_fastcall(long a, long b, long c) { return a + 3 * b + 5 * c; }
/* Whether the caller's call left the stack 16-byte aligned: the compiler
 * assumes it (-mincoming-stack-boundary=4, GCC's default on Linux) and
 * does not realign a 16-aligned local. */
NOINLINE static int t_aligned(void)
{
    char v[16] __attribute__((aligned(16)));
    __asm__ volatile("" : : "r"(v) : "memory");
    return (uintptr_t)v % 16 == 0;
}
#endif

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
#if INT_ARG_REGS >= 5
    {
        long (*f)(long, long, long, long, long) = WRAP(long (*)(long, long, long, long, long), t_i5);
        check(f(-1, 2, -3, 4, WIDE(33)) == t_i5(-1, 2, -3, 4, WIDE(33)), "5 integer arguments");
    }
#else
    {
        long (*f)(long, long, long, long) = WRAP(long (*)(long, long, long, long), t_i4);
        check(f(-1, 2, -3, WIDE(33)) == t_i4(-1, 2, -3, WIDE(33)), "4 integer arguments");
    }
#endif
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
#if ARG_WORDS >= 8
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
        check(f(-3, 1.5, WIDE(35), 2.25f, 7u, -9.75) == t_mix6(-3, 1.5, WIDE(35), 2.25f, 7u, -9.75),
              "mixed integer and floating-point arguments");
    }
#endif
#if defined(__i386__)
    {
        double (*f)(double, double, int) = WRAP(double (*)(double, double, int), t_d2i);
        check(f(0.5, -1.25e10, 7) == t_d2i(0.5, -1.25e10, 7), "2 doubles and an int: five stack words, double return");
        float (*g)(float, float, float, float) = WRAP(float (*)(float, float, float, float), t_f4);
        check(g(0.5f, -1.25f, 3e10f, 1e-30f) == t_f4(0.5f, -1.25f, 3e10f, 1e-30f), "4 float arguments, float return");
        long double (*l)(long double, int, int) = WRAP(long double (*)(long double, int, int), t_ldi);
        check(l(1.0L / 3, 5, -2) == t_ldi(1.0L / 3, 5, -2), "a long double (three words) and two ints, long double return");
        double (*m)(int, float, double, unsigned) = WRAP(double (*)(int, float, double, unsigned), t_mix5);
        check(m(-3, 2.25f, 1.5e-7, 4000000000u) == t_mix5(-3, 2.25f, 1.5e-7, 4000000000u),
              "mixed integer and floating-point arguments");
        typedef long(__attribute__((regparm(3))) * regparm_fn)(long, long, long, long, long);
        regparm_fn rp = WRAP(regparm_fn, t_regparm);
        check(rp(1, -2, 3, -4, 5) == t_regparm(1, -2, 3, -4, 5), "regparm(3): eax, edx, ecx and two stack words");
        typedef long(__attribute__((fastcall)) * fastcall_fn)(long, long, long);
        fastcall_fn fc = WRAP(fastcall_fn, t_fastcall);
        check(fc(7, -8, 9) == t_fastcall(7, -8, 9) && fc(1, 2, 3) == t_fastcall(1, 2, 3),
              "fastcall: ecx, edx and a stack word the callee pops (ret $4), twice");
        int (*al)(void) = WRAP(int (*)(void), t_aligned);
        check(t_aligned() && al(), "the target is entered with the stack 16-byte aligned (direct call too)");
    }
#endif
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
        long want = INT_ARG_REGS >= 8   ? t_vsum(7, 1L, 2L, 3L, 4L, 5L, 6L, WIDE(40))
                    : INT_ARG_REGS >= 5 ? t_vsum(4, 1L, 2L, 3L, WIDE(40))
                                        : t_vsum(3, 1L, 2L, WIDE(40));
        long got = INT_ARG_REGS >= 8   ? v(7, 1L, 2L, 3L, 4L, 5L, 6L, WIDE(40))
                   : INT_ARG_REGS >= 5 ? v(4, 1L, 2L, 3L, WIDE(40))
                                       : v(3, 1L, 2L, WIDE(40));
        snprintf(what, sizeof what, "variadic call, %d integer arguments", INT_ARG_REGS >= 8 ? 8 : INT_ARG_REGS >= 5 ? 5 : 4);
        check(got == want, what);
        double (*m)(int, ...) = WRAP(double (*)(int, ...), t_vmix);
        char buf[64];
        int (*sn)(char *, size_t, const char *, ...) = WRAP(int (*)(char *, size_t, const char *, ...), snprintf);
#if INT_ARG_REGS >= 5 && ARG_WORDS >= 7
        check(m(4, 10L, 0.25, -3L, 1e20) == t_vmix(4, 10L, 0.25, -3L, 1e20), "variadic call, mixed integer and double");
        int n = sn(buf, sizeof buf, "%d|%.3f", -42, 2.5);
        check(n == 9 && strcmp(buf, "-42|2.500") == 0, "variadic libc snprintf through a trampoline");
#elif ARG_WORDS < 7 /* i386: the trampoline passes five stack words */
        check(m(2, 10L, 0.25) == t_vmix(2, 10L, 0.25), "variadic call, mixed integer and double (four words)");
        int n = sn(buf, sizeof buf, "%d|%d", -42, 7);
        check(n == 5 && strcmp(buf, "-42|7") == 0, "variadic libc snprintf through a trampoline (five words)");
#else /* AAPCS: variadic arguments travel in r0-r3 only, a double in an even pair */
        check(m(2, 10L, 0.25) == t_vmix(2, 10L, 0.25), "variadic call, mixed integer and double (r0, r1, r2:r3)");
        int n = sn(buf, sizeof buf, "%d|", -42);
        check(n == 4 && strcmp(buf, "-42|") == 0, "variadic libc snprintf through a trampoline");
#endif
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
#elif defined(__i386__)
#define FP_DWARF 5 /* ebp */
#elif defined(__aarch64__)
#define FP_DWARF 29 /* x29 */
#elif defined(__riscv)
#define FP_DWARF 8 /* s0 */
#elif defined(__powerpc64__)
#define FP_DWARF 31 /* r31, gcc's frame pointer */
#elif defined(__s390x__)
#define FP_DWARF 11 /* r11, gcc's frame pointer */
#elif defined(__arm__)
#define FP_DWARF 11 /* r11, the frame pointer of A32 code (Thumb code keeps r7) */
#endif
/* The frame's sp: libgcc's _Unwind_GetCFA, except on 32-bit Arm, whose
 * EHABI unwinder sets that only during a forced unwind (it reads a field
 * of its phase-1 register set, prev_sp): there, the unwound r13. */
#if defined(__ARM_EABI__)
#define FRAME_SP(ctx) _Unwind_GetGR((ctx), 13)
#else
#define FRAME_SP(ctx) _Unwind_GetCFA(ctx)
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
    t->cfa[t->n] = FRAME_SP(ctx);
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

/* The same without a frame pointer (GCC: the harness is built with
 * -fno-omit-frame-pointer), so its CFA is stack-pointer based. */
#if defined(__GNUC__) && !defined(__clang__)
#define FRAMELESS __attribute__((optimize("omit-frame-pointer")))
#else
#define FRAMELESS
#endif
NOINLINE FRAMELESS static long call_frameless(long (*f)(long), long x)
{
    long r = f(x);
    __asm__ volatile("" : "+r"(r)::"memory"); /* no tail call */
    return r;
}

/* i386: a target that pops its argument (stdcall: `ret $4`) and its two
 * callers, for the trampoline's return path that pops what its target
 * popped (src/arch/i686.c); a cdecl target never takes it. */
#if defined(__i386__)
#define CALLEE_POP 1
#define POPS __attribute__((stdcall))
#else
#define CALLEE_POP 0
#define POPS
#endif
typedef long(POPS *pop_fn)(long);
NOINLINE static long call_through_pop(pop_fn f, long x)
{
    long r = f(x);
    __asm__ volatile("" : "+r"(r)::"memory");
    return r;
}
NOINLINE FRAMELESS static long call_frameless_pop(pop_fn f, long x)
{
    long r = f(x);
    __asm__ volatile("" : "+r"(r)::"memory");
    return r;
}

/* The unwind information of one trampoline at `code`, for libgcc: its
 * .eh_frame at `eh`; on 32-bit Arm, whose libgcc reads only EHABI tables,
 * the EHABI entries the emitter derives from the same rows, found by
 * libgcc through the library's __gnu_Unwind_Find_exidx. */
#if defined(__ARM_EABI__)
static struct pt_ehabi_map ehabi_reg[2]; /* by the .eh_frame they stand for */
static const void *ehabi_eh[2];

static void unwind_register(const struct pt_layout *l, uintptr_t code, void *eh)
{
    struct pt_ehabi_region r[PT_EHABI_MAX_REGIONS];
    size_t n;
    const char *why = "?";
    int k = ehabi_eh[0] ? 1 : 0;
    if (pt_ehabi_layout_regions(l, r, PT_EHABI_MAX_REGIONS, &n, &why) < 0 ||
        pt_ehabi_publish(&ehabi_reg[k], r, n, code, 1, 0, l->size, l->arch->big_endian) < 0) {
        printf("# EHABI tables for the trampoline: %s (%s)\n", why, strerror(errno));
        return;
    }
    ehabi_eh[k] = eh;
}

static void unwind_deregister(const void *eh)
{
    for (int k = 0; k < 2; k++)
        if (ehabi_eh[k] == eh) {
            pt_ehabi_unpublish(&ehabi_reg[k]);
            ehabi_eh[k] = NULL;
        }
}
#else
void __register_frame(void *);
void __deregister_frame(void *);
static void unwind_register(const struct pt_layout *l, uintptr_t code, void *eh)
{
    (void)l;
    (void)code;
    __register_frame(eh);
}
static void unwind_deregister(const void *eh) { __deregister_frame((void *)(uintptr_t)eh); }
#endif

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
    const struct pt_layout *l;
    uintptr_t x;
    struct trace tr[3];
    void *ra[3][3];
    long got[3];
} uw;

NOINLINE static void unwind_prepare(int k)
{
    if (k == 2)
        unwind_register(uw.l, uw.x, uw.eh);
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
    uw.l = &l;
    uw.x = x;
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
    unwind_deregister(eh);
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
 * Boundary k (0 <= k < n) is the state just before instruction k: a copy
 * of the trampoline has a trap written over instruction k, and calling it
 * stops there with instructions 0..k-1 executed.  The signal handler
 * unwinds with libgcc's _Unwind_Backtrace into the trampoline at exactly
 * that pc (the row at offset k) and on into the caller.  Boundary n is the
 * call's return point seen from inside the target, where an unwinder looks
 * up the row at return address - 1 (the call instruction's), with the
 * return-address register already overwritten by the call.  N = n + 1.
 *
 * At every boundary the caller's frame as unwound must be the truth: the
 * return address, the CFA and every callee-saved register of the ABI,
 * and the same for every frame below it, down to the same bottom, as in
 * a direct call of the target from the same call site.  The loop that
 * runs the boundaries keeps its state in globals and passes constants, so
 * all these registers hold the same values at that call site every time.
 * Each boundary runs from two callers: one with a frame pointer (its CFA
 * comes from the frame-pointer register the trampoline must restore) and
 * a frameless one (its CFA comes from the stack pointer the trampoline's
 * rules give back: s390x's r15 rule, for one).
 *
 * Save slots are poisoned.  After the target has returned, a register the
 * table saved (SAVED rules) that holds its entry value again has been
 * reloaded, so the stack word it was saved in is dead: the handler writes
 * garbage there before unwinding (the address of a zeroed area, so an
 * unwinder that follows it stops cleanly).  A rule that still says "saved
 * at CFA-16" after the reload then recovers garbage and fails.  "Entry
 * value" is observed at boundary 0, "reloaded" in the interrupted context:
 * neither comes from the table's rules.  The handler runs on an alternate
 * signal stack, so the kernel's signal frame does not land on those
 * words either.
 *
 * How the unwinder reaches the interrupted pc:
 *  - x86-64, aarch64, riscv64, s390x: through the kernel's (qemu's) signal
 *    frame, with libgcc's own signal-frame support.  x86-64 traps with the
 *    one-byte int3 (fits before `ret`; the handler rewinds the reported pc
 *    to the boundary); s390x reports the pc after its 2-byte trap and
 *    libgcc, knowing that for SIGILL, looks up pc - 1, inside the trap.
 *  - ppc64le: libgcc does not recognise qemu-user 7.2's signal trampoline,
 *    so the handler copies the interrupted registers into a save area and
 *    calls the unwinder through capture_call, an assembly frame whose CFI
 *    says "my caller's r0-r31 and LR are in this save area, my return
 *    address is the interrupted pc, and I am a signal frame" (so libgcc
 *    looks up that pc itself, not pc - 1): the same description libgcc
 *    builds for a kernel signal frame, written as DWARF.
 * A trap in compiled code (the control) must unwind the same way first.
 * The poison control at the end: with the table's restore rules removed,
 * the last boundary passed after the target returned must fail (the last
 * one, unless instructions after the final return only run before the
 * target: i686's pc thunk).
 *
 * A boundary inside code the trampoline calls before its target (i686's pc
 * thunk) shows the trampoline twice: the thunk's frame, then the trampoline
 * at the thunk's return address; the frames below the last of them must be
 * the direct call's.  */

/* Callee-saved general registers of each ABI, DWARF numbers. */
#if defined(__x86_64__)
static const unsigned csr[] = {3, 6, 12, 13, 14, 15}; /* rbx rbp r12-r15 (psABI fig. 3.4, 3.36) */
#elif defined(__aarch64__)
static const unsigned csr[] = {19, 20, 21, 22, 23, 24, 25, 26, 27, 28, 29}; /* x19-x29 (AAPCS64 6.1.1) */
#elif defined(__riscv)
static const unsigned csr[] = {8, 9, 18, 19, 20, 21, 22, 23, 24, 25, 26, 27}; /* s0-s11 */
#elif defined(__powerpc64__)
static const unsigned csr[] = {14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
                               25, 26, 27, 28, 29, 30, 31}; /* r14-r31 (ELFv2 2.2.1.1) */
#elif defined(__s390x__)
static const unsigned csr[] = {6, 7, 8, 9, 10, 11, 12, 13}; /* r6-r13 (r14 = RA, r15 = SP) */
#elif defined(__i386__)
static const unsigned csr[] = {3, 5, 6, 7}; /* ebx ebp esi edi (i386 psABI, "Registers") */
#elif defined(__arm__)
static const unsigned csr[] = {4, 5, 6, 7, 8, 9, 10, 11}; /* r4-r11 (AAPCS 6.1.1; d8-d15 are not GRs) */
#else
#error "a new architecture: list its ABI's callee-saved registers (csr), uc_get and UC_PC here"
#endif
#define N_CSR (sizeof csr / sizeof csr[0])

/* The interrupted context's registers by DWARF number, and its pc. */
#if defined(__x86_64__)
#define UC_PC(uc) ((uc)->uc_mcontext.gregs[REG_RIP])
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    static const int greg[16] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
                                 REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
    if (r >= 16)
        return false;
    *v = (uintptr_t)uc->uc_mcontext.gregs[greg[r]];
    return true;
}
#elif defined(__aarch64__)
#define UC_PC(uc) ((uc)->uc_mcontext.pc)
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    if (r > 31)
        return false;
    *v = (uintptr_t)(r == 31 ? uc->uc_mcontext.sp : uc->uc_mcontext.regs[r]);
    return true;
}
#elif defined(__riscv)
#define UC_PC(uc) ((uc)->uc_mcontext.__gregs[0]) /* REG_PC */
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    if (r < 1 || r > 31)
        return false;
    *v = (uintptr_t)uc->uc_mcontext.__gregs[r];
    return true;
}
#elif defined(__powerpc64__)
/* gp_regs indexes: Linux arch/powerpc/include/uapi/asm/ptrace.h */
enum { PPC_PT_NIP = 32, PPC_PT_LNK = 36 };
#define UC_PC(uc) ((uc)->uc_mcontext.gp_regs[PPC_PT_NIP])
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    if (r < 32)
        *v = (uintptr_t)uc->uc_mcontext.gp_regs[r];
    else if (r == 65)
        *v = (uintptr_t)uc->uc_mcontext.gp_regs[PPC_PT_LNK];
    else
        return false;
    return true;
}
#elif defined(__i386__)
#define UC_PC(uc) ((uc)->uc_mcontext.gregs[REG_EIP])
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    static const int greg[8] = {REG_EAX, REG_ECX, REG_EDX, REG_EBX, REG_ESP, REG_EBP, REG_ESI, REG_EDI};
    if (r >= 8)
        return false;
    *v = (uintptr_t)uc->uc_mcontext.gregs[greg[r]];
    return true;
}
#elif defined(__arm__)
#define UC_PC(uc) ((uc)->uc_mcontext.arm_pc)
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    /* struct sigcontext: arm_r0 .. arm_r10, arm_fp, arm_ip, arm_sp, arm_lr, arm_pc in order */
    if (r > 15)
        return false;
    *v = (uintptr_t)(&uc->uc_mcontext.arm_r0)[r];
    return true;
}
#elif defined(__s390x__)
#define UC_PC(uc) ((uc)->uc_mcontext.psw.addr)
static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    if (r > 15)
        return false;
    *v = (uintptr_t)uc->uc_mcontext.gregs[r];
    return true;
}
#endif

/* The boundary trap: the shortest trapping instruction, so it fits over
 * any instruction without touching the next or the data words. */
#if defined(__x86_64__) || defined(__i386__)
static const uint8_t btrap[] = {0xcc}; /* int3: SIGTRAP, pc reported after it */
#define BTRAP_REPORTS_NEXT 1
#else
#define BTRAP_REPORTS_NEXT 0
#endif

/* A trace with the callee-saved registers of every frame. */
struct btrace {
    int n;
    uintptr_t ip[MAX_FRAMES], cfa[MAX_FRAMES], reg[MAX_FRAMES][N_CSR];
    _Unwind_Reason_Code end;
};

static _Unwind_Reason_Code btrace_cb(struct _Unwind_Context *ctx, void *arg)
{
    struct btrace *t = arg;
    if (t->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    t->ip[t->n] = _Unwind_GetIP(ctx);
    t->cfa[t->n] = FRAME_SP(ctx);
    for (size_t r = 0; r < N_CSR; r++)
        t->reg[t->n][r] = _Unwind_GetGR(ctx, (int)csr[r]);
    t->n++;
    return _URC_NO_REASON;
}

/* A save the table makes: register and offset from the CFA. */
struct bsave {
    unsigned reg;
    int off;
};
#define MAX_SAVES 8

/* Run state.  k: -2 direct reference, -1 control (a trap in compiled
 * code), 0..n-1 a trap at boundary k, n from inside the target, n + 1
 * the poison control (boundary n - 1 with the restores removed). */
static struct {
    const struct pt_arch *a;
    struct pt_layout l, stripped_l;
    struct pt_arch stripped;
    struct pt_insn stripped_insns[PT_LAYOUT_MAX_INSNS];
    uint8_t *mem, *eh, *stripped_eh;
    struct bsave save[MAX_SAVES];
    int n_saves;
    long (*fn)(long);
    long result;
    int k, n;
    int via;                     /* 0: call_through, 1: call_frameless */
    uintptr_t pc;                /* the boundary's address in the copy */
    volatile int target_ran, in_handler, nested;
    uintptr_t trap_pc;           /* the pc the trap reported */
    bool have_entry[2];
    uintptr_t entry[2][MAX_SAVES]; /* saved registers' values at boundary 0 */
    char poisoned[160];
    bool after_target[PT_LAYOUT_MAX_INSNS]; /* boundary k was passed after the target ran */
    bool pop;                    /* this run calls the target that pops its argument (CALLEE_POP) */
    struct btrace direct[2], direct_pop[2], trap, target;
    int matched[2];              /* per caller: frame index of the trampoline, or -1 */
    char why[2][160];
    bool control_failed;
    int bad, checked;
} bd;

/* The direct call's walk this run compares with: its caller and convention. */
static const struct btrace *direct_ref(void)
{
    return bd.pop ? &bd.direct_pop[bd.via] : &bd.direct[bd.via];
}

static uintptr_t poison_area[512]; /* zeros: a followed poisoned pointer leads nowhere */
#define POISON ((uintptr_t)&poison_area[256])

static sigjmp_buf trap_jmp;

/* Writes garbage over the save slots of reloaded registers. */
static void poison_slots(const ucontext_t *uc)
{
    bd.poisoned[0] = 0;
    if (!bd.have_entry[bd.via] || !bd.target_ran)
        return;
    uintptr_t cfa = direct_ref()->cfa[1]; /* the target's CFA in a direct call = the trampoline's */
    for (int i = 0; i < bd.n_saves; i++) {
        uintptr_t live;
        if (!uc_get(uc, bd.save[i].reg, &live) || live != bd.entry[bd.via][i])
            continue;
        memcpy((void *)(cfa + (intptr_t)bd.save[i].off), &(uintptr_t){POISON}, sizeof(uintptr_t));
        size_t len = strlen(bd.poisoned);
        snprintf(bd.poisoned + len, sizeof bd.poisoned - len, " r%u@CFA%+d", bd.save[i].reg, bd.save[i].off);
    }
}

#if defined(__powerpc64__)
/* capture_call(regs, fn): calls fn() from a frame whose CFI describes its
 * caller as the interrupted context in regs (r0-r31 at 8*n, the pc at
 * 256, LR at 264).  The return address gets column 67 (in GCC's rs6000
 * numbering the arg pointer, a column libgcc's unwinder sizes but no
 * code saves; libgcc's own ppc signal-frame support uses it the same
 * way), so LR (65) can carry the interrupted LR.  .cfi_signal_frame: the
 * caller's pc is the interrupted instruction itself, not a return
 * address. */
struct capture_regs {
    uint64_t gpr[32], pc, lr;
};
void capture_call(struct capture_regs *regs, void (*fn)(void));
__asm__(".text\n"
        ".globl capture_call\n"
        ".type capture_call,@function\n"
        "capture_call:\n"
        " .cfi_startproc\n"
        " .cfi_signal_frame\n"
        " .cfi_return_column 67\n"
        " mflr 0\n"
        " std 0,16(1)\n"
        " std 31,-8(1)\n"
        " stdu 1,-48(1)\n"
        " std 2,24(1)\n"
        " mr 31,3\n"
        " .cfi_def_cfa 31,0\n"
        " .irp r,0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
        " .cfi_offset \\r,\\r*8\n"
        " .endr\n"
        " .cfi_offset 67,256\n"
        " .cfi_offset 65,264\n"
        " mr 12,4\n"
        " mtctr 12\n"
        " bctrl\n"
        " ld 2,24(1)\n"
        " addi 1,1,48\n"
        " ld 0,16(1)\n"
        " ld 31,-8(1)\n"
        " mtlr 0\n"
        " blr\n"
        " .cfi_endproc\n"
        ".size capture_call,.-capture_call\n");

static struct capture_regs capture;

static void capture_unwind(void)
{
    bd.trap.end = _Unwind_Backtrace(btrace_cb, &bd.trap);
}

static void unwind_interrupted(const ucontext_t *uc)
{
    for (unsigned r = 0; r < 32; r++)
        capture.gpr[r] = uc->uc_mcontext.gp_regs[r];
    capture.pc = uc->uc_mcontext.gp_regs[PPC_PT_NIP];
    capture.lr = uc->uc_mcontext.gp_regs[PPC_PT_LNK];
    capture_call(&capture, capture_unwind);
}
#else
static void unwind_interrupted(const ucontext_t *uc)
{
    (void)uc; /* libgcc reads it from the signal frame */
    bd.trap.end = _Unwind_Backtrace(btrace_cb, &bd.trap);
}
#endif

static void on_trap(int sig, siginfo_t *si, void *ucv)
{
    (void)si;
    if (bd.in_handler) { /* the unwinder faulted: report, do not crash */
        bd.nested = sig;
        siglongjmp(trap_jmp, 2);
    }
    bd.in_handler = 1;
    ucontext_t *uc = ucv;
    bd.trap_pc = (uintptr_t)UC_PC(uc);
#if BTRAP_REPORTS_NEXT
    if (sig == SIGTRAP && bd.k >= 0 && bd.trap_pc == bd.pc + sizeof btrap)
        UC_PC(uc) = (greg_t)bd.pc; /* the state is that of boundary k */
#endif
    if (bd.k == 0) {
        bool ok = true;
        for (int i = 0; i < bd.n_saves; i++)
            ok = ok && uc_get(uc, bd.save[i].reg, &bd.entry[bd.via][i]);
        bd.have_entry[bd.via] = ok;
    }
    if (bd.k >= 0 && bd.k < bd.n)
        bd.after_target[bd.k] = bd.target_ran;
    if (bd.k >= 1)
        poison_slots(uc);
    memset(&bd.trap, 0, sizeof bd.trap);
    unwind_interrupted(uc);
    bd.in_handler = 0;
    siglongjmp(trap_jmp, 1);
}

/* The control: a trap in compiled code.  An asm trap, not
 * __builtin_trap(): for a function the compiler knows never returns, it
 * may skip saving callee-saved registers, and the unwound values would
 * be wrong for a reason that has nothing to do with the trampoline. */
#if defined(__x86_64__) || defined(__i386__)
#define TRAP_INSN "ud2"
#elif defined(__aarch64__)
#define TRAP_INSN "udf #0"
#elif defined(__riscv)
#define TRAP_INSN "unimp"
#elif defined(__powerpc64__)
#define TRAP_INSN "trap"
#elif defined(__s390x__)
#define TRAP_INSN ".short 0" /* opcode 00: operation exception */
#elif defined(__arm__)
#define TRAP_INSN "udf #0"
#endif
NOINLINE static long trapping(long x)
{
    __asm__ volatile(TRAP_INSN : "+r"(x)::"memory");
    return x + 1;
}

/* The target of the boundary runs: records the walk from inside it (in
 * its own frame: the frame below it must be its caller's). */
static inline __attribute__((always_inline)) long target_body(long x)
{
    bd.target_ran = 1;
    memset(&bd.target, 0, sizeof bd.target);
    bd.target.end = _Unwind_Backtrace(btrace_cb, &bd.target);
    __asm__ volatile("" ::: "memory");
    return x * 10 + 1;
}
NOINLINE static long boundary_target(long x)
{
    return target_body(x);
}
NOINLINE POPS static long boundary_target_pop(long x)
{
    return target_body(x);
}

/* The frames of `t` from the one whose ip is in [lo, hi] on must be those
 * of the direct call from its second frame on: same ip, CFA and
 * callee-saved registers, same bottom.  Returns the index of the frame
 * in [lo, hi], or -1 with the first difference in `why`. */
static int same_below(const struct btrace *t, uintptr_t lo, uintptr_t hi, char *why, size_t len)
{
    const struct btrace *d = direct_ref();
    for (int j = 0; j < t->n; j++) {
        if (t->ip[j] < lo || t->ip[j] > hi)
            continue;
        /* a pc thunk's frame, then the trampoline at its return address */
        while (j + 1 < t->n && t->ip[j + 1] > (uintptr_t)bd.mem && t->ip[j + 1] <= (uintptr_t)bd.mem + bd.l.code_len)
            j++;
        for (int i = 1; i < d->n && j + i < t->n; i++) {
            char name[32] = "";
            uintptr_t got = 0, want = 0;
            if (t->ip[j + i] != d->ip[i]) {
                snprintf(name, sizeof name, "return address");
                got = t->ip[j + i], want = d->ip[i];
            } else if (t->cfa[j + i] != d->cfa[i]) {
                snprintf(name, sizeof name, "CFA");
                got = t->cfa[j + i], want = d->cfa[i];
            } else {
                for (size_t r = 0; r < N_CSR && !name[0]; r++)
                    if (t->reg[j + i][r] != d->reg[i][r]) {
                        snprintf(name, sizeof name, "DWARF register %u", csr[r]);
                        got = t->reg[j + i][r], want = d->reg[i][r];
                    }
            }
            if (name[0]) {
                snprintf(why, len, "frame %d below the trampoline: %s %#lx, in the direct call %#lx%s", i, name,
                         (unsigned long)got, (unsigned long)want, got == POISON ? " (the poison)" : "");
                return -1;
            }
        }
        if (t->n - j != d->n) {
            snprintf(why, len, "%d frames below the trampoline, the direct call has %d", t->n - j - 1, d->n - 1);
            return -1;
        }
        return j;
    }
    snprintf(why, len, "no frame at the trampoline pc (%d frames, end %d)", t->n, (int)t->end);
    return -1;
}

static void print_btrace(const char *what, const struct btrace *t)
{
    printf("# %s (end %d):", what, (int)t->end);
    for (int i = 0; i < t->n; i++)
        printf(" %#lx/cfa %#lx", (unsigned long)t->ip[i], (unsigned long)t->cfa[i]);
    printf("\n");
}

/* The poison control's boundary: the last one passed after the target. */
static int poison_at(void)
{
    for (int k = bd.n - 1; k > 0; k--)
        if (bd.after_target[k])
            return k;
    return bd.n - 1;
}

/* Rewrites the copy for run k. */
NOINLINE static void boundary_prepare(void)
{
    int k = bd.k, n = bd.n;
    if (k == -2) {
        bd.fn = boundary_target;
        return;
    }
    if (k == -1) {
        bd.fn = trapping;
        return;
    }
    int at = k == n + 1 ? poison_at() : k;
    pt_layout_write(&bd.l, bd.mem, (uint64_t)(uintptr_t)boundary_target, 0x7470);
    bd.pc = (uintptr_t)bd.mem + bd.l.insn_off[at < n ? at : 0];
    if (k != n) {
#if BTRAP_REPORTS_NEXT
        memcpy(bd.mem + bd.l.insn_off[at], btrap, sizeof btrap);
#else
        memcpy(bd.mem + bd.l.insn_off[at], bd.a->trap, bd.a->trap_len);
#endif
    }
    if (k == n + 1) { /* the poison control: the FDE without restore rules */
        unwind_deregister(bd.eh);
        unwind_register(&bd.stripped_l, (uintptr_t)bd.mem, bd.stripped_eh);
    }
    __builtin___clear_cache((char *)bd.mem, (char *)bd.mem + bd.l.size);
    bd.fn = (long (*)(long))(void *)bd.mem;
}

/* Calls bd.fn from one of the two callers; 1 when it trapped.  Each
 * caller has one call site here, shared by all runs. */
NOINLINE static int boundary_run(void)
{
    bd.target_ran = 0;
    bd.nested = 0;
    bd.poisoned[0] = 0;
    if (sigsetjmp(trap_jmp, 1))
        return 1;
    if (bd.pop) {
        pop_fn f = bd.k == -2 ? boundary_target_pop : (pop_fn)(void *)bd.fn;
        bd.result = bd.via ? call_frameless_pop(f, 7) : call_through_pop(f, 7);
    } else if (bd.via) {
        bd.result = call_frameless(bd.fn, 7);
    } else {
        bd.result = call_through(bd.fn, 7);
    }
    return 0;
}

static void boundary_result(int trapped);

/* Points the copy's target word at the target of this run's convention. */
static void boundary_target_word(void)
{
    uintptr_t t = bd.pop ? (uintptr_t)boundary_target_pop : (uintptr_t)boundary_target;
    memcpy(bd.mem + bd.l.word_off[PT_WORD_TARGET], &t, sizeof t); /* the host's own table: native words */
}

/* One run through caller bd.via; a boundary the cdecl target never passes
 * (a trap there is not reached) runs again with the target that pops its
 * argument, where the ABI has such (CALLEE_POP), as does the direct
 * reference, so each has the direct call of its own convention. */
NOINLINE static void boundary_via(void)
{
    bd.pop = false;
    int trapped = boundary_run();
    bd.in_handler = 0;
    if (CALLEE_POP && (bd.k == -2 || (bd.k >= 0 && bd.k != bd.n && !trapped))) {
        if (bd.k == -2)
            boundary_result(trapped);
        bd.pop = true;
        if (bd.k >= 0)
            boundary_target_word();
        trapped = boundary_run();
        bd.in_handler = 0;
        if (bd.k >= 0) {
            bd.pop = false;
            boundary_target_word();
            bd.pop = true;
        }
    }
    boundary_result(trapped);
}

/* The outcome of one run, through caller bd.via. */
NOINLINE static void boundary_result(int trapped)
{
    int k = bd.k, n = bd.n, v = bd.via;
    char *why = bd.why[v];
    size_t len = sizeof bd.why[v];
    why[0] = 0;
    bd.matched[v] = -1;
    if (k == -2) {
        *(bd.pop ? &bd.direct_pop[v] : &bd.direct[v]) = bd.target;
        return;
    }
    if (k == -1) {
        if (trapped && !bd.nested)
            bd.matched[v] = same_below(&bd.trap, (uintptr_t)trapping, (uintptr_t)trapping + 256, why, len);
        else
            snprintf(why, len, "%s", trapped ? "the unwinder faulted" : "did not trap");
        return;
    }
    if (k == n) { /* the call's return point: from inside the target */
        uintptr_t x = (uintptr_t)bd.mem;
        if (trapped || bd.result != 71)
            snprintf(why, len, "the trampoline copy %s", trapped ? "trapped" : "returned a wrong result");
        else
            bd.matched[v] = same_below(&bd.target, x + 1, x + bd.l.code_len, why, len);
        return;
    }
    /* the trap's pc: the boundary, or just after the trap (s390x: libgcc
     * then looks up pc - 1, inside the trap) */
    bool at_pc = bd.trap_pc == bd.pc || bd.trap_pc == bd.pc + (BTRAP_REPORTS_NEXT ? 1 : bd.a->trap_len);
    if (!trapped)
        snprintf(why, len, "did not trap");
    else if (bd.nested)
        snprintf(why, len, "the unwinder faulted (signal %d)", bd.nested);
    else if (!at_pc)
        snprintf(why, len, "trapped at %#lx, not at the boundary", (unsigned long)bd.trap_pc);
    else
        bd.matched[v] = same_below(&bd.trap, bd.pc, bd.pc + bd.a->trap_len, why, len);
    if (bd.matched[v] < 0 && trapped && !bd.nested && k != n + 1) {
        print_btrace("direct", direct_ref());
        print_btrace("from the trap", &bd.trap);
    }
}

static const char *const via_name[2] = {"frame-pointer caller", "frameless caller"};

NOINLINE static void boundary_record(void)
{
    int k = bd.k, n = bd.n;
    char what[400];
    bool both = bd.matched[0] >= 0 && bd.matched[1] >= 0;
    if (k == n + 1) {
        unwind_deregister(bd.stripped_eh);
        unwind_register(&bd.l, (uintptr_t)bd.mem, bd.eh);
    }
    if (k == -2) {
        for (int v = 0; v < 2; v++)
            if (bd.direct[v].n < 3)
                printf("# the direct call's walk (%s) has %d frames\n", via_name[v], bd.direct[v].n);
        return;
    }
    if (k == -1) {
        bd.control_failed = !both;
        for (int v = 0; v < 2; v++)
            if (bd.matched[v] < 0)
                printf("# control (%s): unwinding from a trap in compiled code does not reach the caller: %s\n",
                       via_name[v], bd.why[v]);
        return;
    }
    int at = k == n + 1 ? poison_at() : k;
    if (k == n + 1) {
        section = SEC_POISON;
        snprintf(what, sizeof what,
                 "poison control: with the table's restore rules removed, boundary %d (before `%s`) must NOT "
                 "recover the caller (poisoned:%s)",
                 at, bd.a->insns[at].text, bd.poisoned[0] ? bd.poisoned : " nothing");
        check(bd.matched[0] < 0 && bd.matched[1] < 0 && bd.poisoned[0], what);
        for (int v = 0; v < 2; v++)
            if (bd.matched[v] >= 0)
                printf("#   through the %s the unwind still matched: poisoning does not bite\n", via_name[v]);
        return;
    }
    if (k == n)
        snprintf(what, sizeof what,
                 "boundary %d (the call's return point, from inside the target): the caller's return address, CFA "
                 "and %zu callee-saved registers, and every frame below, as in a direct call (both callers)",
                 k, N_CSR);
    else
        snprintf(what, sizeof what,
                 "boundary %d (+%zu, before `%s`): the caller's return address, CFA and %zu callee-saved registers, "
                 "and every frame below, as in a direct call (both callers)%s%s",
                 at, bd.l.insn_off[at], bd.a->insns[at].text, N_CSR, bd.poisoned[0] ? "; poisoned" : "",
                 bd.poisoned);
    check(both && !bd.control_failed, what);
    bd.checked++;
    if (!both || bd.control_failed) {
        bd.bad++;
        if (bd.control_failed)
            printf("#   the control failed: traps in compiled code do not unwind here\n");
        for (int v = 0; v < 2; v++)
            if (bd.matched[v] < 0)
                printf("#   %s: %s\n", via_name[v], bd.why[v]);
    }
}

/* The table's saves (SAVED rules). */
static void collect_saves(const struct pt_arch *a)
{
    bd.n_saves = 0;
    for (size_t i = 0; i < a->n_insns; i++)
        for (int c = 0; c < PT_INSN_MAX_CFI; c++) {
            const struct pt_cfi *r = &a->insns[i].cfi[c];
            if (r->op == PT_CFI_OFFSET && bd.n_saves < MAX_SAVES)
                bd.save[bd.n_saves++] = (struct bsave){r->reg, r->offset};
        }
}

/* .eh_frame (CIE + FDE + terminator) for the layout at `eh`, describing
 * code at bd.mem. */
static int emit_eh(const struct pt_layout *l, uint8_t *eh, size_t cap)
{
    struct pt_buf prog, b;
    pt_buf_init(&prog, l->arch->big_endian);
    pt_buf_init_fixed(&b, eh, cap, l->arch->big_endian);
    int r = pt_cfi_program(&prog, l);
    size_t cie = pt_eh_cie(&b, l->arch);
    pt_eh_fde(&b, cie, -(int64_t)(eh - bd.mem), l->size, prog.data, prog.len);
    pt_eh_terminator(&b);
    pt_buf_free(&prog);
    return r < 0 || prog.failed || b.failed ? -1 : 0;
}

/* The same table with every RESTORED rule dropped: the poison control. */
static int build_stripped(void)
{
    const struct pt_arch *a = bd.a;
    if (a->n_insns > PT_LAYOUT_MAX_INSNS)
        return -1;
    bd.stripped = *a;
    for (size_t i = 0; i < a->n_insns; i++) {
        bd.stripped_insns[i] = a->insns[i];
        struct pt_cfi *c = bd.stripped_insns[i].cfi;
        int w = 0;
        for (int r = 0; r < PT_INSN_MAX_CFI; r++)
            if (c[r].op != PT_CFI_RESTORE)
                c[w++] = c[r];
        for (; w < PT_INSN_MAX_CFI; w++)
            c[w] = (struct pt_cfi){0};
    }
    bd.stripped.insns = bd.stripped_insns;
    if (pt_layout_build(&bd.stripped_l, &bd.stripped, NULL) < 0)
        return -1;
    return emit_eh(&bd.stripped_l, bd.stripped_eh, 2048);
}

NOINLINE static void test_boundaries(void)
{
    memset(&bd, 0, sizeof bd);
    bd.a = pt_arch_host();
    if (!bd.a || pt_layout_build(&bd.l, bd.a, NULL) < 0) {
        check(false, "host table lays out");
        return;
    }
    bd.n = (int)bd.a->n_insns;
    collect_saves(bd.a);
    /* private RWX code (no arena), rewritten for every run; its .eh_frame
     * 4 KiB further on, the stripped one 2 KiB after that */
    size_t len = 8192;
    bd.mem = mmap(NULL, len, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (bd.mem == MAP_FAILED) {
        check(false, "map RWX memory for patched trampolines");
        return;
    }
    bd.eh = bd.mem + 4096;
    bd.stripped_eh = bd.mem + 6144;
    if (emit_eh(&bd.l, bd.eh, 2048) < 0 || build_stripped() < 0) {
        check(false, "emit CIE + FDE for the patched trampoline (and its stripped twin)");
        return;
    }

    /* the handler runs on its own stack: the kernel's signal frame must
     * not land on the save slots below the interrupted sp */
    stack_t ss = {.ss_size = 256 * 1024}, old_ss;
    ss.ss_sp = mmap(NULL, ss.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (ss.ss_sp == MAP_FAILED || sigaltstack(&ss, &old_ss) != 0) {
        check(false, "alternate signal stack");
        return;
    }
    struct sigaction sa, old[5];
    const int sigs[5] = {SIGILL, SIGTRAP, SIGSEGV, SIGBUS, SIGFPE};
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_trap;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    for (int s = 0; s < 5; s++)
        sigaction(sigs[s], &sa, &old[s]);
    unwind_register(&bd.l, (uintptr_t)bd.mem, bd.eh);

    /* one loop body for every run, its state in bd (see above) */
    for (bd.k = -2; bd.k <= bd.n + 1; bd.k++) {
        boundary_prepare();
        for (bd.via = 0; bd.via < 2; bd.via++)
            boundary_via();
        boundary_record();
    }
    unwind_deregister(bd.eh);
    for (int s = 0; s < 5; s++)
        sigaction(sigs[s], &old[s], NULL);
    sigaltstack(&old_ss, NULL);
    munmap(ss.ss_sp, ss.ss_size);
    munmap(bd.mem, len);
    printf("# %d of %d boundaries (%zu instructions + the call's return point) unwound to the caller's true state"
           " through both callers (%d bad)\n",
           bd.checked - bd.bad, bd.n + 1, bd.a->n_insns, bd.bad);
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
    bd.k = -1; /* a plain run: nothing to poison */
    bd.via = 0;
    bd.fn = (long (*)(long))(void *)mem;
    int trapped_good = boundary_run();
    long good = bd.result;
    bd.fn = (long (*)(long))(void *)(mem + 256);
    int trapped_bad = boundary_run();
    sigaction(SIGILL, &old, NULL);
    munmap(mem, len);
    check(!trapped_good && good == 72, "BTI-guarded page: an indirect call lands on `bti c` and runs");
    check(trapped_bad, "BTI-guarded page: the same code without `bti c` traps (control: the page is guarded)");
}
#endif

/* "proven" when every check of the sections passed (and there were some). */
static bool sections_pass(const int *secs, int n, char *detail, size_t len)
{
    bool ok = true;
    detail[0] = 0;
    for (int i = 0; i < n; i++) {
        int s = secs[i];
        size_t at = strlen(detail);
        snprintf(detail + at, len - at, "%s%s %d/%d", i ? ", " : "", sec_name[s], sec_pass[s], sec_total[s]);
        ok = ok && sec_total[s] > 0 && sec_pass[s] == sec_total[s];
    }
    return ok;
}

/* One verdict line per proof; run_foreign.sh turns each into
 * "PROOF: arch.<arch>.<id> ...". */
static void print_proofs(const struct pt_arch *a)
{
    char detail[200];
    static const int executed[] = {SEC_CONTRACT, SEC_LIFECYCLE};
#ifdef FP_WALK
    static const int unwound[] = {SEC_UNWIND, SEC_FP};
#else
    static const int unwound[] = {SEC_UNWIND};
#endif
    static const int boundary[] = {SEC_BOUNDARY, SEC_POISON};
    bool ok = sections_pass(executed, 2, detail, sizeof detail);
    printf("proof: executed %s %s\n", ok ? "proven" : "failed", detail);
    ok = sections_pass(unwound, (int)(sizeof unwound / sizeof unwound[0]), detail, sizeof detail);
    printf("proof: unwound %s %s (libgcc _Unwind_Backtrace through the trampoline)\n", ok ? "proven" : "failed", detail);
    ok = sections_pass(boundary, 2, detail, sizeof detail);
    int want = a ? (int)a->n_insns + 1 : 0;
    if (sec_total[SEC_BOUNDARY] != want) {
        ok = false;
        size_t at = strlen(detail);
        snprintf(detail + at, sizeof detail - at, " (expected %d boundaries: %d instructions + the return point)", want,
                 want - 1);
    }
    printf("proof: every-boundary %s %s (%d instructions + the call's return point; caller's RA, CFA, callee-saved "
           "registers; reloaded save slots poisoned)\n",
           ok ? "proven" : "failed", detail, want - 1);
}

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
    printf("\n");
    print_proofs(a);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
