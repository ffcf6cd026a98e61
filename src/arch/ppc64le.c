/* SPDX-License-Identifier: MIT */
/* Arch layer: ppc64le, 64-bit ELF V2 ABI (OpenPOWER ELFv2 ABI 1.4).
 *
 * Arguments arrive in r3-r10, f1-f13 and v2-v13; a hidden struct-return
 * pointer travels in r3: the trampoline touches none of them.  It uses
 * only r0 and r12 (volatile, free during function linkage: ELFv2 ch. 2,
 * "Register Roles") and CTR.
 *
 * Frame (ELFv2 ch. 2, "The Stack Frame"): the LR save doubleword of the
 * CALLER's frame is at 16(r1); `stdu` allocates our 96-byte frame and
 * stores the back chain at 0(r1) in one instruction, so back-chain
 * unwinders always see a valid chain.  96 = the 32-byte header (back
 * chain, CR save, LR save, TOC save) + a 64-byte parameter save area,
 * which a variadic or unprototyped target may spill r3-r10 into; 16-byte
 * aligned.  r2 (TOC) goes to our TOC save slot 24(r1) and comes back with
 * `ld r2,24(r1)` right after `bctrl`: the exact instruction libgcc's ppc64
 * unwinder looks for at a return address to recover r2.
 *
 * The target's global entry point derives its TOC from r12 = its own
 * address (ELFv2 ch. 3, "Symbol Values": local and global entry points):
 * `bcl 20,31,$+4` puts the address of the next instruction in LR (the form
 * the Power ISA's programming note on obtaining the NIA recommends: it
 * leaves the link-stack predictor balanced), `mflr r12` fetches it and the
 * `ld` displacement is measured from that `mflr`.  LR is saved before.
 *
 * The "LR saved at CFA+16" rule holds from `stdu` on, not from the `std`
 * that stores it: GCC 12 and clang 14 (powerpc64le-linux-gnu, -O2 -S on a
 * function that calls another) both attach `.cfi_offset 65, 16` after the
 * `stdu`, and perf's ppc64 call-chain fix-up, which reads the CFI at the
 * sampled pc, follows them.  LR itself keeps the return address until
 * `bcl`, so "LR unchanged" is exact before `stdu` as well.
 *
 * Encodings: Power ISA 3.0B book I (mfspr/mtspr 31/339,467 with SPR 8=LR,
 * 9=CTR; std/stdu DS-form 62/0,1; ld DS-form 58/0; bc B-form 16; bcctr
 * XL-form 19/528; bclr 19/16; addi D-form 14; tw 31/4).  DWARF numbers:
 * ELFv2 ch. 2, DWARF register mapping (r0-r31 = 0-31, LR = 65). */
#include "arch/table.h"

enum { R1 = 1, LR = 65, FRAME = 96, LR_SAVE = 16, EM_PPC64 = 21 };

static const struct pt_insn ppc64le_insns[] = {
    {PT_LE32(0x7c0802a6), .text = "mflr r0"},
    {PT_LE32(0xf8010010), .text = "std r0,16(r1)"},
    {PT_LE32(0xf821ffa1), .text = "stdu r1,-96(r1)", PT_CFI(CFA_OFFSET(FRAME), SAVED(LR, LR_SAVE))},
    {PT_LE32(0xf8410018), .text = "std r2,24(r1)"},
    {PT_LE32(0x429f0005), .text = "bcl 20,31,$+4"},
    {PT_LE32(0x7d8802a6), .text = "mflr r12"},
    {PT_LE32(0xe98c0000), .text = "ld r12,target-.(r12)", PT_FIX(PT_FIX_PPC_DS16, PT_WORD_TARGET)},
    {PT_LE32(0x7d8903a6), .text = "mtctr r12"},
    {PT_LE32(0x4e800421), .text = "bctrl"},
    {PT_LE32(0xe8410018), .text = "ld r2,24(r1)"},
    {PT_LE32(0x38210060), .text = "addi r1,r1,96", PT_CFI(CFA_OFFSET(0))},
    {PT_LE32(0xe8010010), .text = "ld r0,16(r1)"},
    {PT_LE32(0x7c0803a6), .text = "mtlr r0", PT_CFI(RESTORED(LR))},
    {PT_LE32(0x4e800020), .text = "blr"},
};

static const char *const ppc64le_regs[] = {
    [0] = "r0", [R1] = "r1", [2] = "r2", [12] = "r12", [LR] = "lr",
};

const struct pt_arch pt_arch_ppc64le = {
    .name = "ppc64le",
    .clang_target = "powerpc64le-linux-gnu",
    .elf_machine = EM_PPC64,
    .elf_flags = 2, /* ELFv2 ABI */
    .dwarf_regs = 114, /* 0-31 r, 32-63 f, 65 lr, 66 ctr, 68-75 cr, 76 xer, 77-108 vr, 109 vrsave, 110-113 vscr/... (ELFv2) */
    .big_endian = 0,
    .addr_size = 8,
    .icache = PT_ICACHE_FLUSH, /* separate, non-coherent instruction cache */
    .code_align = 16,        /* instructions need 4, the literal 8 */
    .cie_code_align = 4,
    .cie_data_align = -8,
    .ra_column = LR,
    .cie_initial = {CFA(R1, 0)},
    .insns = ppc64le_insns,
    .n_insns = sizeof ppc64le_insns / sizeof ppc64le_insns[0],
    .trap_len = 4,
    .trap = {0x08, 0x00, 0xe0, 0x7f}, /* trap (tw 31,0,0 = 0x7fe00008) */
    .reg_names = ppc64le_regs,
    .n_reg_names = sizeof ppc64le_regs / sizeof ppc64le_regs[0],
    .nops = {{PT_LE32(0x60000000)}}, /* ori 0,0,0 (Power ISA 3.0, 3.3.13) */
};
