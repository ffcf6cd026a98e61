/* SPDX-License-Identifier: MIT */
/* Read layer (tools and tests only): an ELF64 file's sections and
 * symbols, read back with every offset checked. */
#include "read/elf_reader.h"

#include <string.h>

enum { EHDR_SIZE = 64, SHDR_SIZE = 64 };

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
    if (len < EHDR_SIZE || memcmp(d, "\177ELF", 4) != 0)
        return *why = "not an ELF file", -1;
    if (d[4] != 2)
        return *why = "not ELF64", -1;
    if (d[5] != 1 && d[5] != 2)
        return *why = "bad ELF byte order", -1;
    e->data = d;
    e->len = len;
    e->big_endian = d[5] == 2;
    e->type = (uint16_t)rd(e, 16, 2);
    e->machine = (uint16_t)rd(e, 18, 2);
    e->shoff = rd(e, 40, 8);
    e->shentsize = (uint16_t)rd(e, 58, 2);
    e->shnum = (uint16_t)rd(e, 60, 2);
    e->shstrndx = (uint16_t)rd(e, 62, 2);
    if (e->shentsize != SHDR_SIZE || e->shoff > len || (uint64_t)e->shnum * SHDR_SIZE > len - e->shoff ||
        e->shstrndx >= e->shnum)
        return *why = "section headers out of bounds", -1;
    return 0;
}

static int section_at(const struct pt_elf *e, unsigned i, struct pt_elf_section *s)
{
    uint64_t h = e->shoff + (uint64_t)i * SHDR_SIZE;
    uint64_t shstr = e->shoff + (uint64_t)e->shstrndx * SHDR_SIZE;
    uint64_t stroff = rd(e, shstr + 24, 8), strsize = rd(e, shstr + 32, 8);
    uint32_t name = (uint32_t)rd(e, h, 4);
    if (stroff > e->len || strsize > e->len - stroff || name >= strsize ||
        !memchr(e->data + stroff + name, 0, strsize - name))
        return -1;
    s->name = (const char *)e->data + stroff + name;
    s->type = (uint32_t)rd(e, h + 4, 4);
    s->flags = rd(e, h + 8, 8);
    s->addr = rd(e, h + 16, 8);
    uint64_t off = rd(e, h + 24, 8);
    s->size = rd(e, h + 32, 8);
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
