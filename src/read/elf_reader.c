/* SPDX-License-Identifier: MIT */
/* Read layer (tools and tests only): an ELF file's sections and symbols,
 * either class, read back with every offset checked. */
#include "read/elf_reader.h"

#include <string.h>

/* Where the two classes put what is read here (gABI "ELF Header",
 * "Sections", "Symbol Table"): header sizes, e_shoff and the fields after
 * it, and the address-sized fields of a section header and a symbol. */
struct layout {
    unsigned ehdr, shdr, sym, e_shoff, e_shentsize;
    unsigned sh_flags, sh_addr, sh_offset, sh_size, sh_entsize;
    unsigned st_value, st_size, st_info, st_shndx;
};
static const struct layout elf32 = {52, 40, 16, 32, 46, 8, 12, 16, 20, 36, 4, 8, 12, 14};
static const struct layout elf64 = {64, 64, 24, 40, 58, 8, 16, 24, 32, 56, 8, 16, 4, 6};

static const struct layout *layout_of(const struct pt_elf *e)
{
    return e->addr_size == 4 ? &elf32 : &elf64;
}

static uint64_t rd(const struct pt_elf *e, uint64_t off, unsigned n)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)e->data[off + (e->big_endian ? n - 1 - i : i)] << (8 * i);
    return v;
}

int pt_elf_open(struct pt_elf *e, const void *data, size_t len, const char **why)
{
    const uint8_t *d = data;
    memset(e, 0, sizeof *e);
    if (len < 16 || memcmp(d, "\177ELF", 4) != 0)
        return *why = "not an ELF file", -1;
    if (d[4] != 1 && d[4] != 2)
        return *why = "neither ELFCLASS32 nor ELFCLASS64", -1;
    if (d[5] != 1 && d[5] != 2)
        return *why = "bad ELF byte order", -1;
    e->data = d;
    e->len = len;
    e->addr_size = d[4] == 1 ? 4 : 8;
    e->big_endian = d[5] == 2;
    const struct layout *l = layout_of(e);
    if (len < l->ehdr)
        return *why = "ELF header cut short", -1;
    e->type = (uint16_t)rd(e, 16, 2);
    e->machine = (uint16_t)rd(e, 18, 2);
    e->shoff = rd(e, l->e_shoff, e->addr_size);
    e->shentsize = (uint16_t)rd(e, l->e_shentsize, 2);
    e->shnum = (uint16_t)rd(e, l->e_shentsize + 2, 2);
    e->shstrndx = (uint16_t)rd(e, l->e_shentsize + 4, 2);
    if (e->shentsize != l->shdr || e->shoff > len || (uint64_t)e->shnum * l->shdr > len - e->shoff ||
        e->shstrndx >= e->shnum)
        return *why = "section headers out of bounds", -1;
    return 0;
}

static int section_at(const struct pt_elf *e, unsigned i, struct pt_elf_section *s)
{
    const struct layout *l = layout_of(e);
    unsigned w = e->addr_size;
    uint64_t h = e->shoff + (uint64_t)i * l->shdr;
    uint64_t shstr = e->shoff + (uint64_t)e->shstrndx * l->shdr;
    uint64_t stroff = rd(e, shstr + l->sh_offset, w), strsize = rd(e, shstr + l->sh_size, w);
    uint32_t name = (uint32_t)rd(e, h, 4);
    if (stroff > e->len || strsize > e->len - stroff || name >= strsize ||
        !memchr(e->data + stroff + name, 0, strsize - name))
        return -1;
    s->name = (const char *)e->data + stroff + name;
    s->type = (uint32_t)rd(e, h + 4, 4);
    s->flags = rd(e, h + l->sh_flags, w);
    s->addr = rd(e, h + l->sh_addr, w);
    uint64_t off = rd(e, h + l->sh_offset, w);
    s->size = rd(e, h + l->sh_size, w);
    s->entsize = rd(e, h + l->sh_entsize, w);
    s->data = NULL;
    if (s->type != 8 /* SHT_NOBITS */) {
        if (off > e->len || s->size > e->len - off)
            return -1;
        s->data = e->data + off;
    }
    return 0;
}

int pt_elf_section(const struct pt_elf *e, const char *name, struct pt_elf_section *out)
{
    for (unsigned i = 1; i < e->shnum; i++) {
        struct pt_elf_section s;
        if (section_at(e, i, &s) == 0 && strcmp(s.name, name) == 0) {
            *out = s;
            return 0;
        }
    }
    return -1;
}

size_t pt_elf_symbol_count(const struct pt_elf *e, const struct pt_elf_section *symtab)
{
    return symtab->data ? (size_t)(symtab->size / layout_of(e)->sym) : 0;
}

int pt_elf_symbol(const struct pt_elf *e, const struct pt_elf_section *symtab, size_t i, struct pt_elf_symbol *out)
{
    const struct layout *l = layout_of(e);
    if (i >= pt_elf_symbol_count(e, symtab))
        return -1;
    uint64_t s = (uint64_t)(symtab->data - e->data) + (uint64_t)i * l->sym;
    out->name = (uint32_t)rd(e, s, 4);
    out->value = rd(e, s + l->st_value, e->addr_size);
    out->size = rd(e, s + l->st_size, e->addr_size);
    out->info = e->data[s + l->st_info];
    out->shndx = (uint16_t)rd(e, s + l->st_shndx, 2);
    return 0;
}
