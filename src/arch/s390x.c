/* SPDX-License-Identifier: MIT */
/* Arch layer: s390x, z/Architecture ELF ABI (s390x ELF ABI Supplement 1.6).
 *
 * Arguments arrive in r2-r6 and f0/f2/f4/f6; results come back in r2 and
 * f0; a hidden struct-return pointer travels in r2: the trampoline
 * touches none of them.  It uses only r1 (volatile, not an argument
 * register), r14 (return address) and r15 (stack pointer).
 *
 * Frame (ABI "Stack frame" figure): every caller provides a 160-byte
 * register save area at 0(r15); the callee may store r14 at 112 and r15
 * at 120 there.  We then allocate our own 160-byte save area for the
 * target and store the back chain (the old r15) at 0(r15), so back-chain
 * unwinders walk through.  The CFA is r15+160 at entry (the caller's
 * save area belongs to the caller).
 *
 * Encodings: z/Architecture Principles of Operation SA22-7832 (STMG RSY
 * EB..24, LGR RRE B904, AGHI RI A7.B, STG RXY E3..24, LGRL RIL C4.8 with
 * a halfword-scaled pc-relative offset to a doubleword-aligned operand,
 * BASR RR 0D, LMG RSY EB..04, BR = BCR 15 07F).  DWARF numbers: ABI
 * table "DWARF register number mapping" (r0-r15 = 0-15). */
#include "arch/table.h"

enum { R14 = 14, R15 = 15, SAVE_AREA = 160, EM_S390 = 22 };

static const struct pt_insn s390x_insns[] = {
    {PT_BE48(0xebeff0700024), .text = "stmg %r14,%r15,112(%r15)",
     PT_CFI(SAVED(R14, 112 - SAVE_AREA), SAVED(R15, 120 - SAVE_AREA))},
    {PT_BE32(0xb904001f), .text = "lgr %r1,%r15"},
    {PT_BE32(0xa7fbff60), .text = "aghi %r15,-160", PT_CFI(CFA_OFFSET(2 * SAVE_AREA))},
    {PT_BE48(0xe310f0000024), .text = "stg %r1,0(%r15)"},
    {PT_BE48(0xc41800000000), .text = "lgrl %r1,target", PT_FIX(PT_FIX_S390_RIL32, PT_WORD_TARGET)},
    {PT_BE16(0x0de1), .text = "basr %r14,%r1"},
    {PT_BE48(0xebeff1100004), .text = "lmg %r14,%r15,272(%r15)",
     PT_CFI(CFA_OFFSET(SAVE_AREA), RESTORED(R14), RESTORED(R15))},
    {PT_BE16(0x07fe), .text = "br %r14"},
};

static const char *const s390x_regs[] = {
    [1] = "r1", [R14] = "r14", [R15] = "r15",
};

const struct pt_arch pt_arch_s390x = {
    .name = "s390x",
    .clang_target = "s390x-linux-gnu",
    .elf_machine = EM_S390,
    .dwarf_regs = 66, /* 0-15 r, 16-31 f, 32-47 cr, 48-63 a, 64-65 psw (ELF ABI, "DWARF Register Number Mapping") */
    .big_endian = 1,
    .addr_size = 8,
    .icache = PT_ICACHE_FLUSH, /* prefetched code may survive stores through the other view: serialize */
    .code_align = 8,         /* LGRL's operand must be doubleword aligned */
    .cie_code_align = 1,
    .cie_data_align = -8,
    .ra_column = R14,
    .cie_initial = {CFA(R15, SAVE_AREA)},
    .insns = s390x_insns,
    .n_insns = sizeof s390x_insns / sizeof s390x_insns[0],
    .trap_len = 2,
    .trap = {0x00, 0x00}, /* opcode 00 is unassigned: operation exception */
    .reg_names = s390x_regs,
    .n_reg_names = sizeof s390x_regs / sizeof s390x_regs[0],
    .nops = {{PT_BE32(0x47000000)}, {PT_BE16(0x0700)}}, /* nop (bc 0,0); nopr (bcr 0,0) (PoO, 7) */
};
