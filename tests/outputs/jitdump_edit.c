/* SPDX-License-Identifier: MIT */
/* jitdump_edit IN OUT EDIT...: writes a copy of a jitdump with the
 * .eh_frame of its UNWINDING_INFO records changed on purpose, so a test can
 * show that a consumer (perf inject + perf report, perftramp check) really
 * depends on those bytes.  The library never offers such a switch; the
 * tests break a real dump after the fact.
 *
 *   pc-begin DELTA        every FDE's pc_begin moved by DELTA bytes (no FDE
 *                         covers the code any more for |DELTA| >= its size)
 *   cfa-offset FROM TO    in every FDE program, the first
 *                         DW_CFA_def_cfa_offset FROM becomes TO
 *
 * Records are framed with the project's reader (src/read/jitdump_reader.h),
 * FDEs found with its decoder (src/read/eh_decode.h), and every edit is
 * decoded again to confirm it took effect.  Exit 0 when at least one FDE
 * was changed, 1 otherwise, 2 on usage or I/O errors. */
#include "read/eh_decode.h"
#include "read/jitdump_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* DWARF 4, 7.23 */
#define DW_CFA_DEF_CFA_OFFSET 0x0e
#define MAX_ROWS 256

enum edit_kind { EDIT_PC_BEGIN, EDIT_CFA_OFFSET };

struct edit {
    enum edit_kind kind;
    int64_t delta;       /* pc-begin */
    uint8_t from, to;    /* cfa-offset (one-byte ULEB128 operands) */
};

struct fde_ref {
    size_t offset;       /* of the FDE in the section */
    size_t insns_off;    /* of its program in the section */
    size_t insns_len;
    uint64_t pc_begin;
    uint8_t fde_encoding;
    struct pt_cie cie;
    struct pt_fde fde;
};

struct fde_list {
    struct fde_ref v[64];
    size_t n;
    const uint8_t *base;
};

static int collect_fde(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct fde_list *l = arg;
    if (l->n == sizeof l->v / sizeof l->v[0])
        return 0;
    l->v[l->n++] = (struct fde_ref){.offset = fde->offset,
                                    .insns_off = (size_t)(fde->insns - l->base),
                                    .insns_len = fde->insns_len,
                                    .pc_begin = fde->pc_begin,
                                    .fde_encoding = cie->fde_encoding,
                                    .cie = *cie,
                                    .fde = *fde};
    return 0;
}

static uint64_t get_n(const uint8_t *p, unsigned n, bool big)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

static void put_n(uint8_t *p, unsigned n, bool big, uint64_t v)
{
    for (unsigned i = 0; i < n; i++)
        p[big ? n - 1 - i : i] = (uint8_t)(v >> (8 * i));
}

static int walk(uint8_t *eh, size_t len, bool big, struct fde_list *l)
{
    struct pt_eh_ctx ctx = {.data = eh, .len = len, .address = 0x100000, .big_endian = big, .addr_size = 8};
    memset(l, 0, sizeof *l);
    l->base = eh;
    if (pt_eh_walk(&ctx, collect_fde, l, NULL, NULL) < 0) {
        fprintf(stderr, "jitdump_edit: .eh_frame does not decode: %s\n", ctx.error);
        return -1;
    }
    return 0;
}

/* The CFA offsets of an FDE's rows, for before/after comparison. */
static int cfa_offsets(uint8_t *eh, size_t len, bool big, const struct fde_ref *f, int64_t *out, size_t max)
{
    struct pt_eh_ctx ctx = {.data = eh, .len = len, .address = 0x100000, .big_endian = big, .addr_size = 8};
    static struct pt_row rows[MAX_ROWS];
    int n = pt_eh_rows(&ctx, &f->cie, &f->fde, rows, MAX_ROWS);
    for (int i = 0; i < n && (size_t)i < max; i++)
        out[i] = rows[i].cfa_offset;
    return n;
}

/* Edits one record's .eh_frame in place; returns the FDEs changed. */
static int edit_eh(uint8_t *eh, size_t len, bool big, const struct edit *e)
{
    struct fde_list before, after;
    if (walk(eh, len, big, &before) < 0)
        return -1;
    int changed = 0;
    for (size_t i = 0; i < before.n; i++) {
        const struct fde_ref *f = &before.v[i];
        if (e->kind == EDIT_PC_BEGIN) {
            /* 32-bit entry: u32 length, u32 CIE pointer, then pc_begin */
            unsigned size = (f->fde_encoding & 0x0f) == 0x0b || (f->fde_encoding & 0x0f) == 0x03 ? 4
                            : (f->fde_encoding & 0x0f) == 0x0c || (f->fde_encoding & 0x0f) == 0x04 ? 8
                                                                                                    : 0;
            if (size == 0 || get_n(eh + f->offset, 4, big) == 0xffffffffu) {
                fprintf(stderr, "jitdump_edit: FDE at %zu: pointer encoding 0x%02x not handled\n", f->offset,
                        f->fde_encoding);
                return -1;
            }
            uint8_t *field = eh + f->offset + 8;
            put_n(field, size, big, get_n(field, size, big) + (uint64_t)e->delta);
            changed++;
        } else {
            int64_t old_cfa[MAX_ROWS], new_cfa[MAX_ROWS];
            int n_old = cfa_offsets(eh, len, big, f, old_cfa, MAX_ROWS);
            for (size_t k = f->insns_off; k + 1 < f->insns_off + f->insns_len; k++) {
                if (eh[k] == DW_CFA_DEF_CFA_OFFSET && eh[k + 1] == e->from) {
                    eh[k + 1] = e->to;
                    break;
                }
            }
            /* keep it only when the decoder now sees exactly that change */
            int n_new = cfa_offsets(eh, len, big, f, new_cfa, MAX_ROWS);
            int diff = 0;
            for (int r = 0; n_old == n_new && r < n_old; r++)
                if (old_cfa[r] != new_cfa[r]) {
                    if (old_cfa[r] != e->from || new_cfa[r] != e->to)
                        diff = -1000;
                    diff++;
                }
            if (n_old != n_new || diff < 0) {
                fprintf(stderr, "jitdump_edit: FDE at %zu: the edit changed more than one CFA offset\n", f->offset);
                return -1;
            }
            changed += diff > 0;
        }
    }
    if (walk(eh, len, big, &after) < 0 || after.n != before.n)
        return -1;
    for (size_t i = 0; e->kind == EDIT_PC_BEGIN && i < after.n; i++)
        if (after.v[i].pc_begin != before.v[i].pc_begin + (uint64_t)e->delta) {
            fprintf(stderr, "jitdump_edit: FDE at %zu: pc_begin did not move\n", after.v[i].offset);
            return -1;
        }
    return changed;
}

static int usage(void)
{
    fprintf(stderr, "usage: jitdump_edit IN OUT pc-begin DELTA | cfa-offset FROM TO\n");
    return 2;
}

int main(int argc, char **argv)
{
    struct edit e = {0};
    if (argc == 5 && strcmp(argv[3], "pc-begin") == 0) {
        e.kind = EDIT_PC_BEGIN;
        e.delta = strtoll(argv[4], NULL, 0);
    } else if (argc == 6 && strcmp(argv[3], "cfa-offset") == 0) {
        long from = strtol(argv[4], NULL, 0), to = strtol(argv[5], NULL, 0);
        if (from < 0 || from > 127 || to < 0 || to > 127)
            return usage();
        e.kind = EDIT_CFA_OFFSET;
        e.from = (uint8_t)from;
        e.to = (uint8_t)to;
    } else {
        return usage();
    }
    FILE *in = fopen(argv[1], "rb");
    if (!in) {
        fprintf(stderr, "jitdump_edit: %s: %s\n", argv[1], strerror(errno));
        return 2;
    }
    size_t cap = 1 << 16, len = 0;
    uint8_t *data = malloc(cap);
    for (size_t r; data && (r = fread(data + len, 1, cap - len, in)) > 0;) {
        len += r;
        if (len == cap) {
            uint8_t *nd = realloc(data, cap *= 2);
            if (!nd)
                free(data);
            data = nd;
        }
    }
    fclose(in);
    if (!data) {
        fprintf(stderr, "jitdump_edit: out of memory\n");
        return 2;
    }
    struct pt_jd_iter it;
    struct pt_jd_record r;
    if (pt_jd_iter_init(&it, data, len) < 0) {
        fprintf(stderr, "jitdump_edit: %s: %s\n", argv[1], it.error);
        free(data);
        return 2;
    }
    const uint16_t one = 1;
    bool big = (*(const uint8_t *)&one == 0) != it.header.swapped;
    size_t records = 0, fdes = 0;
    int k;
    while ((k = pt_jd_next(&it, &r)) == 1) {
        if (r.id != PT_JD_UNWINDING_INFO || r.malformed || r.unwinding_size <= r.eh_frame_hdr_size)
            continue;
        uint8_t *eh = data + (r.unwinding - data);
        int n = edit_eh(eh, (size_t)(r.unwinding_size - r.eh_frame_hdr_size), big, &e);
        if (n < 0) {
            fprintf(stderr, "jitdump_edit: UNWINDING_INFO at %zu: not edited\n", r.offset);
            free(data);
            return 1;
        }
        records += n > 0;
        fdes += (size_t)n;
    }
    FILE *out = fopen(argv[2], "wb");
    if (!out || fwrite(data, 1, len, out) != len || fclose(out) != 0) {
        fprintf(stderr, "jitdump_edit: %s: %s\n", argv[2], strerror(errno));
        free(data);
        return 2;
    }
    free(data);
    printf("jitdump_edit: %s: %zu FDEs in %zu UNWINDING_INFO records\n", argv[3], fdes, records);
    return fdes ? 0 : 1;
}
