/* SPDX-License-Identifier: MIT */
/* Minimal ELF64 reading and writing: enough to pull sections out of an
 * object a compiler made, and to wrap emitted code and .eh_frame in an
 * object that readelf, objdump and gdb (JIT interface) can read.
 * Format: System V gABI, "Object Files" chapter. */
#ifndef PERFTRAMP_ELF_IMAGE_H
#define PERFTRAMP_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* ---- reading -------------------------------------------------------- */
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

/* ---- writing -------------------------------------------------------- */
struct pt_elf_out_section {
    const char *name;
    uint32_t type;        /* SHT_PROGBITS, SHT_NOBITS */
    uint64_t flags;       /* SHF_ALLOC | SHF_EXECINSTR ... */
    uint64_t addr;
    const void *data;     /* NULL with SHT_NOBITS */
    uint64_t size;
    uint64_t align;
};

struct pt_elf_out_symbol {
    const char *name;
    uint16_t section;     /* index into the sections array, 0-based */
    uint64_t value;       /* address */
    uint64_t size;
};

/* Builds an ET_REL image holding the sections and, when n_syms > 0, a
 * .symtab of STT_FUNC symbols.  Returns a malloc'd image, or NULL with
 * errno ENOMEM. */
uint8_t *pt_elf_build(uint16_t machine, bool big_endian, const struct pt_elf_out_section *secs, size_t n_secs,
                      const struct pt_elf_out_symbol *syms, size_t n_syms, size_t *out_len);

#endif
