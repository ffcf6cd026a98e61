/* SPDX-License-Identifier: MIT */
/* Emit layer: the register rules of a CFI program up to a point
 * (cfi_state.h), kept small: the CFA and a few saved registers, which is
 * all a trampoline or a published region sets up. */
#include "emit/cfi_state.h"

#include <string.h>

static int find(const struct pt_cfi_state *s, uint16_t reg)
{
    for (int i = 0; i < s->n; i++)
        if (s->r[i].reg == reg)
            return i;
    return -1;
}

static void forget(struct pt_cfi_state *s, uint16_t reg)
{
    int i = find(s, reg);
    if (i >= 0)
        s->r[i] = s->r[--s->n];
}

static void set(struct pt_cfi_state *s, uint16_t reg, uint8_t op, int32_t off)
{
    int i = find(s, reg);
    if (i < 0) {
        if (s->n == PT_CFI_STATE_REGS) {
            s->untracked = true;
            return;
        }
        i = s->n++;
    }
    s->r[i].reg = reg;
    s->r[i].op = op;
    s->r[i].off = off;
}

void pt_cfi_state_apply(struct pt_cfi_state *s, const struct pt_cfi *c, const struct pt_cfi_state *entry)
{
    switch (c->op) {
    case PT_CFI_NONE:
        return;
    case PT_CFI_DEF_CFA:
        s->cfa_reg = c->reg;
        s->cfa_off = c->offset;
        return;
    case PT_CFI_DEF_CFA_REGISTER:
        s->cfa_reg = c->reg;
        return;
    case PT_CFI_DEF_CFA_OFFSET:
        s->cfa_off = c->offset;
        return;
    case PT_CFI_OFFSET:
    case PT_CFI_SAME_VALUE:
    case PT_CFI_UNDEFINED:
        set(s, c->reg, c->op, c->op == PT_CFI_OFFSET ? c->offset : 0);
        return;
    case PT_CFI_RESTORE: {
        int i = entry ? find(entry, c->reg) : -1;
        if (i >= 0)
            set(s, c->reg, entry->r[i].op, entry->r[i].off);
        else
            forget(s, c->reg);
        return;
    }
    default: /* PT_CFI_NEGATE_RA_STATE and anything newer: not followed here */
        s->untracked = true;
        return;
    }
}

void pt_cfi_state_entry(struct pt_cfi_state *s, const struct pt_arch *a)
{
    memset(s, 0, sizeof *s);
    for (int k = 0; k < PT_INSN_MAX_CFI && a->cie_initial[k].op != PT_CFI_NONE; k++)
        pt_cfi_state_apply(s, &a->cie_initial[k], NULL);
}

bool pt_cfi_state_equal(const struct pt_cfi_state *x, const struct pt_cfi_state *y)
{
    if (x->untracked || y->untracked || x->cfa_reg != y->cfa_reg || x->cfa_off != y->cfa_off || x->n != y->n)
        return false;
    for (int i = 0; i < x->n; i++) {
        int j = find(y, x->r[i].reg);
        if (j < 0 || y->r[j].op != x->r[i].op || y->r[j].off != x->r[i].off)
            return false;
    }
    return true;
}
