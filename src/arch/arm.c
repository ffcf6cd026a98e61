/* SPDX-License-Identifier: MIT */
/* Arch layer: 32-bit Arm, A32 instructions, AAPCS (Linux EABI; Debian
 * armhf and armel alike: the trampoline touches no argument register,
 * core or VFP, so the float ABI is the caller's business).
 *
 * Arguments arrive in r0-r3 (and s0-s15/d0-d7 with the hard-float ABI),
 * r0 carries the struct-return address, results come back in r0-r3 or
 * s0-s15/d0-d3: the trampoline touches none of them.  It uses r12 (ip),
 * the intra-procedure-call scratch register every call may clobber
 * (AAPCS 6.1.1), and keeps sp 8-aligned at the call (AAPCS 6.2.1.2):
 * 16 bytes pushed.
 *
 * A32, not Thumb-2: the trampoline's address needs no interworking bit,
 * `blx ip` enters a Thumb or an Arm target by bit 0 of its address, and
 * `bx lr` returns to a Thumb or an Arm caller.  The frame is the APCS
 * frame gcc writes for -marm -mapcs-frame, the only user frame the
 * kernel's perf_callchain_user walks on 32-bit Arm: with r11 = fp it
 * reads {caller's fp, sp, lr} at fp - 12 (arch/arm/kernel/perf_callchain.c).
 * Thumb code keeps its frame pointer in r7, which that walk never reads.
 * The epilogue is two instructions so the restored registers can be seen
 * at a boundary of their own (the every-boundary test poisons their
 * slots there).  `push {.., pc}` and `ldm` with sp in the list are what
 * gcc writes for that frame; Arm deprecates both forms but ARMv7 and
 * AArch32 of ARMv8 run them (clang says so when it assembles the
 * reference).
 *
 * Encodings: Arm ARM (DDI 0406C), A8.8: MOV (register) A1; PUSH = STMDB
 * sp! A1, register list {r11, r12, r14, r15}; SUB (immediate) A1; LDR
 * (literal) A1, U and imm12 (the fixup) from the instruction + 8; BLX (register) A1;
 * LDM A1 without writeback; BX A1.  The target word is 4-aligned.
 * DWARF numbers: "DWARF for the Arm Architecture" (aadwarf32), 3.1:
 * r0-r15 = 0-15, d0-d31 = 256-287. */
#include "arch/table.h"

enum { R11 = 11, SP = 13, LR = 14, EM_ARM = 40 };

static const struct pt_insn arm_insns[] = {
    {PT_LE32(0xe1a0c00d), .text = "mov ip, sp"},
    /* ip's slot holds the caller's sp: the kernel's frame walk reads it
     * there, and so does the rule for r13 */
    {PT_LE32(0xe92dd800), .text = "push {fp, ip, lr, pc}",
     PT_CFI(CFA_OFFSET(16), SAVED(R11, -16), SAVED(SP, -12), SAVED(LR, -8))},
    {PT_LE32(0xe24cb004), .text = "sub fp, ip, #4", PT_CFI(CFA(R11, 4))},
    {PT_LE32(0xe51fc000), .text = "ldr ip, target", PT_FIX(PT_FIX_A32_LDR_LIT12, PT_WORD_TARGET)},
    {PT_LE32(0xe12fff3c), .text = "blx ip"},
    {PT_LE32(0xe89d6800), .text = "ldm sp, {fp, sp, lr}",
     PT_CFI(CFA(SP, 0), RESTORED(R11), RESTORED(SP), RESTORED(LR))},
    {PT_LE32(0xe12fff1e), .text = "bx lr"},
};

static const char *const arm_regs[] = {
    [0] = "r0", [1] = "r1", [2] = "r2", [3] = "r3", [R11] = "fp", [12] = "ip", [SP] = "sp", [LR] = "lr", [15] = "pc",
};

const struct pt_arch pt_arch_arm = {
    .name = "arm",
    .clang_target = "arm-linux-gnueabihf",
    .elf_machine = EM_ARM,
    .elf_flags = 0x05000000, /* EF_ARM_EABI_VER5 (ELF for the Arm Architecture, 5.2.1); no float ABI claimed */
    .dwarf_regs = 288,       /* 0-15 r, 64-95 s (obsolete), 104-127 iWMMXt, 256-287 d (aadwarf32 3.1) */
    .big_endian = 0,
    .addr_size = 4,
    .icache = PT_ICACHE_FLUSH, /* Arm ARM A3.5.4 / B2.2.9: instruction fetch does not see data writes */
    .code_align = 8,
    .cie_code_align = 2, /* as gas and clang: Thumb instructions are 2 bytes */
    .cie_data_align = -4,
    .ra_column = LR,
    .cie_initial = {CFA(SP, 0)},
    .insns = arm_insns,
    .n_insns = sizeof arm_insns / sizeof arm_insns[0],
    .trap_len = 4,
    .trap = {0xf0, 0x00, 0xf0, 0xe7}, /* udf #0 (0xe7f000f0): permanently undefined, SIGILL */
    .reg_names = arm_regs,
    .n_reg_names = sizeof arm_regs / sizeof arm_regs[0],
    .nops = {{PT_LE32(0xe320f000)}, {PT_LE32(0xe1a00000)}}, /* nop (ARMv6K+); mov r0, r0 (gas pads so before) */
    .ehabi = 1,
};
