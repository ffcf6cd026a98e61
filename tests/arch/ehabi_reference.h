/* SPDX-License-Identifier: MIT */
/* The EHABI half of the reference cross-check (tests/arch/check_reference),
 * for tables whose unwinder reads Arm EHABI tables (.ehabi): the entries
 * the emitter derives from the table's rows, compared by what they recover
 *   - at every instruction boundary, with the rows of the reference's own
 *     CFI (.cfi_* assembled by the toolchain), and
 *   - for the body (the region in force over the most instructions), with
 *     the entry the toolchain wrote from the reference's .fnstart / .save /
 *     .setfp / .fnend directives (its .ARM.exidx and .ARM.extab).
 * Opcodes are compared by their effect (read/ehabi_decode.h), never by
 * their bytes: gas pops r13 where clang pops r12 and copies it to vsp. */
#ifndef PT_TESTS_EHABI_REFERENCE_H
#define PT_TESTS_EHABI_REFERENCE_H

#include "emit/layout.h"
#include "read/eh_decode.h"
#include "read/elf_reader.h"

#include <stddef.h>
#include <stdint.h>

/* The reference's DWARF row in force at a byte offset of its code. */
typedef const struct pt_row *(*ehabi_row_at_fn)(const void *rows, uint64_t off);

/* 0 when everything agrees (a summary in detail), else -1 with the first
 * difference in why.  `e` is the linked reference, its function at
 * text_addr. */
int ehabi_reference_check(const struct pt_layout *l, const struct pt_elf *e, uint64_t text_addr,
                          ehabi_row_at_fn row_at, const void *rows, char *why, size_t why_len, char *detail,
                          size_t detail_len);

#endif
