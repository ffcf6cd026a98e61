/* SPDX-License-Identifier: MIT */
/* Arch layer: x86-64, System V ABI.
 *
 * Arguments arrive in rdi rsi rdx rcx r8 r9 and xmm0-7, %al counts vector
 * registers for variadic calls, rdi carries a hidden struct-return
 * pointer: the trampoline touches none of them.  Entry: rsp = 8 mod 16;
 * after `push %rbp` the call lands the target at the ABI's alignment.
 *
 * Encodings: Intel SDM vol. 2 (ENDBR64 F3 0F 1E FA; PUSH 50+r; MOV 89 /r
 * with REX.W; CALL FF /2 with ModRM 0x15 = RIP+disp32; POP 58+r; RET C3).
 * DWARF numbers: System V AMD64 psABI, figure 3.36. */
#include "arch/table.h"

enum { RBP = 6, RSP = 7, RIP = 16, EM_X86_64 = 62 };

static const struct pt_insn x86_64_insns[] = {
    {PT_BYTES(0xf3, 0x0f, 0x1e, 0xfa), .text = "endbr64"},
    {PT_BYTES(0x55), .text = "push %rbp", PT_CFI(CFA_OFFSET(16), SAVED(RBP, -16))},
    {PT_BYTES(0x48, 0x89, 0xe5), .text = "mov %rsp,%rbp", PT_CFI(CFA_REGISTER(RBP))},
    {PT_BYTES(0xff, 0x15, 0, 0, 0, 0), .text = "call *target(%rip)",
     PT_FIX_AT(PT_FIX_X86_PCREL32, PT_WORD_TARGET, 2)},
    {PT_BYTES(0x5d), .text = "pop %rbp", PT_CFI(CFA(RSP, 8), RESTORED(RBP))},
    {PT_BYTES(0xc3), .text = "ret"},
};

static const char *const x86_64_regs[] = {
    [0] = "rax", [1] = "rdx", [2] = "rcx", [3] = "rbx", [4] = "rsi", [5] = "rdi",
    [RBP] = "rbp", [RSP] = "rsp", [RIP] = "rip",
};

const struct pt_arch pt_arch_x86_64 = {
    .name = "x86_64",
    .clang_target = "x86_64-linux-gnu",
    .elf_machine = EM_X86_64,
    .dwarf_regs = 83, /* 0-16 GPRs+RA, 17-32 xmm, ..., 67-82 xmm16+ (psABI, "DWARF Register Number Mapping") */
    .big_endian = 0,
    .addr_size = 8,
    .icache = PT_ICACHE_COHERENT, /* instruction fetch snoops stores */
    .code_align = 16,
    .cie_code_align = 1,
    .cie_data_align = -8,
    .ra_column = RIP,
    .cie_initial = {CFA(RSP, 8), SAVED(RIP, -8)},
    .insns = x86_64_insns,
    .n_insns = sizeof x86_64_insns / sizeof x86_64_insns[0],
    .trap_len = 2,
    .trap = {0x0f, 0x0b}, /* ud2 */
    .reg_names = x86_64_regs,
    .n_reg_names = sizeof x86_64_regs / sizeof x86_64_regs[0],
    .x86_nop_forms = 1, /* 90, cc, 0f 1f /0 with 66/2e prefixes (Intel SDM vol. 2, NOP) */
};
