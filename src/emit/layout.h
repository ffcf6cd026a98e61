/* SPDX-License-Identifier: MIT */
/* Lays a table out: instruction offsets, data words, fixups resolved.
 * The result is a byte template; each trampoline is the template plus its
 * target address and tag. */
#ifndef PERFTRAMP_LAYOUT_H
#define PERFTRAMP_LAYOUT_H

#include "arch/table.h"

#define PT_LAYOUT_MAX_INSNS 32
#define PT_LAYOUT_MAX_BYTES 256

struct pt_layout {
    const struct pt_arch *arch;
    size_t insn_off[PT_LAYOUT_MAX_INSNS];
    size_t code_len;                  /* bytes of instructions */
    size_t word_off[PT_WORD_COUNT];   /* data words, 8-aligned after the code */
    size_t size;                      /* code + data words: one trampoline */
    uint8_t bytes[PT_LAYOUT_MAX_BYTES]; /* template, data words zero */
};

/* Returns 0, or -1 with errno EINVAL and a reason in `why` for a table the
 * emitter cannot lay out (too long, a fixup out of range, misaligned). */
int pt_layout_build(struct pt_layout *l, const struct pt_arch *arch, const char **why);

/* Writes one trampoline: template + target + tag, in the arch byte order. */
void pt_layout_write(const struct pt_layout *l, uint8_t *dst, uint64_t target, uint64_t tag);

#endif
