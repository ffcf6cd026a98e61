/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_ELF: a trampoline's source position (perftramp_wrap_at) in
 * its ELF arena's .debug_info and .debug_line, so that addr2line and
 * perf's srcline turn its addresses into file:line.  Like .symtab, read
 * at report time: a line written after the code started running counts.
 *
 * Order: the unit and its line program first (through the arena's mapped
 * view of the tables), then the sh_size of .debug_line, then that of
 * .debug_info: a reader mid-way sees whole units only, each with its line
 * program inside the published .debug_line.  The rooms are fixed per file
 * (emit/elf_so.h): a slot past them gets no line, never a cut section. */
#include "mem/elf_arena.h"
#include "outputs/outputs.h"
#include "outputs/release_fence.h"
#include "emit/bytebuf.h"

#include <errno.h>

int pt_elf_line_add(struct pt_elf_file *f, size_t slot, size_t size, const char *file, unsigned line)
{
    const struct pt_elf_so_plan *p = &f->plan;
    if (f->parted)
        return 0; /* a forked child's copy: the file is the parent's */
    if (f->fd < 0 || !f->tail || slot >= p->g.n_slots) {
        errno = EBADF;
        return -1;
    }
    uint8_t *info = f->tail + (p->info_off - p->shstr_off);
    uint8_t *lines = f->tail + (p->line_off - p->shstr_off);
    if (pt_elf_so_line_unit(p, info, &f->info_len, lines, &f->line_len, slot, size, file, line, f->big_endian) < 0) {
        if (errno != ENOSPC)
            return -1;
        f->lines_dropped++;
        return 0;
    }
    pt_release_fence(); /* the sizes last */
    uint8_t *tail_at_line = f->tail + (p->line_size_at - p->shstr_off);
    uint8_t *tail_at_info = f->tail + (p->info_size_at - p->shstr_off);
    pt_store_addr(tail_at_line, f->line_len, p->g.addr_size, f->big_endian);
    pt_release_fence();
    pt_store_addr(tail_at_info, f->info_len, p->g.addr_size, f->big_endian);
    return 0;
}
