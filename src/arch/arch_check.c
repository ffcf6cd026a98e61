/* SPDX-License-Identifier: MIT */
/* Arch layer: refuses a table that lacks a field of struct pt_arch, so a
 * port that forgot one fails at perftramp_open (pt_layout_build runs this),
 * never later and silently (a publish refused for every register). */
#include "arch/table.h"

#include <errno.h>
#include <stdbool.h>

/* A field added to struct pt_arch must be checked here (or marked optional
 * in table.h) and removed in turn by tests/emit/check_emitter.c's
 * tables_lack_no_field: this size stops the build until the new size is
 * written here, so the list of checks cannot silently fall behind the
 * struct (152 bytes on every LP64 ABI perftramp has a table for). */
#if UINTPTR_MAX == UINT64_MAX
_Static_assert(sizeof(struct pt_arch) == 152,
               "struct pt_arch changed: check the new field in pt_arch_check() and in check_emitter's "
               "tables_lack_no_field, then update this size");
#endif

static int fail(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    errno = EINVAL;
    return -1;
}

/* The rules of ops that name a register name one the ABI defines. */
static bool regs_known(const struct pt_cfi *cfi, unsigned dwarf_regs)
{
    for (int k = 0; k < PT_INSN_MAX_CFI; k++)
        if (cfi[k].op != PT_CFI_NONE && cfi[k].op != PT_CFI_DEF_CFA_OFFSET && cfi[k].op != PT_CFI_NEGATE_RA_STATE &&
            cfi[k].reg >= dwarf_regs)
            return false;
    return true;
}

int pt_arch_check(const struct pt_arch *a, const char **why)
{
    if (!a || !a->name || !a->name[0])
        return fail(why, "table has no .name");
    if (!a->clang_target || !a->clang_target[0])
        return fail(why, "table has no .clang_target");
    if (a->elf_machine == 0)
        return fail(why, "table has no .elf_machine");
    if (a->addr_size != 4 && a->addr_size != 8)
        return fail(why, "table's .addr_size is not 4 or 8");
    if (a->icache != PT_ICACHE_COHERENT && a->icache != PT_ICACHE_FLUSH)
        return fail(why, "table has no .icache (PT_ICACHE_COHERENT or PT_ICACHE_FLUSH)");
    if (a->code_align == 0 || (a->code_align & (a->code_align - 1)))
        return fail(why, "table's .code_align is not a power of two");
    if (a->cie_code_align == 0 || a->cie_data_align == 0)
        return fail(why, "table has no .cie_code_align or .cie_data_align");
    if (a->dwarf_regs == 0)
        return fail(why, "table has no .dwarf_regs");
    if (a->ra_column >= a->dwarf_regs)
        return fail(why, "table's .ra_column is not below .dwarf_regs");
    if (a->cie_initial[0].op != PT_CFI_DEF_CFA)
        return fail(why, "table's .cie_initial does not start with the CFA rule");
    if (!regs_known(a->cie_initial, a->dwarf_regs))
        return fail(why, "table's .cie_initial names a register at or past .dwarf_regs");
    if (!a->insns || a->n_insns == 0)
        return fail(why, "table has no instructions");
    for (size_t i = 0; i < a->n_insns; i++)
        if (!regs_known(a->insns[i].cfi, a->dwarf_regs))
            return fail(why, "a rule of the table names a register at or past .dwarf_regs");
    if (a->trap_len == 0 || a->trap_len > PT_INSN_MAX_BYTES)
        return fail(why, "table has no .trap");
    if (!a->reg_names || a->n_reg_names == 0)
        return fail(why, "table has no .reg_names");
    if (a->nops[0].len == 0 && !a->x86_nop_forms)
        return fail(why, "table has no .nops");
    for (int k = 0; k < PT_MAX_NOPS; k++)
        if (a->nops[k].len > PT_INSN_MAX_BYTES)
            return fail(why, "a .nops entry is too long");
    return 0;
}
