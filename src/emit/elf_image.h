/* SPDX-License-Identifier: MIT */
/* Minimal ELF writing, ELFCLASS32 or ELFCLASS64 as the table's .addr_size
 * says: wraps emitted code and .eh_frame in an object that readelf,
 * objdump and gdb (JIT interface) can read.  The reader lives in
 * read/elf_reader.h (tests and tools only).
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

/* What the two ELF classes lay out differently (gABI: "ELF Header",
 * "Sections", "Symbol Table", "Program Header"): the size of an address
 * (Elf32_Addr/Off/Word-sized fields against Elf64_Addr/Off/Xword), the
 * size of each header, and where the fields that are written after the
 * fact lie.  Elf32_Sym and Elf32_Phdr also order their fields otherwise:
 * pt_elf_sym and pt_elf_phdr know it. */
struct pt_elf_class {
    uint8_t addr;     /* 4 (ELFCLASS32) or 8 (ELFCLASS64): the table's .addr_size */
    uint8_t ident;    /* e_ident[EI_CLASS]: 1 or 2 */
    uint8_t ehdr;     /* sizeof(Elf*_Ehdr): 52, 64 */
    uint8_t phdr;     /* sizeof(Elf*_Phdr): 32, 56 */
    uint8_t shdr;     /* sizeof(Elf*_Shdr): 40, 64 */
    uint8_t sym;      /* sizeof(Elf*_Sym): 16, 24 */
    uint8_t e_shoff;  /* offset of e_shoff in the ELF header: 32, 40 */
    uint8_t sh_size;  /* offset of sh_size in a section header: 20, 32 */
    uint8_t st_value; /* offset of st_value in a symbol (st_size follows it): 4, 8 */
};
#define PT_ELF_SYM_MAX 24 /* the larger Elf*_Sym, for buffers */
/* The class of addresses of `addr_size` bytes (4 or 8; any other: 8). */
const struct pt_elf_class *pt_elf_class(unsigned addr_size);

struct pt_arch;
/* Builds an ET_REL image for the table `a` (its e_machine, byte order and
 * class) holding the sections and, when n_syms > 0, a .symtab of STT_FUNC
 * symbols.  Returns a malloc'd image, or NULL with errno ENOMEM. */
uint8_t *pt_elf_build(const struct pt_arch *a, const struct pt_elf_out_section *secs, size_t n_secs,
                      const struct pt_elf_out_symbol *syms, size_t n_syms, size_t *out_len);

struct pt_buf;
/* Appends one section header to b (also used by emit/elf_so.c's arena
 * files and outputs/gdb_chunk.c), in b's byte order. */
void pt_elf_shdr(struct pt_buf *b, const struct pt_elf_class *c, uint32_t name, uint32_t type, uint64_t flags,
                 uint64_t addr, uint64_t off, uint64_t size, uint32_t link, uint32_t info, uint64_t align,
                 uint64_t entsize);

/* Appends an ELF header to b: e_ident for the class, the byte order,
 * EV_CURRENT; e_phentsize c->phdr when there are program headers, else 0;
 * e_entry 0 (also used by emit/elf_so.c and outputs/gdb_chunk.c). */
void pt_elf_ehdr(struct pt_buf *b, const struct pt_elf_class *c, uint16_t type, uint16_t machine, uint32_t flags,
                 uint64_t phoff, uint16_t phnum, uint64_t shoff, uint16_t shnum, uint16_t shstrndx);

/* Appends one program header (emit/elf_so.c). */
void pt_elf_phdr(struct pt_buf *b, const struct pt_elf_class *c, uint32_t type, uint32_t flags, uint64_t off,
                 uint64_t vaddr, uint64_t size, uint64_t align);

/* Appends one symbol: st_name, st_info, st_other 0 (STV_DEFAULT), st_shndx,
 * st_value, st_size, in the class's order. */
void pt_elf_sym(struct pt_buf *b, const struct pt_elf_class *c, uint32_t name, uint8_t info, uint16_t shndx,
                uint64_t value, uint64_t size);

#endif
