/* SPDX-License-Identifier: MIT */
/* Emit layer: small ELF images written in memory (the gdb JIT entries,
 * `perftramp arch --raw`), and the ELF header, section header, program
 * header and symbol writers, for either class. */
#include "emit/elf_image.h"

#include "arch/table.h"
#include "emit/bytebuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    SHT_PROGBITS = 1,
    SHT_SYMTAB = 2,
    SHT_STRTAB = 3,
    ET_REL = 1,
};

/* gABI, "ELF Header", "Sections", "Symbol Table", "Program Header". */
static const struct pt_elf_class elf32 = {.addr = 4, .ident = 1, .ehdr = 52, .phdr = 32, .shdr = 40, .sym = 16,
                                          .e_shoff = 32, .sh_size = 20, .st_value = 4};
static const struct pt_elf_class elf64 = {.addr = 8, .ident = 2, .ehdr = 64, .phdr = 56, .shdr = 64, .sym = 24,
                                          .e_shoff = 40, .sh_size = 32, .st_value = 8};

const struct pt_elf_class *pt_elf_class(unsigned addr_size)
{
    return addr_size == 4 ? &elf32 : &elf64;
}

/* Elf32_Shdr and Elf64_Shdr: the same fields in the same order, the
 * address-sized ones (flags, addr, offset, size, addralign, entsize)
 * 4 or 8 bytes. */
void pt_elf_shdr(struct pt_buf *b, const struct pt_elf_class *c, uint32_t name, uint32_t type, uint64_t flags,
                 uint64_t addr, uint64_t off, uint64_t size, uint32_t link, uint32_t info, uint64_t align,
                 uint64_t entsize)
{
    pt_buf_u32(b, name);
    pt_buf_u32(b, type);
    pt_buf_addr(b, flags, c->addr);
    pt_buf_addr(b, addr, c->addr);
    pt_buf_addr(b, off, c->addr);
    pt_buf_addr(b, size, c->addr);
    pt_buf_u32(b, link);
    pt_buf_u32(b, info);
    pt_buf_addr(b, align, c->addr);
    pt_buf_addr(b, entsize, c->addr);
}

/* Elf64_Phdr puts p_flags second, for alignment; Elf32_Phdr puts it
 * seventh. */
void pt_elf_phdr(struct pt_buf *b, const struct pt_elf_class *c, uint32_t type, uint32_t flags, uint64_t off,
                 uint64_t vaddr, uint64_t size, uint64_t align)
{
    pt_buf_u32(b, type);
    if (c->addr == 8)
        pt_buf_u32(b, flags);
    pt_buf_addr(b, off, c->addr);   /* p_offset */
    pt_buf_addr(b, vaddr, c->addr); /* p_vaddr */
    pt_buf_addr(b, vaddr, c->addr); /* p_paddr */
    pt_buf_addr(b, size, c->addr);  /* p_filesz */
    pt_buf_addr(b, size, c->addr);  /* p_memsz */
    if (c->addr == 4)
        pt_buf_u32(b, flags);
    pt_buf_addr(b, align, c->addr);
}

/* Elf64_Sym: name, info, other, shndx, value, size; Elf32_Sym: name,
 * value, size, info, other, shndx. */
void pt_elf_sym(struct pt_buf *b, const struct pt_elf_class *c, uint32_t name, uint8_t info, uint16_t shndx,
                uint64_t value, uint64_t size)
{
    pt_buf_u32(b, name);
    if (c->addr == 4) {
        pt_buf_u32(b, (uint32_t)value);
        pt_buf_u32(b, (uint32_t)size);
    }
    pt_buf_u8(b, info);
    pt_buf_u8(b, 0); /* STV_DEFAULT */
    pt_buf_u16(b, shndx);
    if (c->addr == 8) {
        pt_buf_u64(b, value);
        pt_buf_u64(b, size);
    }
}

static void align_to(struct pt_buf *b, size_t a)
{
    /* a failed buffer no longer grows: stop instead of spinning */
    while (!b->failed && b->len % a)
        pt_buf_u8(b, 0);
}

uint8_t *pt_elf_build(const struct pt_arch *a, const struct pt_elf_out_section *secs, size_t n_secs,
                      const struct pt_elf_out_symbol *syms, size_t n_syms, size_t *out_len)
{
    const struct pt_elf_class *c = pt_elf_class(a->addr_size);
    bool big_endian = a->big_endian;
    struct pt_buf b, shstr, str;
    pt_buf_init(&b, big_endian);
    pt_buf_init(&shstr, big_endian);
    pt_buf_init(&str, big_endian);
    size_t nsec_total = 1 + n_secs + (n_syms ? 2 : 0) + 1; /* null, user, symtab+strtab, shstrtab */
    uint64_t *offs = calloc(n_secs + 3, sizeof *offs);
    uint32_t *names = calloc(n_secs + 3, sizeof *names);
    if (!offs || !names)
        goto oom;
    /* one allocation for the image, not a realloc per doubling (bench:
     * PERFTRAMP_GDB rebuilds a chunk's image on every wrap) */
    size_t guess = c->ehdr + nsec_total * c->shdr + (n_syms + 1) * c->sym + 64;
    for (size_t i = 0; i < n_secs; i++)
        guess += (secs[i].data ? secs[i].size : 0) + 16;
    pt_buf_reserve(&b, guess);

    /* ELF header, patched later for e_shoff */
    pt_elf_ehdr(&b, c, ET_REL, a->elf_machine, 0, 0, 0, 0, (uint16_t)nsec_total, (uint16_t)(nsec_total - 1));

    pt_buf_u8(&shstr, 0);
    for (size_t i = 0; i < n_secs; i++) {
        names[i] = (uint32_t)shstr.len;
        pt_buf_put(&shstr, secs[i].name, strlen(secs[i].name) + 1);
        if (secs[i].data) {
            align_to(&b, secs[i].align ? secs[i].align : 1);
            offs[i] = b.len;
            pt_buf_put(&b, secs[i].data, secs[i].size);
        } else {
            offs[i] = b.len;
        }
    }
    size_t symtab_off = 0, strtab_off = 0, symtab_len = 0;
    if (n_syms) {
        names[n_secs] = (uint32_t)shstr.len;
        pt_buf_put(&shstr, ".symtab", 8);
        names[n_secs + 1] = (uint32_t)shstr.len;
        pt_buf_put(&shstr, ".strtab", 8);
        pt_buf_u8(&str, 0);
        align_to(&b, c->addr);
        symtab_off = b.len;
        for (int k = 0; k < c->sym; k++)
            pt_buf_u8(&b, 0); /* the null symbol */
        for (size_t i = 0; i < n_syms; i++) {
            uint32_t name = (uint32_t)str.len;
            pt_buf_put(&str, syms[i].name, strlen(syms[i].name) + 1);
            pt_elf_sym(&b, c, name, (1 << 4) | 2 /* STB_GLOBAL, STT_FUNC */, (uint16_t)(syms[i].section + 1),
                       syms[i].value, syms[i].size);
        }
        symtab_len = b.len - symtab_off;
        strtab_off = b.len;
        pt_buf_put(&b, str.data, str.len);
    }
    names[n_secs + 2] = (uint32_t)shstr.len;
    pt_buf_put(&shstr, ".shstrtab", 10);
    size_t shstr_off = b.len;
    pt_buf_put(&b, shstr.data, shstr.len);

    align_to(&b, c->addr);
    size_t shoff = b.len;
    pt_elf_shdr(&b, c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    for (size_t i = 0; i < n_secs; i++)
        pt_elf_shdr(&b, c, names[i], secs[i].type, secs[i].flags, secs[i].addr, offs[i], secs[i].size, 0, 0,
                    secs[i].align ? secs[i].align : 1, 0);
    if (n_syms) {
        uint32_t strtab_index = (uint32_t)(1 + n_secs + 1);
        pt_elf_shdr(&b, c, names[n_secs], SHT_SYMTAB, 0, 0, symtab_off, symtab_len, strtab_index, 1, c->addr,
                    c->sym);
        pt_elf_shdr(&b, c, names[n_secs + 1], SHT_STRTAB, 0, 0, strtab_off, str.len, 0, 0, 1, 0);
    }
    pt_elf_shdr(&b, c, names[n_secs + 2], SHT_STRTAB, 0, 0, shstr_off, shstr.len, 0, 0, 1, 0);
    if (!b.failed)
        pt_store_addr(b.data + c->e_shoff, shoff, c->addr, big_endian);
    if (b.failed || shstr.failed || str.failed)
        goto oom;
    free(offs);
    free(names);
    pt_buf_free(&shstr);
    pt_buf_free(&str);
    *out_len = b.len;
    return b.data;
oom:
    free(offs);
    free(names);
    pt_buf_free(&b);
    pt_buf_free(&shstr);
    pt_buf_free(&str);
    errno = ENOMEM;
    return NULL;
}

void pt_elf_ehdr(struct pt_buf *b, const struct pt_elf_class *c, uint16_t type, uint16_t machine, uint32_t flags,
                 uint64_t phoff, uint16_t phnum, uint64_t shoff, uint16_t shnum, uint16_t shstrndx)
{
    const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', c->ident, b->big_endian ? 2 : 1, 1 /* EV_CURRENT */};
    pt_buf_put(b, ident, 16);
    pt_buf_u16(b, type);
    pt_buf_u16(b, machine);
    pt_buf_u32(b, 1); /* EV_CURRENT */
    pt_buf_addr(b, 0, c->addr); /* e_entry */
    pt_buf_addr(b, phoff, c->addr);
    pt_buf_addr(b, shoff, c->addr);
    pt_buf_u32(b, flags);
    pt_buf_u16(b, c->ehdr);
    pt_buf_u16(b, phnum ? c->phdr : 0);
    pt_buf_u16(b, phnum);
    pt_buf_u16(b, c->shdr);
    pt_buf_u16(b, shnum);
    pt_buf_u16(b, shstrndx);
}
