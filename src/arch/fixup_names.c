/* SPDX-License-Identifier: MIT */
/* Arch layer: the name of each fixup kind of table.h, for tools
 * (`perftramp arch`); a new kind adds its line here. */
#include "arch/table.h"

static const char *const names[] = {
    [PT_FIX_NONE] = "none",
    [PT_FIX_X86_PCREL32] = "x86 pcrel32",
    [PT_FIX_A64_LDR_LIT19] = "aarch64 ldr literal imm19",
    [PT_FIX_RV_PCREL_HI20] = "riscv auipc hi20",
    [PT_FIX_RV_PCREL_LO12] = "riscv lo12",
    [PT_FIX_PPC_DS16] = "ppc DS-form 16",
    [PT_FIX_S390_RIL32] = "s390 RIL 32",
    [PT_FIX_X86_THUNK32] = "x86 disp32 from a pc thunk",
    [PT_FIX_A32_LDR_LIT12] = "a32 ldr literal imm12",
    [PT_RELOC_X86_REL32] = "x86 rel32 (relocation)",
};
/* a kind added after the last one and not named here fails the build */
_Static_assert(sizeof names / sizeof names[0] == PT_FIXUP_KINDS, "every fixup kind of table.h has a name here");

const char *pt_fixup_name(unsigned kind)
{
    return kind < PT_FIXUP_KINDS && names[kind] ? names[kind] : "unknown";
}
