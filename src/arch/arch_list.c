/* SPDX-License-Identifier: MIT */
/* Arch layer: the built-in architecture tables.  Adding an architecture: one file in
 * src/arch/, one line in each list below (see docs/porting.md). */
#include "arch/table.h"

#include <string.h>

extern const struct pt_arch pt_arch_x86_64;
extern const struct pt_arch pt_arch_aarch64;
extern const struct pt_arch pt_arch_riscv64;
extern const struct pt_arch pt_arch_ppc64le;
extern const struct pt_arch pt_arch_s390x;
extern const struct pt_arch pt_arch_i686;
extern const struct pt_arch pt_arch_arm;
extern const struct pt_arch pt_arch_x86_64_near;

const struct pt_arch *const pt_arch_list[] = {
    &pt_arch_x86_64,
    &pt_arch_aarch64,
    &pt_arch_riscv64,
    &pt_arch_ppc64le,
    &pt_arch_s390x,
    &pt_arch_i686,
    &pt_arch_arm,
};
const size_t pt_arch_count = sizeof pt_arch_list / sizeof pt_arch_list[0];

const struct pt_arch_variant pt_arch_variants[] = {
    {"x86_64", &pt_arch_x86_64_near},
};
const size_t pt_arch_variant_count = sizeof pt_arch_variants / sizeof pt_arch_variants[0];

const struct pt_arch *pt_arch_variant_of(const struct pt_arch *main, const char *suffix)
{
    size_t n = main && suffix ? strlen(main->name) : 0;
    for (size_t i = 0; main && suffix && i < pt_arch_variant_count; i++) {
        const char *name = pt_arch_variants[i].arch->name;
        if (strcmp(pt_arch_variants[i].main_name, main->name) == 0 && strncmp(name, main->name, n) == 0 &&
            name[n] == '_' && strcmp(name + n + 1, suffix) == 0)
            return pt_arch_variants[i].arch;
    }
    return NULL;
}

const struct pt_arch *pt_arch_find(const char *name)
{
    for (size_t i = 0; name && i < pt_arch_count; i++)
        if (strcmp(pt_arch_list[i]->name, name) == 0)
            return pt_arch_list[i];
    return NULL;
}

/* The table of the CPU this build runs on, NULL when none: the machine
 * named by the compiler, and only if its addresses are this build's
 * pointers (an ILP32 build of a 64-bit CPU, x32 say, has no table). */
static const struct pt_arch *host_table(void)
{
#if defined(__x86_64__)
    return pt_arch_find("x86_64");
#elif defined(__aarch64__)
    return pt_arch_find("aarch64");
#elif defined(__riscv) && __riscv_xlen == 64
    return pt_arch_find("riscv64");
#elif defined(__powerpc64__) && defined(__LITTLE_ENDIAN__) && defined(_CALL_ELF) && _CALL_ELF == 2
    return pt_arch_find("ppc64le");
#elif defined(__s390x__)
    return pt_arch_find("s390x");
#elif defined(__i386__)
    return pt_arch_find("i686");
#elif defined(__arm__) && defined(__ARM_EABI__) && !defined(__ARMEB__)
    return pt_arch_find("arm");
#else
    return NULL;
#endif
}

const struct pt_arch *pt_arch_host(void)
{
    const struct pt_arch *a = host_table();
    return a && a->addr_size == sizeof(void *) ? a : NULL;
}
