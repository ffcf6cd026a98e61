/* SPDX-License-Identifier: MIT */
/* Display helpers of the perftramp command: hex dumps, register names,
 * rule text in readelf's notation, and a call frame program listing. */
#include "cli.h"

#include "emit/eh_frame.h"

#include <inttypes.h>
#include <string.h>

void cli_hexdump(FILE *out, const char *indent, const uint8_t *p, size_t n, uint64_t base)
{
    for (size_t i = 0; i < n; i += 16) {
        fprintf(out, "%s%08" PRIx64 " ", indent, base + i);
        for (size_t k = 0; k < 16; k++) {
            if (i + k < n)
                fprintf(out, " %02x", p[i + k]);
            else
                fputs("   ", out);
        }
        fputs("  ", out);
        for (size_t k = 0; k < 16 && i + k < n; k++)
            fputc(p[i + k] >= 0x20 && p[i + k] < 0x7f ? p[i + k] : '.', out);
        fputc('\n', out);
    }
}

const char *cli_reg_name(const struct pt_arch *a, uint64_t reg, char buf[24])
{
    if (a && reg < a->n_reg_names && a->reg_names[reg])
        return a->reg_names[reg];
    snprintf(buf, 24, "r%" PRIu64, reg);
    return buf;
}

void cli_rule_text(const struct pt_arch *a, const struct pt_reg_rule *r, char *out, size_t n)
{
    char rb[24];
    if (!r) {
        snprintf(out, n, "u");
        return;
    }
    switch (r->kind) {
    case PT_RULE_SAME_VALUE: snprintf(out, n, "s"); break;
    case PT_RULE_OFFSET: snprintf(out, n, "c%+" PRId64, r->offset); break;
    case PT_RULE_VAL_OFFSET: snprintf(out, n, "v%+" PRId64, r->offset); break;
    case PT_RULE_REGISTER: snprintf(out, n, "%s", cli_reg_name(a, (uint64_t)r->offset, rb)); break;
    case PT_RULE_EXPRESSION: snprintf(out, n, "exp"); break;
    case PT_RULE_VAL_EXPRESSION: snprintf(out, n, "vexp"); break;
    default: snprintf(out, n, "u"); break;
    }
}

/* Bounded little readers for the listing; a short program ends it. */
struct rd {
    const uint8_t *p, *end;
    bool be, bad;
};

static uint64_t rd_n(struct rd *r, unsigned n)
{
    if (r->bad || (size_t)(r->end - r->p) < n) {
        r->bad = true;
        return 0;
    }
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)r->p[r->be ? n - 1 - i : i] << (8 * i);
    r->p += n;
    return v;
}

static uint64_t rd_uleb(struct rd *r)
{
    uint64_t v = 0;
    if (!r->bad && !pt_eh_read_uleb(&r->p, r->end, &v))
        r->bad = true;
    return v;
}

static int64_t rd_sleb(struct rd *r)
{
    int64_t v = 0;
    if (!r->bad && !pt_eh_read_sleb(&r->p, r->end, &v))
        r->bad = true;
    return v;
}

void cli_cfa_print(FILE *out, const char *indent, const struct pt_arch *a, const uint8_t *p, size_t len,
                   bool big_endian, uint64_t code_align, int64_t data_align)
{
    struct rd r = {p, p + len, big_endian, false};
    uint64_t loc = 0;
    char rb[24];
    while (r.p < r.end && !r.bad) {
        size_t at = (size_t)(r.p - p);
        uint8_t op = (uint8_t)rd_n(&r, 1);
        uint8_t lo = op & 0x3f;
        uint64_t reg, v;
        int64_t s;
        fprintf(out, "%s%02zx: ", indent, at);
        switch (op & 0xc0) {
        case DW_CFA_advance_loc:
            loc += lo * code_align;
            fprintf(out, "DW_CFA_advance_loc %u (to loc 0x%" PRIx64 ")\n", lo, loc);
            continue;
        case DW_CFA_offset:
            v = rd_uleb(&r);
            fprintf(out, "DW_CFA_offset %s at cfa%+" PRId64 "\n", cli_reg_name(a, lo, rb),
                    (int64_t)v * data_align);
            continue;
        case DW_CFA_restore:
            fprintf(out, "DW_CFA_restore %s\n", cli_reg_name(a, lo, rb));
            continue;
        }
        switch (op) {
        case DW_CFA_nop: fprintf(out, "DW_CFA_nop\n"); break;
        case DW_CFA_advance_loc1:
        case DW_CFA_advance_loc2:
        case DW_CFA_advance_loc4:
            v = rd_n(&r, op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4);
            loc += v * code_align;
            fprintf(out, "DW_CFA_advance_loc%d %" PRIu64 " (to loc 0x%" PRIx64 ")\n",
                    op == DW_CFA_advance_loc1 ? 1 : op == DW_CFA_advance_loc2 ? 2 : 4, v, loc);
            break;
        case DW_CFA_def_cfa:
            reg = rd_uleb(&r);
            v = rd_uleb(&r);
            fprintf(out, "DW_CFA_def_cfa %s+%" PRIu64 "\n", cli_reg_name(a, reg, rb), v);
            break;
        case DW_CFA_def_cfa_sf:
            reg = rd_uleb(&r);
            s = rd_sleb(&r);
            fprintf(out, "DW_CFA_def_cfa_sf %s%+" PRId64 "\n", cli_reg_name(a, reg, rb), s * data_align);
            break;
        case DW_CFA_def_cfa_register:
            fprintf(out, "DW_CFA_def_cfa_register %s\n", cli_reg_name(a, rd_uleb(&r), rb));
            break;
        case DW_CFA_def_cfa_offset:
            fprintf(out, "DW_CFA_def_cfa_offset %" PRIu64 "\n", rd_uleb(&r));
            break;
        case DW_CFA_def_cfa_offset_sf:
            fprintf(out, "DW_CFA_def_cfa_offset_sf %" PRId64 "\n", rd_sleb(&r) * data_align);
            break;
        case DW_CFA_offset_extended:
            reg = rd_uleb(&r);
            v = rd_uleb(&r);
            fprintf(out, "DW_CFA_offset_extended %s at cfa%+" PRId64 "\n", cli_reg_name(a, reg, rb),
                    (int64_t)v * data_align);
            break;
        case DW_CFA_offset_extended_sf:
            reg = rd_uleb(&r);
            s = rd_sleb(&r);
            fprintf(out, "DW_CFA_offset_extended_sf %s at cfa%+" PRId64 "\n", cli_reg_name(a, reg, rb),
                    s * data_align);
            break;
        case DW_CFA_restore_extended:
            fprintf(out, "DW_CFA_restore_extended %s\n", cli_reg_name(a, rd_uleb(&r), rb));
            break;
        case DW_CFA_undefined:
            fprintf(out, "DW_CFA_undefined %s\n", cli_reg_name(a, rd_uleb(&r), rb));
            break;
        case DW_CFA_same_value:
            fprintf(out, "DW_CFA_same_value %s\n", cli_reg_name(a, rd_uleb(&r), rb));
            break;
        case DW_CFA_register: {
            char rb2[24];
            reg = rd_uleb(&r);
            v = rd_uleb(&r);
            fprintf(out, "DW_CFA_register %s in %s\n", cli_reg_name(a, reg, rb), cli_reg_name(a, v, rb2));
            break;
        }
        case DW_CFA_remember_state: fprintf(out, "DW_CFA_remember_state\n"); break;
        case DW_CFA_restore_state: fprintf(out, "DW_CFA_restore_state\n"); break;
        case DW_CFA_AARCH64_negate_ra_state:
            fprintf(out, "DW_CFA_AARCH64_negate_ra_state (GNU_window_save elsewhere)\n");
            break;
        case DW_CFA_GNU_args_size: fprintf(out, "DW_CFA_GNU_args_size %" PRIu64 "\n", rd_uleb(&r)); break;
        default:
            fprintf(out, "opcode 0x%02x (not listed)\n", op);
            return;
        }
    }
    if (r.bad)
        fprintf(out, "%s(program truncated)\n", indent);
}
