/* SPDX-License-Identifier: MIT */
/* Minimal ELF64 writing: wraps emitted code and .eh_frame in an object
 * that readelf, objdump and gdb (JIT interface) can read.  The reader
 * lives in read/elf_reader.h (tests and tools only).
 * Format: System V gABI, "Object Files" chapter. */
#ifndef PERFTRAMP_ELF_IMAGE_H
#define PERFTRAMP_ELF_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

struct pt_buf;
/* Appends one Elf64_Shdr to b (also used by emit/elf_so.c's arena files). */
void pt_elf_shdr64(struct pt_buf *b, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t off,
                   uint64_t size, uint32_t link, uint32_t info, uint64_t align, uint64_t entsize);

/* Appends an Elf64_Ehdr to b: e_ident for ELFCLASS64, the byte order,
 * EV_CURRENT; e_phentsize 56 when there are program headers, else 0;
 * e_entry 0 (also used by emit/elf_so.c and outputs/gdb_chunk.c). */
void pt_elf_ehdr64(struct pt_buf *b, bool big_endian, uint16_t type, uint16_t machine, uint32_t flags,
                   uint64_t phoff, uint16_t phnum, uint64_t shoff, uint16_t shnum, uint16_t shstrndx);

#endif
