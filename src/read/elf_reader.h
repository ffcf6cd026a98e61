/* SPDX-License-Identifier: MIT */
/* Minimal ELF reading, ELFCLASS32 and ELFCLASS64: enough to pull sections
 * and symbols out of an object a compiler made (tests/arch/check_reference,
 * `perftramp cfi`) or perftramp wrote.  For the tests and tools only: the
 * runtime library writes ELF images (emit/elf_image.h), it never reads one.
 * Every read is bounds-checked.
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
    uint8_t addr_size;    /* 4 (ELFCLASS32) or 8 (ELFCLASS64) */
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
    uint64_t entsize;
};

/* One symbol of a symbol table section, its fields in either class. */
struct pt_elf_symbol {
    uint32_t name;        /* offset in the linked string table */
    uint8_t info;
    uint16_t shndx;
    uint64_t value, size;
};

/* Returns 0, or -1 with a reason in *why. */
int pt_elf_open(struct pt_elf *e, const void *data, size_t len, const char **why);
/* Finds a section by name; 0 or -1. */
int pt_elf_section(const struct pt_elf *e, const char *name, struct pt_elf_section *out);
/* The number of symbols in a symbol table section (the null one counted). */
size_t pt_elf_symbol_count(const struct pt_elf *e, const struct pt_elf_section *symtab);
/* Symbol i of the section (i < pt_elf_symbol_count); 0 or -1. */
int pt_elf_symbol(const struct pt_elf *e, const struct pt_elf_section *symtab, size_t i, struct pt_elf_symbol *out);

#endif
