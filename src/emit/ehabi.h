/* SPDX-License-Identifier: MIT */
/* Emit layer: Arm EHABI unwind tables (.ARM.exidx index entries and
 * .ARM.extab entries) derived from CFI rows, the same rows .eh_frame is
 * serialized from.  libgcc's unwinder on 32-bit Arm reads only these
 * (C++ exceptions, _Unwind_Backtrace, backtrace(3)).
 *
 * Format: "Exception Handling ABI for the Arm Architecture" (IHI 0038B):
 * 6 (index table entries: two words, a prel31 offset to the code and
 * either EXIDX_CANTUNWIND, an inline compact entry, or a prel31 offset to
 * the entry in .ARM.extab), 10.2-10.3 (the Arm-defined compact model:
 * personality routine 0, three opcodes inline; 1, opcodes in .ARM.extab;
 * the unwind opcodes and their virtual stack pointer, vsp).
 *
 * The rows describe the frame at every pc, EHABI one state per index
 * entry: the code is cut into regions where the rules stay the same, one
 * entry each.  An entry starts 2 bytes before its region (PT_EHABI_SHIFT):
 * libgcc looks up the entry of "pc - 2" for every frame, the interrupted
 * pc of a signal frame included, and LLVM's libunwind "pc - 1" (pc itself
 * in a signal frame); with instructions of 4 bytes (A32) all three land
 * in the region that holds the pc.  So the rules at a return address are
 * those holding after the call instruction, as DWARF unwinders take them
 * when no row sits right at the return address. */
#ifndef PERFTRAMP_EHABI_H
#define PERFTRAMP_EHABI_H

#include "emit/cfi_state.h"
#include "emit/layout.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_EHABI_MAX_OPS 40      /* opcode bytes of one entry */
#define PT_EHABI_MAX_REGIONS 32  /* regions of one piece of code */
#define PT_EHABI_SHIFT 2         /* an entry starts this many bytes before its region */
#define PT_EHABI_CANTUNWIND 1u   /* index entry word: no unwinding through here */

/* The unwind opcodes of one region (without Finish padding). */
struct pt_ehabi_region {
    uint32_t start; /* code offset where the region's rules begin */
    uint8_t n_ops;
    uint8_t ops[PT_EHABI_MAX_OPS];
};

/* The opcodes that recover the caller from the frame state `s`: vsp from
 * the CFA register, every saved register popped from its slot, vsp left
 * at the CFA (or at the caller's sp a pop of r13 loaded).  0, or -1 with
 * errno EINVAL and the rule EHABI cannot say in `why`. */
int pt_ehabi_ops(const struct pt_arch *a, const struct pt_cfi_state *s, uint8_t *ops, size_t *n, const char **why);

/* One region per change of the opcodes along rows sorted by offset, for
 * code of code_size bytes (rows at or past it describe no code).  0, or
 * -1 with errno EINVAL and `why`. */
int pt_ehabi_regions(const struct pt_arch *a, const struct pt_cfi_row *rows, size_t n_rows, size_t code_size,
                     struct pt_ehabi_region *out, size_t cap, size_t *n_out, const char **why);
/* The regions of a laid-out table (one trampoline). */
int pt_ehabi_layout_regions(const struct pt_layout *l, struct pt_ehabi_region *out, size_t cap, size_t *n_out,
                            const char **why);

/* Bytes of a region's .ARM.extab entry (personality routine 1, opcode
 * words, an empty descriptor list); 0 when its opcodes fit inline
 * (personality routine 0, three opcodes at most). */
size_t pt_ehabi_extab_size(const struct pt_ehabi_region *r);

/* Index table and extab entries for `count` copies of the regions, each
 * `stride` bytes after the previous, the first at code address `code`,
 * the table itself at address `at` (where it will be read: prel31
 * offsets are relative to it), ending with an EXIDX_CANTUNWIND entry at
 * code + (count - 1) * stride + end (end: the size of one copy).  The
 * index entries come first (sorted by address, as the unwinder's binary
 * search wants), then one extab entry per region that needs one, shared
 * by all copies.  Writes into dst (cap bytes; NULL to measure), sets
 * *n_index to the number of index entries.  Returns the bytes written,
 * or 0 with errno EINVAL (an offset beyond prel31's +-1 GiB) or ENOSPC. */
size_t pt_ehabi_tables(uint8_t *dst, size_t cap, uint64_t at, uint64_t code, size_t count, size_t stride, size_t end,
                       const struct pt_ehabi_region *r, size_t n_regions, bool big_endian, size_t *n_index);

#endif
