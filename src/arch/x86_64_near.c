/* SPDX-License-Identifier: MIT */
/* Arch layer: x86-64, System V ABI, with a direct call: the variant of x86_64.c for a
 * target within +-2 GiB of the trampoline (PERFTRAMP_NEAR_CALLS).
 *
 * `call rel32` (E8 cd) reaches [end of the call - 2^31, + 2^31 - 1]; its
 * field is a relocation (PT_RELOC_X86_REL32): written per trampoline from
 * the slot's address and the target.  Out of reach, the context writes
 * the main table instead (same size, same CFI program: the arena's FDEs
 * serve both).  A direct call needs no load of the target from memory and
 * is predicted from the instruction itself (bench/PERFORMANCE.md).
 *
 * The one-byte `nop` keeps the call's end, hence the return address and
 * every CFI row, at the main table's offsets (its `call *target(%rip)` is
 * six bytes, this call five).  The target word is still written: tools
 * read it, and it keeps the data words where the main table has them.
 *
 * Encodings: Intel SDM vol. 2 (ENDBR64 F3 0F 1E FA; PUSH 50+r; MOV 89 /r
 * with REX.W; NOP 90; CALL E8 cd, rel32 from the next instruction; POP
 * 58+r; RET C3).  DWARF numbers: System V AMD64 psABI, figure 3.36. */
#include "arch/table.h"

enum { RBP = 6, RSP = 7, RIP = 16, EM_X86_64 = 62 };

static const struct pt_insn x86_64_near_insns[] = {
    {PT_BYTES(0xf3, 0x0f, 0x1e, 0xfa), .text = "endbr64"},
    {PT_BYTES(0x55), .text = "push %rbp", PT_CFI(CFA_OFFSET(16), SAVED(RBP, -16))},
    {PT_BYTES(0x48, 0x89, 0xe5), .text = "mov %rsp,%rbp", PT_CFI(CFA_REGISTER(RBP))},
    {PT_BYTES(0x90), .text = "nop"},
    {PT_BYTES(0xe8, 0, 0, 0, 0), .text = "call target", PT_FIX_AT(PT_RELOC_X86_REL32, PT_WORD_TARGET, 1)},
    {PT_BYTES(0x5d), .text = "pop %rbp", PT_CFI(CFA(RSP, 8), RESTORED(RBP))},
    {PT_BYTES(0xc3), .text = "ret"},
};

static const char *const x86_64_near_regs[] = {
    [0] = "rax", [1] = "rdx", [2] = "rcx", [3] = "rbx", [4] = "rsi", [5] = "rdi",
    [RBP] = "rbp", [RSP] = "rsp", [RIP] = "rip",
};

const struct pt_arch pt_arch_x86_64_near = {
    .name = "x86_64_near",
    .clang_target = "x86_64-linux-gnu",
    .elf_machine = EM_X86_64,
    .dwarf_regs = 83, /* as x86_64.c */
    .big_endian = 0,
    .addr_size = 8,
    .icache = PT_ICACHE_COHERENT,
    .code_align = 16,
    .cie_code_align = 1,
    .cie_data_align = -8,
    .ra_column = RIP,
    .cie_initial = {CFA(RSP, 8), SAVED(RIP, -8)},
    .insns = x86_64_near_insns,
    .n_insns = sizeof x86_64_near_insns / sizeof x86_64_near_insns[0],
    .trap_len = 2,
    .trap = {0x0f, 0x0b}, /* ud2 */
    .reg_names = x86_64_near_regs,
    .n_reg_names = sizeof x86_64_near_regs / sizeof x86_64_near_regs[0],
    .x86_nop_forms = 1,
};
