/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: the in-memory ELF of one chunk of slots,
 * built once with room for every slot and patched per wrap. */
#include "config.h"

#include "outputs/gdb_chunk.h"

#include "emit/bytebuf.h"
#include "emit/eh_frame.h"
#include "emit/elf_image.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    N_SECS = 6,    /* null .text .eh_frame .symtab .strtab .shstrtab */
    SHT_PROGBITS = 1,
    SHT_SYMTAB = 2,
    SHT_STRTAB = 3,
    SHT_NOBITS = 8,
    SHF_ALLOC = 0x2,
    SHF_EXECINSTR = 0x4,
    ET_REL = 1,
    STR_PER_SLOT = 32, /* name room per slot before a rebuild */
};

static const char shstrtab[] = "\0.text\0.eh_frame\0.symtab\0.strtab\0.shstrtab";
enum { SH_TEXT = 1, SH_EH = 7, SH_SYMTAB = 17, SH_STRTAB = 25, SH_SHSTRTAB = 33 };

static void align_to(struct pt_buf *b, size_t a)
{
    while (!b->failed && b->len % a)
        pt_buf_u8(b, 0);
}

/* The lowest named slot of the chunk: the one every unnamed slot's FDE
 * stands in for (0 when none is named). */
static size_t stand_in_of(uint64_t named)
{
    return named ? (size_t)__builtin_ctzll(named) : 0;
}

/* Points FDE j of the image at the code of slot `to`: one aligned 32-bit
 * store of its pcrel pc_begin, so a debugger reading at any instruction
 * sees the old FDE or the new one. */
static void fde_point(struct pt_gdb_image *im, size_t j, size_t to)
{
    size_t at = im->fde0_off + j * im->fde_len + 8; /* pc_begin, in the image */
    int64_t rel = (int64_t)(im->text + to * im->stride) - (int64_t)(im->eh_addr + (at - im->eh_off));
    uint8_t v[4];
    uint32_t w;
    pt_store_u32(v, (uint32_t)rel, im->big_endian);
    memcpy(&w, v, 4);
    __atomic_store_n((uint32_t *)(void *)(im->data + at), w, __ATOMIC_RELEASE);
}

/* The chunk's .eh_frame: one CIE, then an FDE per slot, for a section
 * placed at eh_addr.  An unnamed slot's FDE is a copy of the stand-in's
 * (it covers the stand-in's code): lldb makes a symbol
 * (___lldb_unnamed_symbolN) from every FDE that starts where no symbol
 * does, and gdb and lldb take identical FDEs for one range as one.  A wrap
 * points its slot's FDE at its own code (fde_point).  The FDEs differ only
 * in their CIE pointer (+4) and pcrel pc_begin (+8), both u32 (see
 * pt_eh_fde): emit the first, copy and patch the rest. */
static void chunk_eh_frame(struct pt_buf *eh, const struct pt_slots *sl, uintptr_t text, uintptr_t eh_addr,
                           size_t n, uint64_t named, const uint8_t *program, size_t program_len,
                           size_t *fde0_out, size_t *fde_len_out)
{
    size_t cie = pt_eh_cie(eh, sl->arch);
    size_t fde0 = eh->len;
    size_t stand_in = stand_in_of(named);
    pt_eh_fde(eh, cie, (int64_t)(text - eh_addr), sl->layout->size, program, program_len);
    size_t fde_len = eh->len - fde0;
    if (n > 1 && pt_buf_reserve(eh, (n - 1) * fde_len)) {
        for (size_t j = 1; j < n; j++) {
            size_t at = fde0 + j * fde_len;
            size_t covers = named >> j & 1 ? j : stand_in;
            int64_t code_rel = (int64_t)(text + covers * sl->stride - eh_addr);
            memcpy(eh->data + at, eh->data + fde0, fde_len);
            pt_store_u32(eh->data + at + 4, (uint32_t)(at + 4 - cie), eh->big_endian);
            pt_store_u32(eh->data + at + 8, (uint32_t)(code_rel - (int64_t)(at + 8)), eh->big_endian);
        }
        eh->len += (n - 1) * fde_len;
    }
    *fde0_out = fde0;
    *fde_len_out = fde_len;
    if (n > 0 && !(named & 1) && !eh->failed) /* FDE 0 was written for slot 0 */
        pt_store_u32(eh->data + fde0 + 8,
                     (uint32_t)((int64_t)(text + stand_in * sl->stride - eh_addr) - (int64_t)(fde0 + 8)),
                     eh->big_endian);
    pt_eh_terminator(eh);
}

int pt_gdb_image_build(struct pt_gdb_image *im, const struct pt_slots *sl, const struct pt_arena *a, size_t first,
                       uint64_t named, const uint8_t *program, size_t program_len, size_t min_str)
{
    bool be = sl->arch->big_endian;
    const struct pt_elf_class *c = pt_elf_class(sl->arch->addr_size);
    size_t end = first + PT_GDB_CHUNK_SLOTS;
    if (end > a->n_slots)
        end = a->n_slots;
    size_t n = end - first;
    uintptr_t text = pt_slot_x(sl, a, first);
    /* read by gdb at eh_addr: inside the arena's in-process .eh_frame
     * area, where no code lives */
    uintptr_t eh_addr = a->x + a->eh_off + first * sl->fde_size;

    size_t str_cap = PT_GDB_CHUNK_SLOTS * STR_PER_SLOT;
    size_t need = 1;
    for (size_t j = 0; j < n; j++)
        if (named >> j & 1)
            need += strlen(a->names[first + j]) + 1;
    if (need < min_str)
        need = min_str;
    while (str_cap < 2 * need)
        str_cap *= 2;

    struct pt_buf b;
    pt_buf_init(&b, be);
    pt_buf_reserve(&b, c->ehdr + 64 + n * (sl->fde_size + 16) + (PT_GDB_CHUNK_SLOTS + 1) * c->sym + str_cap +
                           sizeof shstrtab + N_SECS * c->shdr + 64);
    /* e_shoff patched below */
    pt_elf_ehdr(&b, c, ET_REL, sl->arch->elf_machine, sl->arch->elf_flags, 0, 0, 0, N_SECS, N_SECS - 1);

    align_to(&b, 8);
    size_t eh_off = b.len;
    struct pt_buf eh;
    pt_buf_init(&eh, be);
    pt_buf_reserve(&eh, 64 + n * (sl->fde_size + 16)); /* one allocation, no realloc per doubling */
    size_t fde0, fde_len;
    chunk_eh_frame(&eh, sl, text, eh_addr, n, named, program, program_len, &fde0, &fde_len);
    pt_buf_put(&b, eh.data, eh.len);
    size_t eh_len = eh.len;
    bool eh_failed = eh.failed;
    pt_buf_free(&eh);

    align_to(&b, c->addr);
    size_t symtab_off = b.len;
    size_t str_off = symtab_off + (PT_GDB_CHUNK_SLOTS + 1) * c->sym;
    size_t shstr_off = str_off + str_cap;
    size_t shoff = (shstr_off + sizeof shstrtab + c->addr - 1) & ~(size_t)(c->addr - 1);
    if (pt_buf_reserve(&b, shoff - b.len)) {
        memset(b.data + b.len, 0, shoff - b.len);
        b.len = shoff;
    }
    pt_elf_shdr(&b, c, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0);
    pt_elf_shdr(&b, c, SH_TEXT, SHT_NOBITS, SHF_ALLOC | SHF_EXECINSTR, text, eh_off, n * sl->stride, 0, 0,
                sl->arch->code_align, 0);
    pt_elf_shdr(&b, c, SH_EH, SHT_PROGBITS, SHF_ALLOC, eh_addr, eh_off, eh_len, 0, 0, 8, 0);
    size_t symtab_size_at = b.len + c->sh_size;
    pt_elf_shdr(&b, c, SH_SYMTAB, SHT_SYMTAB, 0, 0, symtab_off, c->sym, 4 /* .strtab */, 1, c->addr, c->sym);
    pt_elf_shdr(&b, c, SH_STRTAB, SHT_STRTAB, 0, 0, str_off, str_cap, 0, 0, 1, 0);
    pt_elf_shdr(&b, c, SH_SHSTRTAB, SHT_STRTAB, 0, 0, shstr_off, sizeof shstrtab, 0, 0, 1, 0);
    if (b.failed || eh_failed) {
        pt_buf_free(&b);
        errno = ENOMEM;
        return -1;
    }
    memcpy(b.data + shstr_off, shstrtab, sizeof shstrtab);
    pt_store_addr(b.data + c->e_shoff, shoff, c->addr, be);

    *im = (struct pt_gdb_image){.data = b.data, .len = b.len, .big_endian = be, .cls = c, .symtab_off = symtab_off,
                                .strtab_off = str_off, .str_used = 1, .str_cap = str_cap,
                                .symtab_size_at = symtab_size_at, .eh_off = eh_off, .fde0_off = eh_off + fde0,
                                .fde_len = fde_len, .text = text, .eh_addr = eh_addr, .stride = sl->stride,
                                .n_fdes = n};
    for (size_t j = 0; j < n; j++)
        if (named >> j & 1)
            pt_gdb_image_add(im, j, sl->stride, sl->layout->size, a->names[first + j]); /* fits: 2 * need */
    return 0;
}

/* The count, stored last: a release store, so the compiler keeps every
 * write of the symbol before it (a debugger stops us at any instruction). */
static void publish_count(struct pt_gdb_image *im)
{
    const struct pt_elf_class *c = im->cls;
    uint8_t size[8];
    pt_store_addr(size, (uint64_t)(im->n_syms + 1) * c->sym, c->addr, im->big_endian);
    if (c->addr == 8) {
        uint64_t v;
        memcpy(&v, size, 8);
        __atomic_store_n((uint64_t *)(void *)(im->data + im->symtab_size_at), v, __ATOMIC_RELEASE);
    } else {
        uint32_t v;
        memcpy(&v, size, 4);
        __atomic_store_n((uint32_t *)(void *)(im->data + im->symtab_size_at), v, __ATOMIC_RELEASE);
    }
}

int pt_gdb_image_add(struct pt_gdb_image *im, size_t j, size_t stride, size_t size, const char *name)
{
    size_t len = strlen(name) + 1;
    if (im->str_used + len > im->str_cap || im->n_syms == PT_GDB_CHUNK_SLOTS)
        return -1;
    if (j < im->n_fdes)
        fde_point(im, j, j); /* unwinding first: the code may run already (a replay) */
    memcpy(im->data + im->strtab_off + im->str_used, name, len);
    struct pt_buf sym;
    pt_buf_init_fixed(&sym, im->data + im->symtab_off + (im->n_syms + 1) * im->cls->sym, im->cls->sym,
                      im->big_endian);
    /* STB_GLOBAL, STT_FUNC in .text (section 1), st_value: the offset in .text */
    pt_elf_sym(&sym, im->cls, (uint32_t)im->str_used, (1 << 4) | 2, 1, (uint64_t)(j * stride), (uint64_t)size);
    im->str_used += len;
    im->n_syms++;
    publish_count(im);
    return 0;
}

/* Every unnamed slot's FDE at the stand-in of `named`; a slot that was
 * the stand-in has copies that would otherwise start where no symbol is. */
static void fdes_stand_in(struct pt_gdb_image *im, size_t j, uint64_t named)
{
    size_t stand_in = stand_in_of(named);
    if (!named || j >= im->n_fdes)
        return;
    if (j > stand_in) {
        fde_point(im, j, stand_in);
        return;
    }
    for (size_t k = 0; k < im->n_fdes; k++)
        if (!(named >> k & 1))
            fde_point(im, k, stand_in);
}

void pt_gdb_image_remove(struct pt_gdb_image *im, size_t j, size_t stride, uint64_t named)
{
    const struct pt_elf_class *c = im->cls;
    uint8_t off[8];
    pt_store_addr(off, (uint64_t)(j * stride), c->addr, im->big_endian);
    for (size_t k = 1; k <= im->n_syms; k++) {
        uint8_t *s = im->data + im->symtab_off + k * c->sym;
        if (memcmp(s + c->st_value, off, c->addr) != 0)
            continue;
        /* the last symbol takes its place (its name stays where it is: the
         * dead name's bytes are lost until a rebuild), then the count drops */
        if (k != im->n_syms)
            memcpy(s, im->data + im->symtab_off + im->n_syms * c->sym, c->sym);
        im->n_syms--;
        publish_count(im);
        break;
    }
    fdes_stand_in(im, j, named);
}

void pt_gdb_image_free(struct pt_gdb_image *im)
{
    free(im->data);
    im->data = NULL;
}
