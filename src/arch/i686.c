/* SPDX-License-Identifier: MIT */
/* Arch layer: i686 (32-bit x86), the System V i386 psABI as GCC uses it on
 * Linux (cdecl, the stack 16-byte aligned at every call).
 *
 * Every cdecl argument travels on the stack, above the return address, and
 * a trampoline that keeps a frame puts its frame between them and the
 * target.  So the trampoline passes the first five words of the caller's
 * arguments again: it pushes copies of them (pushl 8..24(%ebp)) before
 * calling the target, which finds them where a direct call would have put
 * them, relative to its own return address.  Registers pass untouched:
 * eax, ecx and edx (regparm(1..3) and fastcall register arguments), the
 * x87 and SSE registers.  A target that pops 4 bytes of its arguments (a
 * struct returned in memory pops its hidden pointer: `ret $4`) has the
 * trampoline pop them too: after the call it compares %esp with the value
 * a cdecl target leaves and returns with `ret $4` when 4 more were popped.
 * The contract: include/perftramp.h.
 *
 * No rip-relative addressing: the target word is reached through the pc a
 * call to a thunk inside the trampoline leaves in %ebx (`call thunk`;
 * thunk: `mov (%esp),%ebx; ret`), the form GCC's -fPIC code uses
 * (__x86.get_pc_thunk.bx).  A call matched by a ret keeps the processor's
 * return-stack predictor in step; the shorter `call 1f; 1: pop %ebx` pushes
 * a return address no ret consumes and makes the next returns of the
 * caller mispredict.  %ebx is callee-saved, so the trampoline saves it in
 * its frame: eax, ecx and edx, which may carry arguments, stay free.
 *
 * No endbr32: Linux enforces no control-flow protection in 32-bit
 * processes (user shadow stacks are x86-64 only, indirect-branch tracking
 * is not enforced in user space at all, and glibc 2.39 dropped i386 CET),
 * so the 4-byte marker would protect nothing; the calls and returns are
 * balanced, as a shadow stack would require.
 *
 * Encodings: Intel SDM vol. 2 (PUSH 50+r; MOV 89 /r, 8B /r; PUSH FF /6 with
 * ModRM 0x75 = disp8(%ebp); CALL E8 rel32; CALL FF /2 with ModRM 0x93 =
 * disp32(%ebx); LEA 8D /r; CMP 39 /r; LEAVE C9; JNE 75 rel8; RET C3;
 * RET imm16 C2).  DWARF numbers and the CIE: i386 psABI, "DWARF Register
 * Number Mapping" (eax 0, ecx 1, edx 2, ebx 3, esp 4, ebp 5, esi 6,
 * edi 7, return address 8), as GCC and clang emit them on Linux. */
#include "arch/table.h"

enum { EBX = 3, ESP = 4, EBP = 5, EIP = 8, EM_386 = 3 };

static const struct pt_insn i686_insns[] = {
    {PT_BYTES(0x55), .text = "push %ebp", PT_CFI(CFA_OFFSET(8), SAVED(EBP, -8))},
    {PT_BYTES(0x89, 0xe5), .text = "mov %esp,%ebp", PT_CFI(CFA_REGISTER(EBP))},
    {PT_BYTES(0x53), .text = "push %ebx", PT_CFI(SAVED(EBX, -12))},
    /* the caller's first five argument words, last first: 8(%ebp) is the
     * first; esp is 16-aligned after them (entry 12 mod 16, minus 28) */
    {PT_BYTES(0xff, 0x75, 0x18), .text = "pushl 24(%ebp)"},
    {PT_BYTES(0xff, 0x75, 0x14), .text = "pushl 20(%ebp)"},
    {PT_BYTES(0xff, 0x75, 0x10), .text = "pushl 16(%ebp)"},
    {PT_BYTES(0xff, 0x75, 0x0c), .text = "pushl 12(%ebp)"},
    {PT_BYTES(0xff, 0x75, 0x08), .text = "pushl 8(%ebp)"},
    /* rel32 = 21: from the end of this call (24) to the thunk (45) */
    {PT_BYTES(0xe8, 0x15, 0x00, 0x00, 0x00), .text = "call thunk"},
    {PT_BYTES(0xff, 0x93, 0, 0, 0, 0), .text = "call *target-.(%ebx)",
     PT_FIX_AT(PT_FIX_X86_THUNK32, PT_WORD_TARGET, 2)},
    {PT_BYTES(0x8b, 0x5d, 0xfc), .text = "mov -4(%ebp),%ebx", PT_CFI(RESTORED(EBX))},
    /* where %esp is now when the target popped nothing (ebx, 5 words) */
    {PT_BYTES(0x8d, 0x4d, 0xe8), .text = "lea -24(%ebp),%ecx"},
    {PT_BYTES(0x39, 0xcc), .text = "cmp %ecx,%esp"},
    {PT_BYTES(0xc9), .text = "leave", PT_CFI(CFA(ESP, 4), RESTORED(EBP))},
    {PT_BYTES(0x75, 0x01), .text = "jne 1f"},
    {PT_BYTES(0xc3), .text = "ret"},
    {PT_BYTES(0xc2, 0x04, 0x00), .text = "1: ret $4"},
    /* the pc thunk, called from +19: the rules after `leave` (CFA = esp + 4,
     * the return address at CFA-4, ebp and ebx the caller's) are exactly
     * those of this two-instruction leaf */
    {PT_BYTES(0x8b, 0x1c, 0x24), .text = "thunk: mov (%esp),%ebx"},
    {PT_BYTES(0xc3), .text = "ret"},
};

static const char *const i686_regs[] = {
    [0] = "eax", [1] = "ecx", [2] = "edx", [EBX] = "ebx", [ESP] = "esp", [EBP] = "ebp",
    [6] = "esi", [7] = "edi", [EIP] = "eip",
};

const struct pt_arch pt_arch_i686 = {
    .name = "i686",
    .clang_target = "i686-linux-gnu",
    .elf_machine = EM_386,
    .dwarf_regs = 101, /* 0-8 GPRs+RA, 9 eflags, 11-18 st, 21-28 xmm, 29-36 mm, ..., 93-100 k0-k7 (psABI) */
    .big_endian = 0,
    .addr_size = 4,
    .icache = PT_ICACHE_COHERENT, /* instruction fetch snoops stores */
    .code_align = 16,
    .cie_code_align = 1,
    .cie_data_align = -4,
    .ra_column = EIP,
    .cie_initial = {CFA(ESP, 4), SAVED(EIP, -4)},
    .insns = i686_insns,
    .n_insns = sizeof i686_insns / sizeof i686_insns[0],
    .trap_len = 2,
    .trap = {0x0f, 0x0b}, /* ud2 */
    .reg_names = i686_regs,
    .n_reg_names = sizeof i686_regs / sizeof i686_regs[0],
    .x86_nop_forms = 1, /* 90, cc, 0f 1f /0 with 66/2e prefixes (Intel SDM vol. 2, NOP) */
};
