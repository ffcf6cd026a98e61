/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_ELF: a trampoline's name in its ELF arena's .symtab.  perf
 * reads .symtab at report time, so a name written after the code started
 * running (even after perf started recording) still names its samples.
 * Names use the perf map's policy (perf_name.h: control bytes escaped,
 * long names cut), so every output shows the same text.
 *
 * Order: the string and the symbol first, then .strtab's sh_size, then
 * .symtab's, so a reader (perf, or what a process killed between two
 * stores leaves) never sees a size that covers bytes not written yet, nor
 * a symbol whose name lies past the end of .strtab.  A name
 * that fits the .strtab room goes through the arena's mapped view of the
 * tables (stores into the page cache, which perf's read(2) sees); a longer
 * one, past the room, with pwrite (the file grows). */
#include "mem/elf_arena.h"
#include "outputs/outputs.h"
#include "outputs/release_fence.h"
#include "emit/bytebuf.h"
#include "emit/elf_image.h"
#include "outputs/perf_name.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* An address-sized field (sh_size) of the file's class, at `at`. */
static int put_word(int fd, uint64_t v, size_t size, size_t at, bool big_endian)
{
    uint8_t b[8];
    pt_store_addr(b, v, (unsigned)size, big_endian);
    return pt_elf_pwrite(fd, b, size, at);
}

/* The byte at file offset `off` (>= shstr_off) in the tables' view. */
static uint8_t *in_tail(const struct pt_elf_file *f, size_t off)
{
    return f->tail + (off - f->plan.shstr_off);
}

int pt_elf_symbol_add(struct pt_elf_file *f, size_t slot, size_t size, const char *name)
{
    const struct pt_elf_so_plan *p = &f->plan;
    if (f->parted)
        return 0; /* a forked child's copy: the file is the parent's */
    if (f->fd < 0 || slot >= p->g.n_slots) {
        errno = EBADF;
        return -1;
    }
    char *text = malloc(PT_PERF_NAME_MAX + 1);
    if (!text) {
        errno = ENOMEM;
        return -1;
    }
    size_t len = pt_perf_name(text, name);
    text[len] = 0;
    uint8_t sym[PT_ELF_SYM_MAX];
    size_t sym_size = p->sym_size, word = p->g.addr_size;
    uint64_t value = p->text_off + slot * p->g.stride; /* vaddr == file offset */
    pt_elf_so_symbol(sym, p, (uint32_t)f->strtab_len, value, size, f->big_endian);
    size_t n_syms = slot + 1 > f->n_syms ? slot + 1 : f->n_syms;
    if (f->tail && f->strtab_len + len + 1 <= p->strtab_cap) {
        memcpy(in_tail(f, p->strtab_off + f->strtab_len), text, len + 1);
        free(text);
        memcpy(in_tail(f, p->symtab_off + (slot + 1) * sym_size), sym, sym_size);
        pt_release_fence(); /* the sizes last, .symtab's after .strtab's */
        pt_store_addr(in_tail(f, p->strtab_size_at), f->strtab_len + len + 1, (unsigned)word, f->big_endian);
        pt_release_fence();
        pt_store_addr(in_tail(f, p->symtab_size_at), (n_syms + 1) * sym_size, (unsigned)word, f->big_endian);
        f->strtab_len += len + 1;
        f->n_syms = n_syms;
        return 0;
    }
    int r = pt_elf_pwrite(f->fd, text, len + 1, p->strtab_off + f->strtab_len);
    free(text);
    if (r == 0)
        r = pt_elf_pwrite(f->fd, sym, sym_size, p->symtab_off + (slot + 1) * sym_size);
    if (r == 0)
        r = put_word(f->fd, f->strtab_len + len + 1, word, p->strtab_size_at, f->big_endian);
    if (r == 0)
        r = put_word(f->fd, (n_syms + 1) * sym_size, word, p->symtab_size_at, f->big_endian);
    if (r < 0)
        return -1;
    f->strtab_len += len + 1;
    f->n_syms = n_syms;
    return 0;
}
