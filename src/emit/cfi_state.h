/* SPDX-License-Identifier: MIT */
/* Emit layer: the register rules a CFI program has set up to a point, so
 * the emitter can see where a program comes back to the rules at entry
 * (an epilogue) and say that in one byte (DW_CFA_restore_state). */
#ifndef PT_EMIT_CFI_STATE_H
#define PT_EMIT_CFI_STATE_H

#include <stdbool.h>
#include <stdint.h>

#include "arch/table.h"

#define PT_CFI_STATE_REGS 24

struct pt_cfi_state {
    uint16_t cfa_reg;
    int32_t cfa_off;
    uint8_t n;
    bool untracked; /* a rule this model does not follow (PAC state, too many registers) */
    struct {
        uint16_t reg;
        uint8_t op; /* PT_CFI_OFFSET, _SAME_VALUE or _UNDEFINED */
        int32_t off;
    } r[PT_CFI_STATE_REGS];
};

/* The rules at entry: the CIE's initial instructions applied to nothing. */
void pt_cfi_state_entry(struct pt_cfi_state *s, const struct pt_arch *a);
/* Applies one rule; entry is what PT_CFI_RESTORE goes back to. */
void pt_cfi_state_apply(struct pt_cfi_state *s, const struct pt_cfi *c, const struct pt_cfi_state *entry);
/* The same rules for the CFA and every register (never true when untracked). */
bool pt_cfi_state_equal(const struct pt_cfi_state *x, const struct pt_cfi_state *y);

#endif
