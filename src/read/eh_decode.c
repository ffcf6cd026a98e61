/* SPDX-License-Identifier: MIT */
/* Read layer (tools and tests only): .eh_frame and .eh_frame_hdr decoded
 * into rows, bounds-checked for untrusted input. */
#include "read/eh_decode.h"

#include "emit/eh_frame.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* A bounds-checked cursor over a byte range. */
struct cur {
    const uint8_t *p, *end, *base;
    bool be;
    bool bad;
};

/* A position for messages: the file offset when the caller gave one. */
#define POS(ctx, off) ((unsigned long long)((ctx)->file_offset + (off)))
/* CIEs remembered per walk (more are accepted unchecked) */
#define MAX_CIES_SEEN 64

static bool cie_seen(const size_t *seen, size_t n, size_t off)
{
    if (n == MAX_CIES_SEEN)
        return true; /* too many to tell: parse_cie still checks the target */
    for (size_t i = 0; i < n; i++)
        if (seen[i] == off)
            return true;
    return false;
}

static int err(struct pt_eh_ctx *ctx, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ctx->error, sizeof ctx->error, fmt, ap);
    va_end(ap);
    ctx->error_offset = off;
    return -1;
}

static uint64_t rd(struct cur *c, unsigned n)
{
    if (c->bad || (size_t)(c->end - c->p) < n) {
        c->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)c->p[c->be ? n - 1 - i : i] << (8 * i);
    c->p += n;
    return v;
}

bool pt_eh_read_uleb(const uint8_t **pp, const uint8_t *end, uint64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    unsigned shift = 0;
    for (;;) {
        if (p >= end)
            return false;
        uint8_t byte = *p++;
        if (shift == 63 && (byte & 0x7e))
            return false; /* does not fit in 64 bits */
        if (shift < 64)
            v |= (uint64_t)(byte & 0x7f) << shift;
        else if (byte & 0x7f)
            return false;
        shift += 7;
        if (!(byte & 0x80))
            break;
        if (shift > 70)
            return false;
    }
    *pp = p;
    *out = v;
    return true;
}

bool pt_eh_read_sleb(const uint8_t **pp, const uint8_t *end, int64_t *out)
{
    const uint8_t *p = *pp;
    uint64_t v = 0;
    unsigned shift = 0;
    uint8_t byte;
    do {
        if (p >= end || shift > 63)
            return false;
        byte = *p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        shift += 7;
    } while (byte & 0x80);
    if (shift < 64 && (byte & 0x40))
        v |= ~0ull << shift;
    *pp = p;
    *out = (int64_t)v;
    return true;
}

static uint64_t uleb(struct cur *c)
{
    uint64_t v = 0;
    if (c->bad || !pt_eh_read_uleb(&c->p, c->end, &v))
        c->bad = true;
    return v;
}

static int64_t sleb(struct cur *c)
{
    int64_t v = 0;
    if (c->bad || !pt_eh_read_sleb(&c->p, c->end, &v))
        c->bad = true;
    return v;
}

static size_t enc_size(uint8_t enc, unsigned addr_size)
{
    switch (enc & 0x0f) {
    case DW_EH_PE_absptr: return addr_size;
    case DW_EH_PE_udata2: case DW_EH_PE_sdata2: return 2;
    case DW_EH_PE_udata4: case DW_EH_PE_sdata4: return 4;
    case DW_EH_PE_udata8: case DW_EH_PE_sdata8: return 8;
    default: return 0;
    }
}

/* Reads a pointer with encoding `enc`.  `data_base` is for datarel. */
static bool read_ptr(struct pt_eh_ctx *ctx, struct cur *c, uint8_t enc, uint64_t data_base, uint64_t *out)
{
    if (enc == DW_EH_PE_omit)
        return false;
    uint64_t field = ctx->address + (uint64_t)(c->p - c->base);
    uint64_t v;
    switch (enc & 0x0f) {
    case DW_EH_PE_absptr: v = rd(c, ctx->addr_size); break;
    case DW_EH_PE_uleb128: v = uleb(c); break;
    case DW_EH_PE_udata2: v = rd(c, 2); break;
    case DW_EH_PE_udata4: v = rd(c, 4); break;
    case DW_EH_PE_udata8: v = rd(c, 8); break;
    case DW_EH_PE_sleb128: v = (uint64_t)sleb(c); break;
    case DW_EH_PE_sdata2: v = (uint64_t)(int64_t)(int16_t)rd(c, 2); break;
    case DW_EH_PE_sdata4: v = (uint64_t)(int64_t)(int32_t)rd(c, 4); break;
    case DW_EH_PE_sdata8: v = rd(c, 8); break;
    default: c->bad = true; return false;
    }
    switch (enc & 0x70) {
    case 0: break;
    case DW_EH_PE_pcrel: v += field; break;
    case DW_EH_PE_datarel: v += data_base; break;
    default: c->bad = true; return false; /* textrel/funcrel/aligned: not used by eh_frame here */
    }
    if (ctx->addr_size == 4)
        v &= 0xffffffffu;
    *out = v;
    return !c->bad;
}

static int parse_cie(struct pt_eh_ctx *ctx, size_t off, struct pt_cie *cie)
{
    memset(cie, 0, sizeof *cie);
    cie->offset = off;
    if (off + 4 > ctx->len)
        return err(ctx, off, "CIE pointer 0x%llx outside the section", POS(ctx, off));
    struct cur c = {ctx->data + off, ctx->data + ctx->len, ctx->data, ctx->big_endian, false};
    uint64_t len = rd(&c, 4);
    if (len == 0xffffffffu)
        return err(ctx, off, "64-bit DWARF CIE not supported");
    if (len < 4 || len > (uint64_t)(c.end - c.p))
        return err(ctx, off, "CIE length %llu runs past the section", (unsigned long long)len);
    c.end = c.p + len;
    if (rd(&c, 4) != 0)
        return err(ctx, off, "entry at 0x%llx is not a CIE (its CIE id is not 0)", POS(ctx, off));
    cie->version = (uint8_t)rd(&c, 1);
    if (cie->version != 1 && cie->version != 3)
        return err(ctx, off, "CIE version %u (expected 1 or 3)", cie->version);
    size_t i = 0;
    for (;;) {
        uint8_t ch = (uint8_t)rd(&c, 1);
        if (c.bad)
            return err(ctx, off, "CIE augmentation string not terminated");
        if (!ch)
            break;
        if (i + 1 >= sizeof cie->augmentation)
            return err(ctx, off, "CIE augmentation string too long");
        cie->augmentation[i++] = (char)ch;
    }
    cie->code_align = uleb(&c);
    cie->data_align = sleb(&c);
    cie->ra_column = cie->version == 1 ? rd(&c, 1) : uleb(&c);
    cie->fde_encoding = DW_EH_PE_absptr;
    cie->lsda_encoding = DW_EH_PE_omit;
    const char *aug = cie->augmentation;
    if (aug[0] == 'z') {
        uint64_t alen = uleb(&c);
        if (c.bad || alen > (uint64_t)(c.end - c.p))
            return err(ctx, off, "CIE augmentation data runs past the entry");
        const uint8_t *aug_end = c.p + alen;
        for (const char *a = aug + 1; *a; a++) {
            if (*a == 'R') {
                cie->fde_encoding = (uint8_t)rd(&c, 1);
            } else if (*a == 'L') {
                cie->lsda_encoding = (uint8_t)rd(&c, 1);
            } else if (*a == 'P') {
                uint8_t penc = (uint8_t)rd(&c, 1);
                uint64_t pers;
                if (!read_ptr(ctx, &c, penc & 0x7f, 0, &pers))
                    return err(ctx, off, "CIE personality pointer unreadable");
                cie->has_personality = true;
            } else if (*a == 'S') {
                cie->signal_frame = true;
            } else if (*a == 'B' || *a == 'G') {
                /* AArch64 BTI / MTE markers: no data */
            } else {
                break; /* unknown: the 'z' length lets us skip the rest */
            }
        }
        if (c.bad || c.p > aug_end)
            return err(ctx, off, "CIE augmentation data malformed");
        c.p = aug_end;
    } else if (aug[0] != '\0') {
        return err(ctx, off, "CIE augmentation \"%s\" cannot be skipped", aug);
    }
    if (c.bad)
        return err(ctx, off, "CIE truncated");
    if (cie->code_align == 0)
        return err(ctx, off, "CIE code alignment factor is 0");
    if (enc_size(cie->fde_encoding, ctx->addr_size) == 0 && (cie->fde_encoding & 0x0f) != DW_EH_PE_uleb128 &&
        (cie->fde_encoding & 0x0f) != DW_EH_PE_sleb128)
        return err(ctx, off, "CIE FDE pointer encoding 0x%02x unsupported", cie->fde_encoding);
    cie->insns = c.p;
    cie->insns_len = (size_t)(c.end - c.p);
    return 0;
}

int pt_eh_walk(struct pt_eh_ctx *ctx, pt_fde_cb fde_cb, void *arg, size_t *n_cies, size_t *n_fdes)
{
    size_t off = 0, cies = 0, fdes = 0;
    size_t seen[MAX_CIES_SEEN], n_seen = 0;
    ctx->error[0] = '\0';
    if (ctx->addr_size != 4 && ctx->addr_size != 8)
        return err(ctx, 0, "address size %u", ctx->addr_size);
    while (off < ctx->len) {
        struct cur c = {ctx->data + off, ctx->data + ctx->len, ctx->data, ctx->big_endian, false};
        uint64_t len = rd(&c, 4);
        if (c.bad)
            return err(ctx, off, "entry length truncated at 0x%llx", POS(ctx, off));
        if (len == 0)
            break; /* terminator */
        if (len == 0xffffffffu)
            return err(ctx, off, "64-bit DWARF entry not supported");
        if (len < 4 || len > (uint64_t)(c.end - c.p))
            return err(ctx, off, "entry at 0x%llx: length %llu runs past the section (%zu bytes)", POS(ctx, off),
                       (unsigned long long)len, ctx->len);
        const uint8_t *entry_end = c.p + len;
        size_t id_off = off + 4;
        uint32_t id = (uint32_t)rd(&c, 4);
        if (id == 0) {
            struct pt_cie cie;
            if (parse_cie(ctx, off, &cie) < 0)
                return -1;
            cies++;
            if (n_seen < MAX_CIES_SEEN)
                seen[n_seen++] = off;
        } else {
            if (id > id_off)
                return err(ctx, off,
                           off == 0 ? "entry at 0x%llx has CIE id 0x%x: the first entry must be a CIE, whose id is 0"
                                    : "FDE at 0x%llx: CIE pointer 0x%x points before the section",
                           POS(ctx, off), id);
            /* the pointer must land on a CIE this walk has seen: a flipped
             * CIE id turns a CIE into an "FDE" pointing into garbage */
            if (!cie_seen(seen, n_seen, id_off - id))
                return err(ctx, off,
                           off == 0 || n_seen == 0
                               ? "entry at 0x%llx has CIE id 0x%x: no CIE precedes it, so it is not an FDE; a CIE's id is 0"
                               : "FDE at 0x%llx: CIE pointer 0x%x does not lead to the start of a CIE",
                           POS(ctx, off), id);
            struct pt_cie cie;
            if (parse_cie(ctx, id_off - id, &cie) < 0)
                return -1;
            struct pt_fde fde = {.offset = off, .cie_offset = id_off - id};
            c.end = entry_end;
            if (!read_ptr(ctx, &c, cie.fde_encoding, 0, &fde.pc_begin))
                return err(ctx, off, "FDE at 0x%llx: pc_begin unreadable", POS(ctx, off));
            if (!read_ptr(ctx, &c, cie.fde_encoding & 0x0f, 0, &fde.pc_range))
                return err(ctx, off, "FDE at 0x%llx: pc_range unreadable", POS(ctx, off));
            if (cie.augmentation[0] == 'z') {
                uint64_t alen = uleb(&c);
                if (c.bad || alen > (uint64_t)(c.end - c.p))
                    return err(ctx, off, "FDE at 0x%llx: augmentation data runs past the entry", POS(ctx, off));
                c.p += alen;
            }
            fde.insns = c.p;
            fde.insns_len = (size_t)(entry_end - c.p);
            fdes++;
            if (fde_cb) {
                int r = fde_cb(arg, &cie, &fde);
                if (r)
                    return r;
            }
        }
        off = (size_t)(entry_end - ctx->data);
    }
    if (n_cies)
        *n_cies = cies;
    if (n_fdes)
        *n_fdes = fdes;
    return 0;
}

const struct pt_reg_rule *pt_row_rule(const struct pt_row *row, uint32_t reg)
{
    for (size_t i = 0; i < row->n_rules; i++)
        if (row->rules[i].reg == reg)
            return &row->rules[i];
    return NULL;
}

static int set_rule(struct pt_eh_ctx *ctx, struct pt_row *row, uint32_t reg, uint8_t kind, int64_t off)
{
    size_t i = 0;
    while (i < row->n_rules && row->rules[i].reg < reg)
        i++;
    if (i < row->n_rules && row->rules[i].reg == reg) {
        row->rules[i].kind = kind;
        row->rules[i].offset = off;
        return 0;
    }
    if (row->n_rules == PT_ROW_MAX_RULES)
        return err(ctx, 0, "more than %d registers with rules", PT_ROW_MAX_RULES);
    memmove(&row->rules[i + 1], &row->rules[i], (row->n_rules - i) * sizeof row->rules[0]);
    row->rules[i] = (struct pt_reg_rule){reg, kind, off};
    row->n_rules++;
    return 0;
}

static void drop_rule(struct pt_row *row, uint32_t reg)
{
    for (size_t i = 0; i < row->n_rules; i++)
        if (row->rules[i].reg == reg) {
            memmove(&row->rules[i], &row->rules[i + 1], (row->n_rules - i - 1) * sizeof row->rules[0]);
            row->n_rules--;
            return;
        }
}

#define PT_STATE_STACK 8

struct interp {
    struct pt_eh_ctx *ctx;
    const struct pt_cie *cie;
    struct pt_row cur;
    struct pt_row initial;   /* after the CIE instructions, for DW_CFA_restore */
    struct pt_row *rows;
    size_t max_rows, n_rows;
    uint64_t range;
    struct pt_row stack[PT_STATE_STACK];
    size_t depth;
    bool overflow;           /* a factored offset did not fit: hostile input */
};

/* v * data_align without signed overflow (undefined behaviour on hostile
 * input): sets s->overflow instead.  `negate` is for
 * DW_CFA_GNU_negative_offset_extended. */
static int64_t scaled(struct interp *s, int64_t v, bool negate)
{
    int64_t r;
    if ((negate && __builtin_sub_overflow((int64_t)0, v, &v)) || __builtin_mul_overflow(v, s->cie->data_align, &r)) {
        s->overflow = true;
        return 0;
    }
    return r;
}

static int emit_row(struct interp *s)
{
    if (s->n_rows && s->rows[s->n_rows - 1].loc == s->cur.loc) {
        s->rows[s->n_rows - 1] = s->cur;
        return 0;
    }
    if (s->n_rows == s->max_rows)
        return err(s->ctx, 0, "more than %zu rows", s->max_rows);
    s->rows[s->n_rows++] = s->cur;
    return 0;
}

static int advance(struct interp *s, uint64_t delta)
{
    if (emit_row(s) < 0)
        return -1;
    uint64_t step = delta * s->cie->code_align;
    if (s->cie->code_align && step / s->cie->code_align != delta)
        return err(s->ctx, 0, "advance overflows");
    s->cur.loc += step;
    if (s->cur.loc < step)
        return err(s->ctx, 0, "advance overflows");
    return 0;
}

static int restore_reg(struct interp *s, uint32_t reg)
{
    const struct pt_reg_rule *r = pt_row_rule(&s->initial, reg);
    if (r)
        return set_rule(s->ctx, &s->cur, reg, r->kind, r->offset);
    drop_rule(&s->cur, reg);
    return 0;
}

static int run(struct interp *s, const uint8_t *p, size_t len, bool in_cie)
{
    struct cur c = {p, p + len, p, s->ctx->big_endian, false};
    while (c.p < c.end && !c.bad) {
        uint8_t op = (uint8_t)rd(&c, 1);
        uint8_t hi = op & 0xc0, lo = op & 0x3f;
        int r = 0;
        if (hi == DW_CFA_advance_loc) {
            r = in_cie ? 0 : advance(s, lo);
        } else if (hi == DW_CFA_offset) {
            r = set_rule(s->ctx, &s->cur, lo, PT_RULE_OFFSET, scaled(s, (int64_t)uleb(&c), false));
        } else if (hi == DW_CFA_restore) {
            r = restore_reg(s, lo);
        } else {
            uint64_t reg, a;
            int64_t sa;
            switch (op) {
            case DW_CFA_nop:
                break;
            case DW_CFA_set_loc:
                return err(s->ctx, 0, "DW_CFA_set_loc not supported");
            case DW_CFA_advance_loc1: a = rd(&c, 1); r = c.bad || in_cie ? 0 : advance(s, a); break;
            case DW_CFA_advance_loc2: a = rd(&c, 2); r = c.bad || in_cie ? 0 : advance(s, a); break;
            case DW_CFA_advance_loc4: a = rd(&c, 4); r = c.bad || in_cie ? 0 : advance(s, a); break;
            case DW_CFA_offset_extended:
                reg = uleb(&c);
                a = uleb(&c);
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg, PT_RULE_OFFSET, scaled(s, (int64_t)a, false));
                break;
            case DW_CFA_offset_extended_sf:
                reg = uleb(&c);
                sa = sleb(&c);
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg, PT_RULE_OFFSET, scaled(s, sa, false));
                break;
            case DW_CFA_GNU_negative_offset_extended:
                reg = uleb(&c);
                a = uleb(&c);
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg, PT_RULE_OFFSET, scaled(s, (int64_t)a, true));
                break;
            case DW_CFA_val_offset:
                reg = uleb(&c);
                a = uleb(&c);
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg, PT_RULE_VAL_OFFSET, scaled(s, (int64_t)a, false));
                break;
            case DW_CFA_val_offset_sf:
                reg = uleb(&c);
                sa = sleb(&c);
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg, PT_RULE_VAL_OFFSET, scaled(s, sa, false));
                break;
            case DW_CFA_restore_extended:
                r = restore_reg(s, (uint32_t)uleb(&c));
                break;
            case DW_CFA_undefined:
                r = set_rule(s->ctx, &s->cur, (uint32_t)uleb(&c), PT_RULE_EXPLICIT_UNDEFINED, 0);
                break;
            case DW_CFA_same_value:
                r = set_rule(s->ctx, &s->cur, (uint32_t)uleb(&c), PT_RULE_SAME_VALUE, 0);
                break;
            case DW_CFA_register:
                reg = uleb(&c);
                a = uleb(&c);
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg, PT_RULE_REGISTER, (int64_t)a);
                break;
            case DW_CFA_remember_state:
                if (s->depth == PT_STATE_STACK)
                    return err(s->ctx, 0, "DW_CFA_remember_state nested too deep");
                s->stack[s->depth++] = s->cur;
                break;
            case DW_CFA_restore_state: {
                if (s->depth == 0)
                    return err(s->ctx, 0, "DW_CFA_restore_state without remember_state");
                uint64_t loc = s->cur.loc;
                s->cur = s->stack[--s->depth];
                s->cur.loc = loc;
                break;
            }
            case DW_CFA_def_cfa:
                s->cur.cfa_reg = (uint32_t)uleb(&c);
                s->cur.cfa_offset = (int64_t)uleb(&c);
                s->cur.cfa_expression = false;
                break;
            case DW_CFA_def_cfa_sf:
                s->cur.cfa_reg = (uint32_t)uleb(&c);
                s->cur.cfa_offset = scaled(s, sleb(&c), false);
                s->cur.cfa_expression = false;
                break;
            case DW_CFA_def_cfa_register:
                s->cur.cfa_reg = (uint32_t)uleb(&c);
                s->cur.cfa_expression = false;
                break;
            case DW_CFA_def_cfa_offset:
                s->cur.cfa_offset = (int64_t)uleb(&c);
                break;
            case DW_CFA_def_cfa_offset_sf:
                s->cur.cfa_offset = scaled(s, sleb(&c), false);
                break;
            case DW_CFA_def_cfa_expression:
                a = uleb(&c);
                if (c.bad || a > (uint64_t)(c.end - c.p))
                    return err(s->ctx, 0, "DW_CFA_def_cfa_expression runs past the program");
                c.p += a;
                s->cur.cfa_expression = true;
                break;
            case DW_CFA_expression:
            case DW_CFA_val_expression:
                reg = uleb(&c);
                a = uleb(&c);
                if (c.bad || a > (uint64_t)(c.end - c.p))
                    return err(s->ctx, 0, "DW_CFA_expression runs past the program");
                c.p += a;
                r = set_rule(s->ctx, &s->cur, (uint32_t)reg,
                             op == DW_CFA_expression ? PT_RULE_EXPRESSION : PT_RULE_VAL_EXPRESSION, 0);
                break;
            case DW_CFA_AARCH64_negate_ra_state:
                s->cur.ra_signed = !s->cur.ra_signed;
                break;
            case DW_CFA_GNU_args_size:
                (void)uleb(&c);
                break;
            default:
                return err(s->ctx, 0, "unknown call frame opcode 0x%02x", op);
            }
        }
        if (r == 0 && s->overflow)
            return err(s->ctx, 0, "factored offset overflows 64 bits");
        if (r < 0)
            return -1;
    }
    if (c.bad)
        return err(s->ctx, 0, "call frame program truncated");
    return 0;
}

int pt_eh_rows(struct pt_eh_ctx *ctx, const struct pt_cie *cie, const struct pt_fde *fde, struct pt_row *rows,
               size_t max_rows)
{
    static const struct pt_row zero;
    struct interp *s = &(struct interp){.ctx = ctx, .cie = cie, .rows = rows, .max_rows = max_rows};
    s->cur = zero;
    if (run(s, cie->insns, cie->insns_len, true) < 0)
        return -1;
    s->initial = s->cur;
    if (run(s, fde->insns, fde->insns_len, false) < 0)
        return -1;
    if (s->cur.loc > fde->pc_range)
        return err(ctx, fde->offset, "FDE at 0x%llx: program advances past pc_range", POS(ctx, fde->offset));
    if (emit_row(s) < 0)
        return -1;
    return (int)s->n_rows;
}

int pt_eh_hdr_decode(struct pt_eh_ctx *ctx, struct pt_eh_hdr_info *out,
                     void (*row_cb)(void *arg, uint64_t pc, uint64_t fde), void *arg)
{
    memset(out, 0, sizeof *out);
    struct cur c = {ctx->data, ctx->data + ctx->len, ctx->data, ctx->big_endian, false};
    out->version = (uint8_t)rd(&c, 1);
    out->eh_frame_ptr_enc = (uint8_t)rd(&c, 1);
    out->fde_count_enc = (uint8_t)rd(&c, 1);
    out->table_enc = (uint8_t)rd(&c, 1);
    if (c.bad)
        return err(ctx, 0, ".eh_frame_hdr shorter than 4 bytes");
    if (out->version != 1)
        return err(ctx, 0, ".eh_frame_hdr version %u (expected 1)", out->version);
    if (!read_ptr(ctx, &c, out->eh_frame_ptr_enc, ctx->address, &out->eh_frame_ptr))
        return err(ctx, 4, ".eh_frame_hdr eh_frame_ptr unreadable (encoding 0x%02x)", out->eh_frame_ptr_enc);
    out->sorted = true;
    if (out->fde_count_enc == DW_EH_PE_omit || out->table_enc == DW_EH_PE_omit)
        return 0;
    if (!read_ptr(ctx, &c, out->fde_count_enc, ctx->address, &out->fde_count))
        return err(ctx, (size_t)(c.p - c.base), ".eh_frame_hdr fde_count unreadable");
    size_t esz = enc_size(out->table_enc, ctx->addr_size);
    if (esz == 0)
        return err(ctx, 0, ".eh_frame_hdr table encoding 0x%02x is not fixed size", out->table_enc);
    if (out->fde_count > (uint64_t)(c.end - c.p) / (2 * esz))
        return err(ctx, (size_t)(c.p - c.base), ".eh_frame_hdr table of %llu rows runs past its %zu bytes",
                   (unsigned long long)out->fde_count, ctx->len);
    uint64_t prev = 0;
    for (uint64_t i = 0; i < out->fde_count; i++) {
        uint64_t pc, fde;
        if (!read_ptr(ctx, &c, out->table_enc, ctx->address, &pc) ||
            !read_ptr(ctx, &c, out->table_enc, ctx->address, &fde))
            return err(ctx, (size_t)(c.p - c.base), ".eh_frame_hdr table row %llu unreadable",
                       (unsigned long long)i);
        if (i && (int64_t)(pc - prev) < 0)
            out->sorted = false;
        prev = pc;
        if (row_cb)
            row_cb(arg, pc, fde);
    }
    return 0;
}
