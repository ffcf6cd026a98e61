/* SPDX-License-Identifier: MIT */
/* Arch layer: AArch64, AAPCS64 (Linux).
 *
 * Arguments arrive in x0-x7 and v0-v7, x8 carries the indirect result
 * (struct-return) address, variadic calls use the same registers: the
 * trampoline touches none of them.  It keeps an AAPCS64 frame record
 * (x29 = address of {saved x29, saved x30}), loads the target from the
 * literal into x16 (IP0: an intra-procedure-call scratch register, free at
 * a call boundary) and calls it.  `bti c` is the landing pad for indirect
 * calls into a BTI-guarded page; it is a NOP on cores without BTI.
 *
 * Encodings: Arm ARM (DDI 0487), C6.2: BTI (HINT #34, "c" = op2 010);
 * STP/LDP 64-bit pre-/post-index; ADD (immediate) as MOV to/from SP;
 * LDR (literal) 64-bit 0x58000000 | imm19 << 5 | Rt; BLR; RET.
 * DWARF numbers: "DWARF for the Arm 64-bit Architecture" (aadwarf64),
 * 4.1: x0-x30 = 0-30, sp = 31. */
#include "arch/table.h"

enum { X29 = 29, X30 = 30, SP = 31, EM_AARCH64 = 183 };

static const struct pt_insn aarch64_insns[] = {
    {PT_LE32(0xd503245f), .text = "bti c"},
    {PT_LE32(0xa9bf7bfd), .text = "stp x29, x30, [sp, #-16]!",
     PT_CFI(CFA_OFFSET(16), SAVED(X29, -16), SAVED(X30, -8))},
    {PT_LE32(0x910003fd), .text = "mov x29, sp", PT_CFI(CFA_REGISTER(X29))},
    {PT_LE32(0x58000010), .text = "ldr x16, target", PT_FIX(PT_FIX_A64_LDR_LIT19, PT_WORD_TARGET)},
    {PT_LE32(0xd63f0200), .text = "blr x16"},
    {PT_LE32(0xa8c17bfd), .text = "ldp x29, x30, [sp], #16",
     PT_CFI(CFA(SP, 0), RESTORED(X29), RESTORED(X30))},
    {PT_LE32(0xd65f03c0), .text = "ret"},
};

static const char *const aarch64_regs[] = {
    [0] = "x0", [8] = "x8", [16] = "x16", [X29] = "x29", [X30] = "x30", [SP] = "sp",
};

const struct pt_arch pt_arch_aarch64 = {
    .name = "aarch64",
    .clang_target = "aarch64-linux-gnu",
    .elf_machine = EM_AARCH64,
    .dwarf_regs = 96, /* 0-30 x, 31 sp, 32 pc, 33 ELR_mode, 34 RA_SIGN_STATE, 46 VG, 48-63 p, 64-95 v (aadwarf64) */
    .big_endian = 0,
    .addr_size = 8,
    .icache = PT_ICACHE_FLUSH, /* Arm ARM B2.4.4: instruction fetch is not coherent with data writes */
    .code_align = 16,
    .cie_code_align = 4, /* as gas: every instruction is 4 bytes */
    .cie_data_align = -8,
    .ra_column = X30,
    .cie_initial = {CFA(SP, 0)},
    .insns = aarch64_insns,
    .n_insns = sizeof aarch64_insns / sizeof aarch64_insns[0],
    .trap_len = 4,
    .trap = {0x00, 0x00, 0x00, 0x00}, /* udf #0: permanently undefined (SIGILL) */
    .reg_names = aarch64_regs,
    .n_reg_names = sizeof aarch64_regs / sizeof aarch64_regs[0],
    .nops = {{PT_LE32(0xd503201f)}}, /* nop (Arm ARM C6.2) */
};
