/* SPDX-License-Identifier: MIT */
/* Lays a table out: instruction offsets, data words, fixups resolved.
 * The result is a byte template; each trampoline is the template plus its
 * target address and tag. */
#ifndef PERFTRAMP_LAYOUT_H
#define PERFTRAMP_LAYOUT_H

#include "arch/table.h"

#include <stdbool.h>

#define PT_LAYOUT_MAX_INSNS 32
#define PT_LAYOUT_MAX_BYTES 256
#define PT_LAYOUT_MAX_RELOCS 4

struct pt_layout {
    const struct pt_arch *arch;
    size_t insn_off[PT_LAYOUT_MAX_INSNS];
    size_t code_len;                  /* bytes of instructions */
    size_t word_off[PT_WORD_COUNT];   /* data words of arch->addr_size bytes, aligned to it after the code */
    size_t size;                      /* code + data words: one trampoline */
    uint8_t bytes[PT_LAYOUT_MAX_BYTES]; /* template, data words and relocation fields zero */
    size_t relocs[PT_LAYOUT_MAX_RELOCS]; /* instructions with a relocation (PT_FIXUP_IS_RELOC) */
    size_t n_relocs;
};

/* Returns 0, or -1 with errno EINVAL and a reason in `why` for a table the
 * emitter cannot lay out (too long, a fixup out of range, misaligned). */
int pt_layout_build(struct pt_layout *l, const struct pt_arch *arch, const char **why);

/* Writes one trampoline: template + target + tag, in the arch byte order,
 * each word arch->addr_size bytes (of 4, the low halves).
 * Relocation fields stay zero: for tables without relocations. */
void pt_layout_write(const struct pt_layout *l, uint8_t *dst, uint64_t target, uint64_t tag);

/* Whether every relocation of the table reaches `target` from a
 * trampoline at executable address x (true for a table with none). */
bool pt_layout_reaches(const struct pt_layout *l, uint64_t x, uint64_t target);
/* Writes one trampoline that will run at x, relocations resolved: 0, or
 * -1 with errno ERANGE (nothing written) when one does not reach. */
int pt_layout_write_at(const struct pt_layout *l, uint8_t *dst, uint64_t x, uint64_t target, uint64_t tag);

#endif
