/* SPDX-License-Identifier: MIT */
/* Arch layer: RISC-V 64 (RV64GC), LP64D psABI (Linux).
 *
 * Arguments arrive in a0-a7 and fa0-fa7, struct returns come back in
 * a0/a1, fa0/fa1 or through a hidden pointer in a0; variadic calls use
 * the integer registers: the trampoline touches none of them.  s0 is the
 * frame pointer and points at the CFA, with ra at -8 and the caller's s0
 * at -16 (psABI "Frame Pointer Convention"), so frame-pointer unwinders
 * walk through.  The target is loaded into t1 (x6): a temporary, and not
 * a link register, so `jalr ra, t1` is a plain call for the
 * return-address-stack predictor (unprivileged ISA, 2.5 JALR, table
 * "Return-address stack prediction hints": rs1 = x1/x5 would pop).
 * Every instruction is the 4-byte form (no RVC), so the table runs on any
 * RV64G core; the reference assembles it with `.option norvc`.
 *
 * Encodings: RISC-V Unprivileged ISA, chapter 2 (RV32I: ADDI I-type,
 * AUIPC U-type, JALR) and chapter 5 (RV64I: SD S-type, LD I-type, funct3
 * 011); `ret` = jalr x0, 0(ra).  The unimplemented-instruction trap is
 * `unimp` = csrrw x0, cycle, x0 (read-only CSR: illegal instruction).
 * DWARF numbers: RISC-V ELF psABI, "DWARF Register Numbers": x0-x31 = 0-31. */
#include "arch/table.h"

enum { RA = 1, SP = 2, S0 = 8, EM_RISCV = 243 };

static const struct pt_insn riscv64_insns[] = {
    {PT_LE32(0xff010113), .text = "addi sp, sp, -16", PT_CFI(CFA_OFFSET(16))},
    {PT_LE32(0x00113423), .text = "sd ra, 8(sp)", PT_CFI(SAVED(RA, -8))},
    {PT_LE32(0x00813023), .text = "sd s0, 0(sp)", PT_CFI(SAVED(S0, -16))},
    {PT_LE32(0x01010413), .text = "addi s0, sp, 16", PT_CFI(CFA(S0, 0))},
    {PT_LE32(0x00000317), .text = "auipc t1, %pcrel_hi(target)",
     PT_FIX(PT_FIX_RV_PCREL_HI20, PT_WORD_TARGET)},
    {PT_LE32(0x00033303), .text = "ld t1, %pcrel_lo(target)(t1)",
     PT_FIX(PT_FIX_RV_PCREL_LO12, PT_WORD_TARGET)},
    {PT_LE32(0x000300e7), .text = "jalr ra, 0(t1)"},
    {PT_LE32(0x00813083), .text = "ld ra, 8(sp)", PT_CFI(RESTORED(RA))},
    {PT_LE32(0x00013403), .text = "ld s0, 0(sp)", PT_CFI(CFA(SP, 16), RESTORED(S0))},
    {PT_LE32(0x01010113), .text = "addi sp, sp, 16", PT_CFI(CFA_OFFSET(0))},
    {PT_LE32(0x00008067), .text = "ret"},
};

static const char *const riscv64_regs[] = {
    [0] = "zero", [RA] = "ra", [SP] = "sp", [6] = "t1", [S0] = "s0", [10] = "a0",
};

const struct pt_arch pt_arch_riscv64 = {
    .name = "riscv64",
    .clang_target = "riscv64-linux-gnu",
    .elf_machine = EM_RISCV,
    .elf_flags = 0x5, /* EF_RISCV_RVC | EF_RISCV_FLOAT_ABI_DOUBLE (lp64d) */
    .dwarf_regs = 128, /* 0-31 x, 32-63 f, 96-127 v (psABI, "DWARF") */
    .big_endian = 0,
    .addr_size = 8,
    .icache = PT_ICACHE_FLUSH, /* fence.i / riscv_flush_icache: fetch is not coherent */
    .code_align = 16,
    .cie_code_align = 1, /* as gas and clang (RVC makes 2-byte steps possible) */
    .cie_data_align = -8,
    .ra_column = RA,
    .cie_initial = {CFA(SP, 0)},
    .insns = riscv64_insns,
    .n_insns = sizeof riscv64_insns / sizeof riscv64_insns[0],
    .trap_len = 4,
    .trap = {0x73, 0x10, 0x00, 0xc0}, /* unimp */
    .reg_names = riscv64_regs,
    .n_reg_names = sizeof riscv64_regs / sizeof riscv64_regs[0],
    .nops = {{PT_LE32(0x00000013)}, {PT_LE16(0x0001)}}, /* addi x0,x0,0; c.nop (unprivileged ISA 2.4, 16.5) */
};
