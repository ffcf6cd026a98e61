/* SPDX-License-Identifier: MIT */
/* Emit layer: small ELF64 images written in memory (the gdb JIT entries,
 * `perftramp arch --raw`), and the ELF header and section header writers. */
#include "emit/elf_image.h"

#include "emit/bytebuf.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    EHDR_SIZE = 64,
    SHDR_SIZE = 64,
    SYM_SIZE = 24,
    SHT_PROGBITS = 1,
    SHT_SYMTAB = 2,
    SHT_STRTAB = 3,
    ET_REL = 1,
};

/* One Elf64_Shdr, in the buffer's byte order (ELF gABI, "Section Header"). */
void pt_elf_shdr64(struct pt_buf *b, uint32_t name, uint32_t type, uint64_t flags, uint64_t addr, uint64_t off,
                    uint64_t size, uint32_t link, uint32_t info, uint64_t align, uint64_t entsize)
{
    pt_buf_u32(b, name);
    pt_buf_u32(b, type);
    pt_buf_u64(b, flags);
    pt_buf_u64(b, addr);
    pt_buf_u64(b, off);
    pt_buf_u64(b, size);
    pt_buf_u32(b, link);
    pt_buf_u32(b, info);
    pt_buf_u64(b, align);
    pt_buf_u64(b, entsize);
}

static void align_to(struct pt_buf *b, size_t a)
{
    /* a failed buffer no longer grows: stop instead of spinning */
    while (!b->failed && b->len % a)
        pt_buf_u8(b, 0);
}

uint8_t *pt_elf_build(uint16_t machine, bool big_endian, const struct pt_elf_out_section *secs, size_t n_secs,
                      const struct pt_elf_out_symbol *syms, size_t n_syms, size_t *out_len)
{
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
    size_t guess = EHDR_SIZE + nsec_total * SHDR_SIZE + (n_syms + 1) * SYM_SIZE + 64;
    for (size_t i = 0; i < n_secs; i++)
        guess += (secs[i].data ? secs[i].size : 0) + 16;
    pt_buf_reserve(&b, guess);

    /* ELF header, patched later for e_shoff */
    pt_elf_ehdr64(&b, big_endian, ET_REL, machine, 0, 0, 0, 0, (uint16_t)nsec_total, (uint16_t)(nsec_total - 1));

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
        align_to(&b, 8);
        symtab_off = b.len;
        for (int k = 0; k < SYM_SIZE; k++)
            pt_buf_u8(&b, 0); /* the null symbol */
        for (size_t i = 0; i < n_syms; i++) {
            pt_buf_u32(&b, (uint32_t)str.len);
            pt_buf_put(&str, syms[i].name, strlen(syms[i].name) + 1);
            pt_buf_u8(&b, (1 << 4) | 2); /* STB_GLOBAL, STT_FUNC */
            pt_buf_u8(&b, 0);            /* STV_DEFAULT */
            pt_buf_u16(&b, (uint16_t)(syms[i].section + 1));
            pt_buf_u64(&b, syms[i].value);
            pt_buf_u64(&b, syms[i].size);
        }
        symtab_len = b.len - symtab_off;
        strtab_off = b.len;
        pt_buf_put(&b, str.data, str.len);
    }
    names[n_secs + 2] = (uint32_t)shstr.len;
    pt_buf_put(&shstr, ".shstrtab", 10);
    size_t shstr_off = b.len;
    pt_buf_put(&b, shstr.data, shstr.len);

    align_to(&b, 8);
    size_t shoff = b.len;
    pt_elf_shdr64(&b, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    for (size_t i = 0; i < n_secs; i++)
        pt_elf_shdr64(&b, names[i], secs[i].type, secs[i].flags, secs[i].addr, offs[i], secs[i].size, 0, 0,
             secs[i].align ? secs[i].align : 1, 0);
    if (n_syms) {
        uint32_t strtab_index = (uint32_t)(1 + n_secs + 1);
        pt_elf_shdr64(&b, names[n_secs], SHT_SYMTAB, 0, 0, symtab_off, symtab_len, strtab_index, 1, 8, SYM_SIZE);
        pt_elf_shdr64(&b, names[n_secs + 1], SHT_STRTAB, 0, 0, strtab_off, str.len, 0, 0, 1, 0);
    }
    pt_elf_shdr64(&b, names[n_secs + 2], SHT_STRTAB, 0, 0, shstr_off, shstr.len, 0, 0, 1, 0);
    if (!b.failed) {
        uint8_t off8[8];
        pt_store_u64(off8, shoff, big_endian);
        memcpy(b.data + 40, off8, 8);
    }
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

void pt_elf_ehdr64(struct pt_buf *b, bool big_endian, uint16_t type, uint16_t machine, uint32_t flags,
                   uint64_t phoff, uint16_t phnum, uint64_t shoff, uint16_t shnum, uint16_t shstrndx)
{
    const uint8_t ident[16] = {0x7f, 'E', 'L', 'F', 2 /* ELFCLASS64 */, big_endian ? 2 : 1, 1 /* EV_CURRENT */};
    pt_buf_put(b, ident, 16);
    pt_buf_u16(b, type);
    pt_buf_u16(b, machine);
    pt_buf_u32(b, 1); /* EV_CURRENT */
    pt_buf_u64(b, 0); /* e_entry */
    pt_buf_u64(b, phoff);
    pt_buf_u64(b, shoff);
    pt_buf_u32(b, flags);
    pt_buf_u16(b, EHDR_SIZE);
    pt_buf_u16(b, phnum ? 56 : 0); /* e_phentsize: sizeof(Elf64_Phdr) */
    pt_buf_u16(b, phnum);
    pt_buf_u16(b, SHDR_SIZE);
    pt_buf_u16(b, shnum);
    pt_buf_u16(b, shstrndx);
}
