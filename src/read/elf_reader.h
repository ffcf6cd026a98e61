/* SPDX-License-Identifier: MIT */
/* Minimal ELF64 reading: enough to pull sections out of an object a
 * compiler made (tests/arch/check_reference).  For the tests and tools only:
 * the runtime library writes ELF images (emit/elf_image.h), it never
 * reads one.  Every read is bounds-checked.
 * Format: System V gABI, "Object Files" chapter. */
#ifndef PERFTRAMP_ELF_READER_H
#define PERFTRAMP_ELF_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_elf {
    const uint8_t *data;
    size_t len;
    bool big_endian;
    uint16_t machine;
    uint16_t type;
    uint64_t shoff;
    uint16_t shnum, shentsize, shstrndx;
};

struct pt_elf_section {
    const char *name;
    uint32_t type;
    uint64_t flags, addr;
    const uint8_t *data;  /* NULL for SHT_NOBITS */
    uint64_t size;
};

/* Returns 0, or -1 with a reason in *why. */
int pt_elf_open(struct pt_elf *e, const void *data, size_t len, const char **why);
/* Finds a section by name; 0 or -1. */
int pt_elf_section(const struct pt_elf *e, const char *name, struct pt_elf_section *out);

#endif
