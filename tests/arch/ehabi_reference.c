/* SPDX-License-Identifier: MIT */
/* The EHABI half of the reference cross-check (ehabi_reference.h). */
#include "ehabi_reference.h"

#include "emit/ehabi.h"
#include "read/ehabi_decode.h"

#include <stdio.h>
#include <string.h>

enum { CODE = 0x10000, TABLES = 0x30000, CAP = 4096 };

/* The frame an entry recovers; -1 with why. */
static int entry_frame(const uint8_t *index, size_t index_len, uint64_t index_addr, const uint8_t *extab,
                       size_t extab_len, uint64_t extab_addr, size_t i, bool be, struct pt_ehabi_entry *en,
                       struct pt_ehabi_frame *f, const char **why)
{
    if (pt_ehabi_read_entry(index, index_len, index_addr, extab, extab_len, extab_addr, i, be, en, why) < 0)
        return -1;
    if (en->cantunwind || en->personality > 2) {
        *why = en->cantunwind ? "EXIDX_CANTUNWIND" : "a generic personality routine";
        return -1;
    }
    return pt_ehabi_execute(en->ops, en->n_ops, f, why);
}

static void ops_text(const struct pt_ehabi_entry *en, char *out, size_t len)
{
    out[0] = 0;
    for (size_t k = 0, at = 0; k < en->n_ops && at + 4 < len; k++)
        at += (size_t)snprintf(out + at, len - at, "%s%02x", k ? " " : "", en->ops[k]);
}

int ehabi_reference_check(const struct pt_layout *l, const struct pt_elf *e, uint64_t text_addr,
                          ehabi_row_at_fn row_at, const void *rows, char *why, size_t why_len, char *detail,
                          size_t detail_len)
{
    const struct pt_arch *a = l->arch;
    const char *w = "";
    struct pt_ehabi_region r[PT_EHABI_MAX_REGIONS];
    size_t n;
    if (pt_ehabi_layout_regions(l, r, PT_EHABI_MAX_REGIONS, &n, &w) < 0) {
        snprintf(why, why_len, "the emitter derives no EHABI entries: %s", w);
        return -1;
    }
    uint8_t tab[CAP];
    size_t n_index, len = pt_ehabi_tables(tab, sizeof tab, TABLES, CODE, 1, 0, l->size, r, n, a->big_endian, &n_index);
    if (!len) {
        snprintf(why, why_len, "the emitter writes no EHABI tables");
        return -1;
    }

    /* 1. at every instruction boundary: the entry libgcc finds there (the
     * last one starting at or below pc - 2) against the reference's rows */
    for (size_t i = 0; i < a->n_insns; i++) {
        uint64_t off = l->insn_off[i], key = CODE + off - 2;
        struct pt_ehabi_entry en, next;
        size_t k = 0;
        while (k + 1 < n_index &&
               pt_ehabi_read_entry(tab, n_index * 8, TABLES, tab, len, TABLES, k + 1, a->big_endian, &next, &w) == 0 &&
               next.start <= key)
            k++;
        struct pt_ehabi_frame ours, theirs;
        if (entry_frame(tab, n_index * 8, TABLES, tab, len, TABLES, k, a->big_endian, &en, &ours, &w) < 0) {
            snprintf(why, why_len, "boundary %zu (+%llu): our entry %zu: %s", i, (unsigned long long)off, k, w);
            return -1;
        }
        if (pt_ehabi_frame_from_row(row_at(rows, off), a->ra_column, &theirs) < 0) {
            snprintf(why, why_len, "boundary %zu: the reference's rule there has no EHABI equivalent", i);
            return -1;
        }
        char d[120];
        if (!pt_ehabi_same_caller(&ours, &theirs, d, sizeof d)) {
            snprintf(why, why_len, "boundary %zu (+%llu, before \"%s\"): our EHABI entry against the reference's CFI: %s",
                     i, (unsigned long long)off, a->insns[i].text, d);
            return -1;
        }
    }

    /* 2. the toolchain's own entry for the function, against our body */
    struct pt_elf_section ix, xt = {0};
    if (pt_elf_section(e, ".ARM.exidx", &ix) < 0 || !ix.data) {
        snprintf(why, why_len, "the reference has no .ARM.exidx (.fnstart/.fnend missing?)");
        return -1;
    }
    pt_elf_section(e, ".ARM.extab", &xt);
    size_t body = 0, widest = 0;
    for (size_t k = 0; k < n; k++) {
        size_t end = k + 1 < n ? r[k + 1].start : l->code_len, insns = 0;
        for (size_t i = 0; i < a->n_insns; i++)
            insns += l->insn_off[i] >= r[k].start && l->insn_off[i] < end;
        if (insns > widest)
            widest = insns, body = k;
    }
    struct pt_ehabi_entry mine, ref;
    struct pt_ehabi_frame fm, fr;
    if (entry_frame(tab, n_index * 8, TABLES, tab, len, TABLES, body, a->big_endian, &mine, &fm, &w) < 0) {
        snprintf(why, why_len, "our body entry: %s", w);
        return -1;
    }
    size_t found = (size_t)-1;
    for (size_t k = 0; k < ix.size / 8; k++) {
        if (pt_ehabi_read_entry(ix.data, ix.size, ix.addr, xt.data, xt.size, xt.addr, k, a->big_endian, &ref, &w) == 0 &&
            ref.start == text_addr)
            found = k;
    }
    if (found == (size_t)-1) {
        snprintf(why, why_len, "no .ARM.exidx entry starts at the reference's function");
        return -1;
    }
    if (entry_frame(ix.data, ix.size, ix.addr, xt.data, xt.size, xt.addr, found, a->big_endian, &ref, &fr, &w) < 0) {
        snprintf(why, why_len, "the reference's entry: %s", w);
        return -1;
    }
    char d[120], a_ops[160], b_ops[160];
    ops_text(&mine, a_ops, sizeof a_ops);
    ops_text(&ref, b_ops, sizeof b_ops);
    if (!pt_ehabi_same_caller(&fm, &fr, d, sizeof d)) {
        snprintf(why, why_len, "the body (+%u): ours [%s] against the reference's [%s]: %s", r[body].start, a_ops, b_ops,
                 d);
        return -1;
    }
    snprintf(detail, detail_len,
             "%zu EHABI regions, the entry at each of %zu boundaries recovers what the reference's CFI says; "
             "the body's (+%u) [%s] recovers what the toolchain's own entry [%s%s] does",
             n, a->n_insns, r[body].start, a_ops, b_ops, ref.inline_entry ? ", inline" : ", .ARM.extab");
    return 0;
}
