/* SPDX-License-Identifier: MIT */
/* Emit layer: serializes the headers of a file-backed ELF arena (emit/elf_so.h).
 * Constants: System V gABI (ET_DYN 3, PT_LOAD 1, PT_NOTE 4, SHT_* values,
 * STB_GLOBAL 1 / STT_FUNC 2), PT_GNU_EH_FRAME 0x6474e550 (LSB 5.0),
 * NT_GNU_BUILD_ID 3 (binutils include/elf/common.h). */
#include "emit/elf_so.h"

#include "emit/bytebuf.h"
#include "emit/debug_line.h"
#include "emit/eh_frame.h"
#include "emit/elf_image.h"

#include <errno.h>
#include <string.h>

enum {
    N_PHDRS = 3,
    N_SHDRS = 11, /* null .note.gnu.build-id .text .eh_frame .eh_frame_hdr .symtab .strtab .shstrtab
                   * .debug_abbrev .debug_info .debug_line */
    ET_DYN = 3,
    PT_LOAD = 1,
    PT_NOTE = 4,
    PT_GNU_EH_FRAME = 0x6474e550,
    PF_X = 1,
    PF_R = 4,
    SHT_PROGBITS = 1,
    SHT_SYMTAB = 2,
    SHT_STRTAB = 3,
    SHT_NOTE = 7,
    SHF_ALLOC = 2,
    SHF_EXECINSTR = 4,
    NT_GNU_BUILD_ID = 3,
};

/* Section names, in section header order after the null one. */
static const char shstrtab[] = "\0.note.gnu.build-id\0.text\0.eh_frame\0.eh_frame_hdr\0.symtab\0.strtab\0.shstrtab"
                               "\0.debug_abbrev\0.debug_info\0.debug_line";
enum {
    NAME_NOTE = 1,
    NAME_TEXT = NAME_NOTE + 19,
    NAME_EH = NAME_TEXT + 6,
    NAME_HDR = NAME_EH + 10,
    NAME_SYMTAB = NAME_HDR + 14,
    NAME_STRTAB = NAME_SYMTAB + 8,
    NAME_SHSTRTAB = NAME_STRTAB + 8,
    NAME_ABBREV = NAME_SHSTRTAB + 10,
    NAME_INFO = NAME_ABBREV + 14,
    NAME_LINE = NAME_INFO + 12,
};
enum { SHNDX_NOTE = 1, SHNDX_EH = 3, SHNDX_HDR = 4, SHNDX_SYMTAB = 5, SHNDX_STRTAB = 6, SHNDX_SHSTRTAB = 7,
       SHNDX_ABBREV = 8, SHNDX_INFO = 9, SHNDX_LINE = 10 };
_Static_assert(PT_ELF_SHNDX_TEXT == 2, "section order");

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

int pt_elf_so_plan(struct pt_elf_so_plan *p, const struct pt_elf_so_geometry *g)
{
    memset(p, 0, sizeof *p);
    if ((g->addr_size != 4 && g->addr_size != 8) || !g->n_slots || !g->stride || !g->page || !g->code_align ||
        (g->code_align & (g->code_align - 1)) ||
        g->eh_rel < g->n_slots * g->stride ||
        g->eh_rel + g->cie_size + g->n_slots * g->fde_size + 4 > g->block_bytes) {
        errno = EINVAL;
        return -1;
    }
    p->g = *g;
    const struct pt_elf_class *c = p->cls = pt_elf_class(g->addr_size);
    p->sym_size = c->sym;
    p->note_off = c->ehdr + N_PHDRS * c->phdr;
    p->note_size = 12 + 4 + PT_ELF_BUILD_ID_SIZE; /* namesz descsz type "GNU\0" id */
    size_t align = g->code_align > 64 ? g->code_align : 64;
    p->text_off = round_up(p->note_off + p->note_size, align);
    p->text_size = g->n_slots * g->stride;
    p->eh_off = p->text_off + g->eh_rel;
    p->eh_size = g->cie_size + g->n_slots * g->fde_size + 4;
    p->hdr_off = round_up(p->text_off + g->block_bytes, 4);
    p->hdr_size = 12 + 8 * g->n_slots;
    p->load_size = p->hdr_off + p->hdr_size;
    p->map_size = round_up(p->load_size, g->page);
    p->shstr_off = p->map_size;
    p->shstr_size = sizeof shstrtab;
    p->shdr_off = round_up(p->shstr_off + p->shstr_size, c->addr);
    p->symtab_off = p->shdr_off + N_SHDRS * c->shdr;
    p->symtab_cap = (g->n_slots + 1) * c->sym;
    /* the DWARF rooms before .strtab, which stays last: a name past its
     * room grows the file */
    uint8_t abbrev[32];
    struct pt_buf ab;
    pt_buf_init_fixed(&ab, abbrev, sizeof abbrev, false);
    pt_dwarf_abbrev(&ab);
    p->abbrev_off = p->symtab_off + p->symtab_cap;
    p->abbrev_size = ab.len;
    p->info_off = p->abbrev_off + p->abbrev_size;
    p->info_cap = g->n_slots * PT_ELF_INFO_ROOM;
    p->line_off = p->info_off + p->info_cap;
    p->line_cap = g->n_slots * PT_ELF_LINE_ROOM;
    p->strtab_off = p->line_off + p->line_cap;
    p->file_size = round_up(p->strtab_off + g->n_slots * PT_ELF_STR_ROOM + 1, g->page);
    p->strtab_cap = p->file_size - p->strtab_off;
    p->symtab_size_at = p->shdr_off + SHNDX_SYMTAB * c->shdr + c->sh_size;
    p->strtab_size_at = p->shdr_off + SHNDX_STRTAB * c->shdr + c->sh_size;
    p->info_size_at = p->shdr_off + SHNDX_INFO * c->shdr + c->sh_size;
    p->line_size_at = p->shdr_off + SHNDX_LINE * c->shdr + c->sh_size;
    if (p->load_size > INT32_MAX) {
        errno = EFBIG;
        return -1;
    }
    return 0;
}

void pt_elf_so_head(uint8_t *out, const struct pt_elf_so_plan *p, const struct pt_arch *arch,
                    const uint8_t build_id[PT_ELF_BUILD_ID_SIZE])
{
    struct pt_buf b;
    memset(out, 0, p->text_off);
    pt_buf_init_fixed(&b, out, p->text_off, arch->big_endian);
    const struct pt_elf_class *c = p->cls;
    pt_elf_ehdr(&b, c, ET_DYN, arch->elf_machine, arch->elf_flags, c->ehdr, N_PHDRS, p->shdr_off, N_SHDRS,
                SHNDX_SHSTRTAB);
    /* one R+X PT_LOAD from vaddr 0: perf takes the load base from the
     * lowest mapping of the file, which must be this executable one;
     * p_vaddr == p_offset: perf maps file offsets 1:1 */
    pt_elf_phdr(&b, c, PT_LOAD, PF_R | PF_X, 0, 0, p->load_size, p->g.page);
    pt_elf_phdr(&b, c, PT_GNU_EH_FRAME, PF_R, p->hdr_off, p->hdr_off, p->hdr_size, 4);
    pt_elf_phdr(&b, c, PT_NOTE, PF_R, p->note_off, p->note_off, p->note_size, 4);
    pt_buf_u32(&b, 4);                    /* namesz: "GNU\0" */
    pt_buf_u32(&b, PT_ELF_BUILD_ID_SIZE); /* descsz */
    pt_buf_u32(&b, NT_GNU_BUILD_ID);
    pt_buf_put(&b, "GNU", 4);
    pt_buf_put(&b, build_id, PT_ELF_BUILD_ID_SIZE);
}

void pt_elf_so_eh_hdr(uint8_t *out, const struct pt_elf_so_plan *p, bool big_endian)
{
    /* Rows are written in slot order, which is pc order: no sort needed
     * (pt_eh_hdr's qsort of 8-byte rows would cost more than the arena). */
    struct pt_buf b;
    pt_buf_init_fixed(&b, out, p->hdr_size, big_endian);
    pt_buf_u8(&b, 1);
    pt_buf_u8(&b, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
    pt_buf_u8(&b, DW_EH_PE_udata4);
    pt_buf_u8(&b, DW_EH_PE_datarel | DW_EH_PE_sdata4);
    pt_buf_u32(&b, (uint32_t)((int64_t)p->eh_off - (int64_t)(p->hdr_off + 4)));
    pt_buf_u32(&b, (uint32_t)p->g.n_slots);
    for (size_t i = 0; i < p->g.n_slots; i++) {
        int64_t pc = (int64_t)(p->text_off + i * p->g.stride) - (int64_t)p->hdr_off;
        int64_t fde = (int64_t)(p->eh_off + p->g.cie_size + i * p->g.fde_size) - (int64_t)p->hdr_off;
        pt_buf_u32(&b, (uint32_t)pc);
        pt_buf_u32(&b, (uint32_t)fde);
    }
}

size_t pt_elf_so_tail_size(const struct pt_elf_so_plan *p)
{
    return p->strtab_off + 1 - p->shstr_off;
}

void pt_elf_so_tail(uint8_t *out, const struct pt_elf_so_plan *p, bool big_endian)
{
    size_t n = pt_elf_so_tail_size(p);
    memset(out, 0, n);
    memcpy(out, shstrtab, sizeof shstrtab);
    struct pt_buf b;
    const struct pt_elf_class *c = p->cls;
    pt_buf_init_fixed(&b, out + (p->shdr_off - p->shstr_off), N_SHDRS * c->shdr, big_endian);
    size_t code_align = p->g.code_align;
    pt_elf_shdr(&b, c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    pt_elf_shdr(&b, c, NAME_NOTE, SHT_NOTE, SHF_ALLOC, p->note_off, p->note_off, p->note_size, 0, 0, 4, 0);
    pt_elf_shdr(&b, c, NAME_TEXT, SHT_PROGBITS, SHF_ALLOC | SHF_EXECINSTR, p->text_off, p->text_off, p->text_size,
                0, 0, code_align, 0);
    pt_elf_shdr(&b, c, NAME_EH, SHT_PROGBITS, SHF_ALLOC, p->eh_off, p->eh_off, p->eh_size, 0, 0, 8, 0);
    pt_elf_shdr(&b, c, NAME_HDR, SHT_PROGBITS, SHF_ALLOC, p->hdr_off, p->hdr_off, p->hdr_size, 0, 0, 4, 0);
    /* sh_size of .symtab and .strtab grow as trampolines are named;
     * sh_info 1: every symbol after the null one is global */
    pt_elf_shdr(&b, c, NAME_SYMTAB, SHT_SYMTAB, 0, 0, p->symtab_off, c->sym, SHNDX_STRTAB, 1, c->addr, c->sym);
    pt_elf_shdr(&b, c, NAME_STRTAB, SHT_STRTAB, 0, 0, p->strtab_off, 1, 0, 0, 1, 0);
    pt_elf_shdr(&b, c, NAME_SHSTRTAB, SHT_STRTAB, 0, 0, p->shstr_off, p->shstr_size, 0, 0, 1, 0);
    /* sh_size of .debug_info and .debug_line grow as slots get a line */
    pt_elf_shdr(&b, c, NAME_ABBREV, SHT_PROGBITS, 0, 0, p->abbrev_off, p->abbrev_size, 0, 0, 1, 0);
    pt_elf_shdr(&b, c, NAME_INFO, SHT_PROGBITS, 0, 0, p->info_off, 0, 0, 0, 1, 0);
    pt_elf_shdr(&b, c, NAME_LINE, SHT_PROGBITS, 0, 0, p->line_off, 0, 0, 0, 1, 0);
    struct pt_buf ab;
    pt_buf_init_fixed(&ab, out + (p->abbrev_off - p->shstr_off), p->abbrev_size, big_endian);
    pt_dwarf_abbrev(&ab);
    /* the null symbol is all zeros, and so is the strtab's first byte */
}

int pt_elf_so_line_unit(const struct pt_elf_so_plan *p, uint8_t *info, size_t *info_len, uint8_t *line,
                        size_t *line_len, size_t slot, size_t size, const char *file, unsigned line_no,
                        bool big_endian)
{
    if (slot >= p->g.n_slots) {
        errno = EINVAL;
        return -1;
    }
    /* fixed buffers over the rooms, already *len bytes long: the unit's
     * stmt_list is its program's offset in the section */
    struct pt_buf bi, bl;
    pt_buf_init_fixed(&bi, info, p->info_cap, big_endian);
    pt_buf_init_fixed(&bl, line, p->line_cap, big_endian);
    bi.len = *info_len;
    bl.len = *line_len;
    if (pt_dwarf_line_unit(&bi, &bl, p->cls->addr, p->text_off + slot * p->g.stride, size, file, line_no) < 0) {
        if (bi.failed || bl.failed)
            errno = ENOSPC; /* past the room: nothing counted */
        return -1;
    }
    *info_len = bi.len;
    *line_len = bl.len;
    return 0;
}

void pt_elf_so_symbol(uint8_t *out, const struct pt_elf_so_plan *p, uint32_t name_off, uint64_t value, uint64_t size,
                      bool big_endian)
{
    struct pt_buf b;
    pt_buf_init_fixed(&b, out, p->sym_size, big_endian);
    pt_elf_sym(&b, p->cls, name_off, (1 << 4) | 2 /* STB_GLOBAL, STT_FUNC */, PT_ELF_SHNDX_TEXT, value, size);
}
