/* SPDX-License-Identifier: MIT */
/* Read layer: row by row checks of a jitdump LOAD's unwinding info (jitdump_rows.h).
 * The rules are decoded by src/read/eh_decode.c; the rules a built-in
 * table promises are the ones the emitter writes into every perftramp dump
 * (pt_eh_jitdump_blob), decoded by that same decoder: one semantics. */
#include "read/jitdump_rows.h"

#include "arch/table.h"
#include "emit/bytebuf.h"
#include "emit/eh_frame.h"
#include "emit/layout.h"
#include "read/eh_decode.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf's genelf puts .text at 0x80 (0x40 on old perf); rows are offsets
 * from pc_begin, so any address gives the same answer. */
#define TEXT_ADDR 0x80u
#define MAX_ROWS 1024         /* per FDE program, as the validator */
#define TABLE_ROWS 64
/* Stands for "no DW_CFA_def_cfa* has run yet": a register number no ABI
 * uses, set by an instruction run before the CIE's own. */
#define NO_CFA_REG 0xfff0u

/* The rows a built-in table's trampoline has, as the emitter writes them. */
struct table_rows {
    bool built, ok;
    struct pt_layout l;
    struct pt_row rows[TABLE_ROWS];
    int n_rows;
};

struct range {
    uint64_t begin, end;
};

/* Allocated on first use: a dump without unwinding info (or a fuzzer's
 * input) costs one small allocation. */
struct pt_jd_rows {
    struct pt_row *scratch;        /* MAX_ROWS */
    uint8_t *cie_prog;             /* the NO_CFA_REG prelude + a CIE's instructions */
    size_t cie_prog_cap;
    struct range *cover;           /* code ranges FDEs cover, this LOAD */
    size_t n_cover, cap_cover;
    struct table_rows **tables;    /* pt_arch_count pointers, each built on first use */
    struct pt_jd_rows_stats stats;
};

struct pt_jd_rows *pt_jd_rows_new(void)
{
    struct pt_jd_rows *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->tables = calloc(pt_arch_count ? pt_arch_count : 1, sizeof *r->tables);
    if (!r->tables) {
        pt_jd_rows_free(r);
        return NULL;
    }
    return r;
}

void pt_jd_rows_free(struct pt_jd_rows *r)
{
    if (!r)
        return;
    free(r->scratch);
    free(r->cie_prog);
    free(r->cover);
    for (size_t i = 0; r->tables && i < pt_arch_count; i++)
        free(r->tables[i]);
    free(r->tables);
    free(r);
}

void pt_jd_rows_get_stats(const struct pt_jd_rows *r, struct pt_jd_rows_stats *out)
{
    *out = r->stats;
}

/* ---- the built-in tables --------------------------------------------- */

static const struct pt_arch *table_for(uint32_t elf_mach, size_t *index)
{
    for (size_t i = 0; i < pt_arch_count; i++)
        if (pt_arch_list[i]->elf_machine == elf_mach) {
            if (index)
                *index = i;
            return pt_arch_list[i];
        }
    return NULL;
}

unsigned pt_jd_addr_size(uint32_t elf_mach)
{
    const struct pt_arch *a = table_for(elf_mach, NULL);
    return a ? a->addr_size : 8;
}

struct first_fde {
    struct pt_cie cie;
    struct pt_fde fde;
    size_t n;
};

static int take_first(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct first_fde *f = arg;
    if (f->n++ == 0) {
        f->cie = *cie;
        f->fde = *fde;
    }
    return 0;
}

/* Lays the table out and decodes the unwinding blob the emitter writes for
 * it: the rows every perftramp trampoline of this table carries. */
static void build_table(struct table_rows *t, const struct pt_arch *a)
{
    t->built = true;
    const char *why = NULL;
    if (pt_layout_build(&t->l, a, &why) < 0)
        return;
    struct pt_buf blob;
    size_t eh_size = 0;
    pt_buf_init(&blob, a->big_endian);
    if (pt_eh_jitdump_blob(&blob, &t->l, &eh_size) < 0) {
        pt_buf_free(&blob);
        return;
    }
    uint64_t eh_addr = TEXT_ADDR + ((t->l.size + 7) & ~(uint64_t)7);
    struct pt_eh_ctx ctx = {.data = blob.data, .len = eh_size, .address = eh_addr, .big_endian = a->big_endian,
                            .addr_size = a->addr_size};
    struct first_fde f = {0};
    if (pt_eh_walk(&ctx, take_first, &f, NULL, NULL) == 0 && f.n == 1 && f.fde.pc_begin == TEXT_ADDR) {
        t->n_rows = pt_eh_rows(&ctx, &f.cie, &f.fde, t->rows, TABLE_ROWS);
        t->ok = t->n_rows > 0;
    }
    pt_buf_free(&blob);
}

/* The table whose trampoline this LOAD's code is, data words masked. */
static const struct table_rows *match_table(struct pt_jd_rows *r, uint32_t elf_mach, bool big_endian,
                                            const struct pt_jd_record *load, const struct pt_arch **arch)
{
    size_t i;
    const struct pt_arch *a = table_for(elf_mach, &i);
    if (!a || (bool)a->big_endian != big_endian)
        return NULL;
    if (!r->tables[i] && !(r->tables[i] = calloc(1, sizeof *r->tables[i])))
        return NULL; /* out of memory: only the checks for any producer run */
    struct table_rows *t = r->tables[i];
    if (!t->built)
        build_table(t, a);
    if (!t->ok || load->code_size != t->l.size)
        return NULL;
    for (size_t k = 0; k < t->l.size; k++) {
        bool data = false;
        for (int w = 0; w < PT_WORD_COUNT; w++)
            data |= k >= t->l.word_off[w] && k < t->l.word_off[w] + 8;
        if (!data && load->code[k] != t->l.bytes[k])
            return NULL;
    }
    *arch = a;
    return t;
}

/* ---- text for humans --------------------------------------------------- */

static const char *reg_name(const struct pt_arch *a, uint64_t reg, char buf[16])
{
    if (a && reg < a->n_reg_names && a->reg_names[reg])
        return a->reg_names[reg];
    snprintf(buf, 16, "r%" PRIu64, reg);
    return buf;
}

static void rule_text(const struct pt_arch *a, const struct pt_reg_rule *rr, char *out, size_t n)
{
    char rb[16];
    if (!rr) {
        snprintf(out, n, "u");
        return;
    }
    switch (rr->kind) {
    case PT_RULE_SAME_VALUE: snprintf(out, n, "s"); break;
    case PT_RULE_OFFSET: snprintf(out, n, "c%+" PRId64, rr->offset); break;
    case PT_RULE_VAL_OFFSET: snprintf(out, n, "v%+" PRId64, rr->offset); break;
    case PT_RULE_REGISTER: snprintf(out, n, "%s", reg_name(a, (uint64_t)rr->offset, rb)); break;
    case PT_RULE_EXPRESSION: snprintf(out, n, "exp"); break;
    case PT_RULE_VAL_EXPRESSION: snprintf(out, n, "vexp"); break;
    case PT_RULE_EXPLICIT_UNDEFINED: snprintf(out, n, "undefined"); break;
    default: snprintf(out, n, "?"); break;
    }
}

/* Appends to a fixed buffer; stops quietly when it is full. */
__attribute__((format(printf, 4, 5))) static void append(char *out, size_t n, size_t *len, const char *fmt, ...)
{
    if (*len >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(out + *len, n - *len, fmt, ap);
    va_end(ap);
    *len = k < 0 ? n : *len + (size_t)k;
}

/* "CFA=rsp+16 rbp=c-16 rip=c-8": the CFA, then every register that has a
 * rule in either row (so two rows print comparably). */
static void row_text(const struct pt_arch *a, const struct pt_row *row, const struct pt_row *other, char *out,
                     size_t n)
{
    char rb[16], t[40];
    size_t len = 0;
    out[0] = 0;
    if (row->cfa_expression)
        append(out, n, &len, "CFA=exp");
    else if (row->cfa_reg == NO_CFA_REG)
        append(out, n, &len, "CFA=undefined");
    else
        append(out, n, &len, "CFA=%s%+" PRId64, reg_name(a, row->cfa_reg, rb), row->cfa_offset);
    const struct pt_row *rows[2] = {row, other};
    uint64_t from = 0;
    for (;;) {
        /* the next register number with a rule in either row */
        uint64_t reg = UINT64_MAX;
        for (int k = 0; k < 2; k++)
            for (size_t i = 0; rows[k] && i < rows[k]->n_rules; i++)
                if (rows[k]->rules[i].reg >= from && rows[k]->rules[i].reg < reg)
                    reg = rows[k]->rules[i].reg;
        if (reg == UINT64_MAX)
            break;
        rule_text(a, pt_row_rule(row, (uint32_t)reg), t, sizeof t);
        append(out, n, &len, " %s=%s", reg_name(a, reg, rb), t);
        from = reg + 1;
    }
    if (row->ra_signed)
        append(out, n, &len, " ra-signed");
}

static bool rows_equal(const struct pt_row *x, const struct pt_row *y)
{
    if (x->cfa_expression != y->cfa_expression || x->ra_signed != y->ra_signed || x->n_rules != y->n_rules)
        return false;
    if (!x->cfa_expression && (x->cfa_reg != y->cfa_reg || x->cfa_offset != y->cfa_offset))
        return false;
    for (size_t i = 0; i < x->n_rules; i++)
        if (x->rules[i].reg != y->rules[i].reg || x->rules[i].kind != y->rules[i].kind ||
            x->rules[i].offset != y->rules[i].offset)
            return false;
    return true;
}

/* ---- padding: what a code generator puts after the last instruction ---- */

/* One x86 nop or int3, with the prefixes long nops carry; returns its
 * length, 0 if p does not start with one.  Intel SDM vol. 2, NOP
 * ("0F 1F /0", the recommended multi-byte sequences), INT3 (CC). */
static size_t x86_pad(const uint8_t *p, size_t n)
{
    size_t i = 0;
    while (i < n && i < 14 && (p[i] == 0x66 || p[i] == 0x2e))
        i++;
    if (i >= n)
        return 0;
    if (p[i] == 0x90 || p[i] == 0xcc)
        return i + 1;
    if (p[i] != 0x0f || i + 2 >= n || p[i + 1] != 0x1f || ((p[i + 2] >> 3) & 7) != 0)
        return 0;
    uint8_t modrm = p[i + 2], mod = modrm >> 6, rm = modrm & 7;
    size_t len = i + 3;
    if (mod != 3 && rm == 4) { /* SIB */
        if (len >= n)
            return 0;
        if (mod == 0 && (p[len] & 7) == 5)
            len += 4;
        len++;
    }
    if (mod == 1)
        len += 1;
    else if (mod == 2 || (mod == 0 && rm == 5))
        len += 4;
    return len <= n ? len : 0;
}

/* One of the table's nops (struct pt_arch .nops, in its byte order, tried
 * in order): its length, 0 if p does not start with one. */
static size_t table_pad(const struct pt_arch *a, const uint8_t *p, size_t n)
{
    for (int k = 0; k < PT_MAX_NOPS && a->nops[k].len; k++)
        if (n >= a->nops[k].len && memcmp(p, a->nops[k].bytes, a->nops[k].len) == 0)
            return a->nops[k].len;
    return 0;
}

/* Whether p[0..n) is padding for the machine's table; false without one. */
static bool all_padding(const struct pt_arch *a, const uint8_t *p, size_t n)
{
    while (a && n > 0) {
        size_t k = a->x86_nop_forms ? x86_pad(p, n) : 0;
        if (k == 0)
            k = table_pad(a, p, n);
        if (k == 0)
            return false;
        p += k;
        n -= k;
    }
    return a != NULL;
}

/* ---- the check --------------------------------------------------------- */

struct check {
    struct pt_jd_rows *r;
    uint32_t elf_mach;
    bool big_endian;
    const struct pt_jd_record *unwind, *load;
    pt_jd_issue_fn fn;
    void *arg;
    size_t errors;
    char who[96];                    /* "LOAD at 0x4d2 (\"py::main\")" */
    uint64_t text, end;              /* the code in the genelf layout */
    const struct pt_arch *names;     /* register names and ABI facts, when a table exists */
    bool ra_needs_rule;              /* the return address is not in a register at entry */
    struct pt_eh_ctx *ctx;
    /* (a) */
    size_t bad_cfa, bad_ra;          /* row intervals without a CFA / RA rule */
    uint64_t first_bad_cfa, first_bad_ra;
    char first_ra_text[40];
    bool ra_column_reported;
    /* (b) */
    const struct table_rows *table;
    const struct pt_arch *table_arch;
    size_t compared, differ;
    size_t first_differ_insn;
    char first_found[200], first_want[200];
};

__attribute__((format(printf, 3, 4))) static void report(struct check *c, enum pt_jd_severity sev, const char *fmt,
                                                         ...)
{
    if (sev == PT_JD_ERROR)
        c->errors++;
    if (!c->fn)
        return;
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    c->fn(c->arg, sev, c->unwind->offset, msg);
}

static bool add_cover(struct pt_jd_rows *r, uint64_t begin, uint64_t end)
{
    if (r->n_cover == r->cap_cover) {
        size_t cap = r->cap_cover ? r->cap_cover * 2 : 16;
        struct range *v = realloc(r->cover, cap * sizeof *v);
        if (!v)
            return false;
        r->cover = v;
        r->cap_cover = cap;
    }
    r->cover[r->n_cover++] = (struct range){begin, end};
    return true;
}

/* Runs the FDE with a CIE whose program first sets CFA = NO_CFA_REG+0, so
 * a row that no DW_CFA_def_cfa* reached is told apart from "r0+0". */
static int decode(struct check *c, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct pt_jd_rows *r = c->r;
    uint8_t prelude[12], reg[10];
    size_t np = 0, nr = pt_uleb_encode(reg, NO_CFA_REG);
    prelude[np++] = DW_CFA_def_cfa;
    memcpy(prelude + np, reg, nr);
    np += nr;
    prelude[np++] = 0;
    if (cie->insns_len + np > r->cie_prog_cap) {
        uint8_t *p = realloc(r->cie_prog, cie->insns_len + np);
        if (!p)
            return -1;
        r->cie_prog = p;
        r->cie_prog_cap = cie->insns_len + np;
    }
    memcpy(r->cie_prog, prelude, np);
    memcpy(r->cie_prog + np, cie->insns, cie->insns_len);
    struct pt_cie with_prelude = *cie;
    with_prelude.insns = r->cie_prog;
    with_prelude.insns_len = cie->insns_len + np;
    return pt_eh_rows(c->ctx, &with_prelude, fde, r->scratch, MAX_ROWS);
}

static bool ra_ok(const struct check *c, const struct pt_row *row, uint64_t ra_column)
{
    const struct pt_reg_rule *ra = pt_row_rule(row, (uint32_t)ra_column);
    if (ra && ra->kind == PT_RULE_EXPLICIT_UNDEFINED)
        return false; /* DW_CFA_undefined: the outermost frame, unwinding stops */
    if (!ra || ra->kind == PT_RULE_SAME_VALUE)
        return !c->ra_needs_rule; /* "in its register": only where a call leaves it there */
    return true;
}

static int fde_cb(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct check *c = arg;
    uint64_t f_begin = fde->pc_begin, f_end = fde->pc_begin + fde->pc_range;
    if (f_end < f_begin)
        f_end = UINT64_MAX;
    if (f_end <= c->text || f_begin >= c->end)
        return 0; /* describes other code */
    uint64_t lo = f_begin > c->text ? f_begin : c->text, hi = f_end < c->end ? f_end : c->end;
    if (!add_cover(c->r, lo, hi)) {
        report(c, PT_JD_ERROR, "out of memory: rows of %s not checked", c->who);
        return 1;
    }
    if (c->names && cie->ra_column != c->names->ra_column && !c->ra_column_reported) {
        char rb[16];
        report(c, PT_JD_ERROR, "%s: CIE return-address column %" PRIu64 ", the %s ABI's is %u (%s)", c->who,
               cie->ra_column, c->names->name, c->names->ra_column, reg_name(c->names, c->names->ra_column, rb));
        c->ra_column_reported = true;
    }
    int n = decode(c, cie, fde);
    if (n < 0) {
        report(c, PT_JD_ERROR, "%s: FDE at 0x%llx: %s", c->who, (unsigned long long)(c->ctx->file_offset + fde->offset), c->ctx->error);
        return 0;
    }
    const struct pt_row *rows = c->r->scratch;
    /* (a) every row interval that overlaps the code */
    for (int i = 0; i < n; i++) {
        uint64_t a = f_begin + rows[i].loc, b = i + 1 < n ? f_begin + rows[i + 1].loc : f_end;
        if (a < lo)
            a = lo;
        if (b > hi)
            b = hi;
        if (a >= b)
            continue;
        bool cfa = rows[i].cfa_expression || rows[i].cfa_reg != NO_CFA_REG;
        bool ra = ra_ok(c, &rows[i], cie->ra_column);
        if (!cfa && c->bad_cfa++ == 0)
            c->first_bad_cfa = a - c->text;
        if (!ra && c->bad_ra++ == 0) {
            c->first_bad_ra = a - c->text;
            rule_text(c->names, pt_row_rule(&rows[i], (uint32_t)cie->ra_column), c->first_ra_text,
                      sizeof c->first_ra_text);
        }
        if (cfa && ra)
            c->r->stats.pcs += b - a;
    }
    /* (b) every instruction boundary this FDE covers, against the table */
    const struct table_rows *t = c->table;
    for (size_t k = 0; t && k < t->l.arch->n_insns; k++) {
        uint64_t pc = c->text + t->l.insn_off[k];
        if (pc < lo || pc >= hi)
            continue;
        const struct pt_row *found = NULL, *want = NULL;
        for (int i = 0; i < n; i++)
            if (f_begin + rows[i].loc <= pc)
                found = &rows[i];
        for (int i = 0; i < t->n_rows; i++)
            if (t->rows[i].loc <= t->l.insn_off[k])
                want = &t->rows[i];
        if (!found || !want)
            continue;
        c->compared++;
        if (rows_equal(found, want))
            continue;
        if (c->differ++ == 0) {
            c->first_differ_insn = k;
            row_text(t->l.arch, found, want, c->first_found, sizeof c->first_found);
            row_text(t->l.arch, want, found, c->first_want, sizeof c->first_want);
        }
    }
    return 0;
}

static int cmp_range(const void *a, const void *b)
{
    const struct range *x = a, *y = b;
    return x->begin < y->begin ? -1 : x->begin > y->begin;
}

/* Code bytes no FDE covers: an error, or a warning for padding at the end. */
static void check_cover(struct check *c)
{
    struct pt_jd_rows *r = c->r;
    qsort(r->cover, r->n_cover, sizeof *r->cover, cmp_range);
    uint64_t at = c->text, code_size = c->end - c->text;
    for (size_t i = 0; i <= r->n_cover; i++) {
        uint64_t next = i < r->n_cover ? r->cover[i].begin : c->end;
        if (next > at) {
            uint64_t from = at - c->text, to = next - c->text;
            if (next == c->end &&
                all_padding(c->names, c->load->code + from, (size_t)(to - from)))
                report(c, PT_JD_WARNING,
                       "%s: its last %" PRIu64 " of %" PRIu64 " code bytes (padding: nops) are covered by no FDE",
                       c->who, to - from, code_size);
            else
                report(c, PT_JD_ERROR,
                       "%s: code bytes +0x%" PRIx64 "..+0x%" PRIx64 " (%" PRIu64 " of %" PRIu64
                       ") are covered by no FDE: no unwinding there",
                       c->who, from, to, to - from, code_size);
        }
        if (i < r->n_cover && r->cover[i].end > at)
            at = r->cover[i].end;
        if (at >= c->end)
            break;
    }
}

size_t pt_jd_rows_check(struct pt_jd_rows *r, uint32_t elf_mach, bool big_endian, const struct pt_jd_record *unwind,
                        const struct pt_jd_record *load, pt_jd_issue_fn fn, void *arg)
{
    struct check c = {.r = r, .elf_mach = elf_mach, .big_endian = big_endian, .unwind = unwind, .load = load,
                      .fn = fn, .arg = arg};
    if (unwind->unwinding_size <= unwind->eh_frame_hdr_size || !load->code || load->code_size == 0)
        return 0;
    if (!r->scratch && !(r->scratch = malloc(MAX_ROWS * sizeof *r->scratch))) {
        report(&c, PT_JD_ERROR, "out of memory: rows of the LOAD at 0x%zx not checked", load->offset);
        return c.errors;
    }
    char name[41];
    size_t nl = load->name_len < sizeof name - 1 ? load->name_len : sizeof name - 1;
    for (size_t i = 0; i < nl; i++) {
        unsigned char ch = (unsigned char)load->name[i];
        name[i] = ch < 0x20 || ch == 0x7f || ch == '"' ? '?' : (char)ch;
    }
    name[nl] = 0;
    snprintf(c.who, sizeof c.who, "LOAD at 0x%zx (\"%s%s\")", load->offset, name, load->name_len > nl ? "..." : "");

    c.names = table_for(elf_mach, NULL);
    /* Where a table exists, its CIE tells whether a call leaves the return
     * address in a register (no rule = "still there") or on the stack
     * (x86: a rule); a machine without one is not held to either. */
    for (int k = 0; c.names && k < PT_INSN_MAX_CFI; k++)
        if (c.names->cie_initial[k].op != PT_CFI_NONE && c.names->cie_initial[k].reg == c.names->ra_column &&
            c.names->cie_initial[k].op != PT_CFI_DEF_CFA)
            c.ra_needs_rule = true;
    c.table = match_table(r, elf_mach, big_endian, load, &c.table_arch);

    c.text = TEXT_ADDR;
    c.end = TEXT_ADDR + load->code_size;
    size_t eh_size = (size_t)(unwind->unwinding_size - unwind->eh_frame_hdr_size);
    struct pt_eh_ctx ctx = {.data = unwind->unwinding, .len = eh_size,
                            .address = (TEXT_ADDR + load->code_size + 7) & ~(uint64_t)7,
                            .big_endian = big_endian, .addr_size = pt_jd_addr_size(elf_mach),
                            .file_offset = unwind->offset + PT_JD_UNWIND_FIXED};
    c.ctx = &ctx;
    r->n_cover = 0;
    if (pt_eh_walk(&ctx, fde_cb, &c, NULL, NULL) < 0) {
        report(&c, PT_JD_ERROR, "%s: .eh_frame: %s", c.who, ctx.error);
        return c.errors;
    }
    r->stats.loads++;
    check_cover(&c);
    if (c.bad_cfa)
        report(&c, PT_JD_ERROR, "%s: %zu row%s define no CFA, first at +0x%" PRIx64 ": no unwinding there", c.who,
               c.bad_cfa, c.bad_cfa == 1 ? "" : "s", c.first_bad_cfa);
    if (c.bad_ra)
        report(&c, PT_JD_ERROR,
               "%s: %zu row%s give no usable return-address rule, first at +0x%" PRIx64
               " (rule: %s): unwinding stops there",
               c.who, c.bad_ra, c.bad_ra == 1 ? "" : "s", c.first_bad_ra, c.first_ra_text);
    if (c.table) {
        r->stats.table_loads++;
        r->stats.boundaries += c.compared;
        r->stats.table = c.table_arch->name;
        if (c.differ) {
            size_t k = c.first_differ_insn, off = c.table->l.insn_off[k];
            const char *insn = c.table_arch->insns[k].text ? c.table_arch->insns[k].text : "?";
            report(&c, PT_JD_ERROR,
                   "%s is the %s trampoline but its rules differ from the table's at %zu of %zu instruction "
                   "boundaries; first at pc 0x%" PRIx64 " (+0x%zx, %s): found %s, the table's: %s",
                   c.who, c.table_arch->name, c.differ, c.compared, load->code_addr + off, off, insn, c.first_found,
                   c.first_want);
        }
    }
    return c.errors;
}
