/* SPDX-License-Identifier: MIT */
/* A frameless function on every architecture, published with its rows
 * (perftramp_publish) and unwound by libgcc: tests/arch/run_foreign.sh
 * builds this statically per architecture and runs it natively or under
 * qemu-<arch>-static, next to foreign_contract.c.
 *
 * Each function is hand-written machine code of the shape
 *     sub sp; call the first argument through a register; add sp; ret
 * in that ISA's terms (saving the return-address register where a call
 * clobbers it), with the call-frame rows after each instruction that
 * changes them.  No frame pointer, nothing the unwinder could guess: only
 * the published rows get _Unwind_Backtrace from the callee (a C function)
 * through the code to main.  Three runs per architecture:
 *   unpublished      must not reach main (no FDE for the code)
 *   published        must reach main
 *   published, no rows   must not reach main (the rows are what works)
 * Output: "proof: frameless proven|failed <detail>" and "N passed, N failed".
 *
 * Register numbers: each ABI's DWARF register mapping
 *   x86-64   rsp 7, return address 16   (System V AMD64 psABI, 3.6.2
 *            "DWARF Register Number Mapping")
 *   aarch64  sp 31, x30 (LR) 30         (DWARF for the Arm 64-bit
 *            Architecture (AADWARF64), 4.1 "DWARF register names")
 *   riscv64  x1 (ra) 1, x2 (sp) 2       (RISC-V ELF psABI, "DWARF Register
 *            Numbers")
 *   ppc64le  r1 1, LR 65                (64-bit ELF V2 ABI, 2.4 "DWARF
 *            Definition": "Table 2.22 Mappings of Common Registers")
 *   s390x    r14 14, r15 15             (s390x ELF ABI Supplement, 1.6
 *            "DWARF Definition", Table 1.18)
 *   i686     esp 4, return address 8    (i386 psABI, "DWARF Register Number
 *            Mapping")
 *   arm      r13 (sp) 13, r14 (lr) 14   (DWARF for the Arm Architecture
 *            (AADWARF32), 3.1 "DWARF register names")
 * and the entry rules the architecture tables (src/arch/) give every CIE:
 * CFA = sp + 0 (s390x: r15 + 160, the register save area the caller
 * allocates; x86: sp + 8 or 4), return address in the ABI's register
 * (x86-64: at CFA-8, i686: at CFA-4). */
#include <perftramp.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unwind.h>

#define ROW(off, o, r, v) {.offset = (off), .op = PERFTRAMP_CFI_##o, .reg = (r), .value = (v)}

#if defined(__x86_64__)
#define ARCH "x86_64"
/* sub $8,%rsp; call *%rdi; add $8,%rsp; ret
 * (Intel SDM: 48 83 /5 ib, FF /2, 48 83 /0 ib, C3) */
static const uint8_t code_bytes[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3};
static const struct perftramp_cfi rows[] = {
    ROW(4, DEF_CFA_OFFSET, 0, 16),
    ROW(10, DEF_CFA_OFFSET, 0, 8),
};
#elif defined(__i386__)
#define ARCH "i686"
/* sub $12,%esp; call *16(%esp) (the argument, cdecl); add $12,%esp; ret
 * (Intel SDM: 83 /5 ib, FF /2 with ModRM 0x54 SIB 0x24 disp8, 83 /0 ib,
 * C3); esp stays 16-aligned at the call */
static const uint8_t code_bytes[] = {0x83, 0xec, 0x0c, 0xff, 0x54, 0x24, 0x10, 0x83, 0xc4, 0x0c, 0xc3};
static const struct perftramp_cfi rows[] = {
    ROW(3, DEF_CFA_OFFSET, 0, 16),
    ROW(10, DEF_CFA_OFFSET, 0, 4),
};
#elif defined(__aarch64__)
#define ARCH "aarch64"
/* Arm ARM (DDI 0487) A64 encodings, little-endian words:
 *   0 d10043ff  sub sp, sp, #16        (SUB immediate, 64-bit)
 *   4 f90007fe  str x30, [sp, #8]      (STR immediate, unsigned offset, imm12 = 1)
 *   8 d63f0000  blr x0
 *   c f94007fe  ldr x30, [sp, #8]
 *  10 910043ff  add sp, sp, #16
 *  14 d65f03c0  ret */
static const uint32_t code_words[] = {0xd10043ff, 0xf90007fe, 0xd63f0000, 0xf94007fe, 0x910043ff, 0xd65f03c0};
static const struct perftramp_cfi rows[] = {
    ROW(4, DEF_CFA_OFFSET, 0, 16),
    ROW(8, OFFSET, 30, -8), /* x30 at CFA-8 */
    ROW(16, RESTORE, 30, 0),
    ROW(20, DEF_CFA_OFFSET, 0, 0),
};
#elif defined(__riscv) && __riscv_xlen == 64
#define ARCH "riscv64"
/* RISC-V unprivileged ISA, RV64I base encodings (no RVC), LE words:
 *   0 ff010113  addi sp, sp, -16
 *   4 00113423  sd ra, 8(sp)
 *   8 000500e7  jalr ra, 0(a0)
 *   c 00813083  ld ra, 8(sp)
 *  10 01010113  addi sp, sp, 16
 *  14 00008067  jalr x0, 0(ra)   (ret) */
static const uint32_t code_words[] = {0xff010113, 0x00113423, 0x000500e7, 0x00813083, 0x01010113, 0x00008067};
static const struct perftramp_cfi rows[] = {
    ROW(4, DEF_CFA_OFFSET, 0, 16),
    ROW(8, OFFSET, 1, -8), /* ra at CFA-8 */
    ROW(16, RESTORE, 1, 0),
    ROW(20, DEF_CFA_OFFSET, 0, 0),
};
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__)
#define ARCH "ppc64le"
/* Power ISA v3.0 encodings, LE words.  ELFv2: the callee gets its own
 * address in r12 (global entry computes the TOC from it); the LR save
 * doubleword is at 16 in the caller's frame; 32 bytes is the minimum
 * frame (back chain, CR, LR, TOC save).
 *   0 7c0802a6  mflr r0
 *   4 f8010010  std r0, 16(r1)
 *   8 f821ffe1  stdu r1, -32(r1)
 *   c 7c6c1b78  mr r12, r3
 *  10 7d8903a6  mtctr r12
 *  14 4e800421  bctrl
 *  18 38210020  addi r1, r1, 32
 *  1c e8010010  ld r0, 16(r1)
 *  20 7c0803a6  mtlr r0
 *  24 4e800020  blr */
static const uint32_t code_words[] = {0x7c0802a6, 0xf8010010, 0xf821ffe1, 0x7c6c1b78, 0x7d8903a6,
                                      0x4e800421, 0x38210020, 0xe8010010, 0x7c0803a6, 0x4e800020};
static const struct perftramp_cfi rows[] = {
    ROW(8, OFFSET, 65, 16), /* LR at CFA+16 (the caller's LR save doubleword) */
    ROW(12, DEF_CFA_OFFSET, 0, 32),
    ROW(28, DEF_CFA_OFFSET, 0, 0),
    ROW(36, RESTORE, 65, 0),
};
#elif defined(__s390x__)
#define ARCH "s390x"
/* z/Architecture Principles of Operation encodings (big-endian bytes):
 *   0 e3e0f0700024  stg %r14, 112(%r15)   (r14's slot in the caller's save area)
 *   6 a7fbff60      aghi %r15, -160
 *   a 0de2          basr %r14, %r2
 *   c a7fb00a0      aghi %r15, 160
 *  10 e3e0f0700004  lg %r14, 112(%r15)
 *  16 07fe          br %r14 */
static const uint8_t code_bytes[] = {0xe3, 0xe0, 0xf0, 0x70, 0x00, 0x24, 0xa7, 0xfb, 0xff, 0x60, 0x0d, 0xe2,
                                     0xa7, 0xfb, 0x00, 0xa0, 0xe3, 0xe0, 0xf0, 0x70, 0x00, 0x04, 0x07, 0xfe};
static const struct perftramp_cfi rows[] = {
    ROW(6, OFFSET, 14, -48), /* r14 at 112(%r15) = CFA-160+112 */
    ROW(10, DEF_CFA_OFFSET, 0, 320),
    ROW(16, DEF_CFA_OFFSET, 0, 160),
    ROW(22, RESTORE, 14, 0),
};
#elif defined(__arm__)
#define ARCH "arm"
/* Arm ARM (DDI 0406C) A32 encodings, little-endian words; sp stays
 * 8-aligned at the call (AAPCS 6.2.1.2):
 *   0 e52de004  push {lr}          (STR immediate, pre-indexed, -4)
 *   4 e24dd004  sub sp, sp, #4
 *   8 e12fff30  blx r0
 *   c e28dd004  add sp, sp, #4
 *  10 e49de004  pop {lr}           (LDR immediate, post-indexed, +4)
 *  14 e12fff1e  bx lr */
static const uint32_t code_words[] = {0xe52de004, 0xe24dd004, 0xe12fff30, 0xe28dd004, 0xe49de004, 0xe12fff1e};
static const struct perftramp_cfi rows[] = {
    ROW(4, DEF_CFA_OFFSET, 0, 4),
    ROW(4, OFFSET, 14, -4), /* lr at CFA-4 */
    ROW(8, DEF_CFA_OFFSET, 0, 8),
    ROW(16, DEF_CFA_OFFSET, 0, 4),
    ROW(20, RESTORE, 14, 0),
    ROW(20, DEF_CFA_OFFSET, 0, 0),
};
#else
#error "no frameless function for this architecture"
#endif


struct frame {
    uintptr_t ip, start;
};
static struct {
    struct frame f[64];
    int n;
} trace;

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    (void)arg;
    if (trace.n == 64)
        return _URC_END_OF_STACK;
    trace.f[trace.n].ip = (uintptr_t)_Unwind_GetIP(ctx);
    trace.f[trace.n].start = (uintptr_t)_Unwind_GetRegionStart(ctx);
    trace.n++;
    return _URC_NO_REASON;
}

static void __attribute__((noinline)) callee(void)
{
    trace.n = 0;
    _Unwind_Backtrace(collect, NULL);
    __asm__ volatile("" ::: "memory");
}

int main(void);

/* Whether the trace passes through [code, code+size) and then a frame of main. */
static bool reaches_main(const uint8_t *code, size_t size, int *depth)
{
    bool through = false;
    *depth = trace.n;
    for (int i = 0; i < trace.n; i++) {
        if (trace.f[i].ip > (uintptr_t)code && trace.f[i].ip <= (uintptr_t)code + size)
            through = true;
        else if (through && trace.f[i].start == (uintptr_t)main)
            return true;
    }
    return false;
}

static void __attribute__((noinline)) run(const uint8_t *code)
{
    ((void (*)(void (*)(void)))(uintptr_t)code)(callee);
    __asm__ volatile("" ::: "memory");
}

static int passed, failed;
static void check(bool ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok" : "FAIL", what);
    fflush(stdout);
    ok ? passed++ : failed++;
}

int main(void)
{
#if defined(__x86_64__) || defined(__i386__) || defined(__s390x__)
    const void *src = code_bytes;
    size_t size = sizeof code_bytes;
#else
    const void *src = code_words;
    size_t size = sizeof code_words;
#endif
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED) {
        printf("FAIL: mmap: %s\n0 passed, 1 failed\n", strerror(errno));
        return 1;
    }
    memcpy(code, src, size);
    __builtin___clear_cache((char *)code, (char *)code + size);
    struct perftramp_options o = {.outputs = PERFTRAMP_UNWIND};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        printf("FAIL: perftramp_open: %s\n0 passed, 1 failed\n", strerror(errno));
        return 1;
    }
    int d_none = 0, d_rows = 0, d_bare = 0;
    run(code);
    check(!reaches_main(code, size, &d_none), ARCH ": unpublished frameless code: the walk stops there");

    struct perftramp_code c = {.addr = code, .size = size, .name = "frameless", .cfi = rows,
                               .n_cfi = sizeof rows / sizeof rows[0]};
    check(perftramp_publish(pt, &c) == 0, ARCH ": perftramp_publish with the rows");
    run(code);
    bool with = reaches_main(code, size, &d_rows);
    check(with, ARCH ": published: _Unwind_Backtrace from the callee reaches main through the rows");
    check(perftramp_unpublish(pt, code) == 0, ARCH ": unpublish");

#if defined(__x86_64__) || defined(__i386__)
    /* Without rows the return address comes from the uninitialised slot
     * `sub` made; libgcc's x86 Linux fallback (for a pc without an
     * FDE) then reads the instruction bytes at that garbage address to
     * look for a sigreturn and faults.  tests/api/check_dynamic proves x86-64. */
    printf("skip: " ARCH ": published without rows (libgcc's x86-64 fallback reads code at the garbage return address)\n");
#else
    c.cfi = NULL;
    c.n_cfi = 0;
    check(perftramp_publish(pt, &c) == 0, ARCH ": perftramp_publish without rows");
    run(code);
    check(!reaches_main(code, size, &d_bare), ARCH ": published without rows: the walk does not reach main");
#endif
    perftramp_close(pt);
    munmap(code, 4096);
    printf("proof: frameless %s %zu bytes, %zu rows: main reached with the rows (%d frames); not without "
           "an FDE (%d frames) nor with the entry rules only (%d frames)\n",
           failed ? "failed" : "proven", size, sizeof rows / sizeof rows[0], d_rows, d_none, d_bare);
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
