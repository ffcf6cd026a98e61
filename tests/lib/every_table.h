/* SPDX-License-Identifier: MIT */
/* Every table of the lists, and the host table's ILP32 twin (4-byte
 * addresses, as x32's ELFCLASS32 EM_X86_64): the 32-bit case on every
 * host, whatever tables the lists hold.  For the tests that walk them. */
#ifndef PERFTRAMP_EVERY_TABLE_H
#define PERFTRAMP_EVERY_TABLE_H

#include "arch/table.h"

#include <stddef.h>

/* how many */
static inline size_t n_tables(void)
{
    return pt_arch_count + pt_arch_variant_count + 1;
}

/* table i < n_tables(); the twin is written into *twin */
static inline const struct pt_arch *table_i(size_t i, struct pt_arch *twin)
{
    if (i < pt_arch_count)
        return pt_arch_list[i];
    if (i < pt_arch_count + pt_arch_variant_count)
        return pt_arch_variants[i - pt_arch_count].arch;
    *twin = *pt_arch_list[0];
    twin->name = "x86_64-ilp32-twin";
    twin->addr_size = 4;
    return twin;
}

#endif
