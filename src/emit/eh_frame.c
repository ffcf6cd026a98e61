/* SPDX-License-Identifier: MIT */
/* Emit layer: .eh_frame and .eh_frame_hdr from a laid-out table or from
 * CFI rows (CIE, FDE programs, the jitdump unwinding blob). */
#include "emit/eh_frame.h"

#include "emit/cfi_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void pt_cfi_advance(struct pt_buf *b, uint64_t delta)
{
    if (delta == 0)
        return;
    if (delta < 0x40) {
        pt_buf_u8(b, (uint8_t)(DW_CFA_advance_loc | delta));
    } else if (delta <= 0xff) {
        pt_buf_u8(b, DW_CFA_advance_loc1);
        pt_buf_u8(b, (uint8_t)delta);
    } else if (delta <= 0xffff) {
        pt_buf_u8(b, DW_CFA_advance_loc2);
        pt_buf_u16(b, (uint16_t)delta);
    } else {
        pt_buf_u8(b, DW_CFA_advance_loc4);
        pt_buf_u32(b, (uint32_t)delta);
    }
}

/* Divides an offset by the data alignment factor, exactly. */
static int factor(const struct pt_arch *a, int64_t off, int64_t *out)
{
    if (a->cie_data_align == 0 || off % a->cie_data_align) {
        errno = EINVAL;
        return -1;
    }
    *out = off / a->cie_data_align;
    return 0;
}

int pt_cfi_op(struct pt_buf *b, const struct pt_arch *a, const struct pt_cfi *c)
{
    int64_t f;
    switch (c->op) {
    case PT_CFI_NONE:
        return 0;
    case PT_CFI_DEF_CFA:
        if (c->offset >= 0) {
            pt_buf_u8(b, DW_CFA_def_cfa);
            pt_buf_uleb(b, c->reg);
            pt_buf_uleb(b, (uint64_t)c->offset);
            return 0;
        }
        if (factor(a, c->offset, &f) < 0)
            return -1;
        pt_buf_u8(b, DW_CFA_def_cfa_sf);
        pt_buf_uleb(b, c->reg);
        pt_buf_sleb(b, f);
        return 0;
    case PT_CFI_DEF_CFA_REGISTER:
        pt_buf_u8(b, DW_CFA_def_cfa_register);
        pt_buf_uleb(b, c->reg);
        return 0;
    case PT_CFI_DEF_CFA_OFFSET:
        if (c->offset >= 0) {
            pt_buf_u8(b, DW_CFA_def_cfa_offset);
            pt_buf_uleb(b, (uint64_t)c->offset);
            return 0;
        }
        if (factor(a, c->offset, &f) < 0)
            return -1;
        pt_buf_u8(b, DW_CFA_def_cfa_offset_sf);
        pt_buf_sleb(b, f);
        return 0;
    case PT_CFI_OFFSET:
        if (factor(a, c->offset, &f) < 0)
            return -1;
        if (f >= 0 && c->reg < 64) {
            pt_buf_u8(b, (uint8_t)(DW_CFA_offset | c->reg));
            pt_buf_uleb(b, (uint64_t)f);
        } else if (f >= 0) {
            pt_buf_u8(b, DW_CFA_offset_extended);
            pt_buf_uleb(b, c->reg);
            pt_buf_uleb(b, (uint64_t)f);
        } else {
            pt_buf_u8(b, DW_CFA_offset_extended_sf);
            pt_buf_uleb(b, c->reg);
            pt_buf_sleb(b, f);
        }
        return 0;
    case PT_CFI_RESTORE:
        if (c->reg < 64) {
            pt_buf_u8(b, (uint8_t)(DW_CFA_restore | c->reg));
        } else {
            pt_buf_u8(b, DW_CFA_restore_extended);
            pt_buf_uleb(b, c->reg);
        }
        return 0;
    case PT_CFI_SAME_VALUE:
        pt_buf_u8(b, DW_CFA_same_value);
        pt_buf_uleb(b, c->reg);
        return 0;
    case PT_CFI_UNDEFINED:
        pt_buf_u8(b, DW_CFA_undefined);
        pt_buf_uleb(b, c->reg);
        return 0;
    case PT_CFI_NEGATE_RA_STATE:
        pt_buf_u8(b, DW_CFA_AARCH64_negate_ra_state);
        return 0;
    }
    errno = EINVAL;
    return -1;
}

/* A run of rows at one code offset, [*i, return) of the valid ones. */
static size_t group_end(const struct pt_cfi_row *rows, size_t i, size_t n, size_t code_size)
{
    size_t j = i + 1;
    while (j < n && (rows[j].cfi.op == PT_CFI_NONE || rows[j].at >= code_size || rows[j].at == rows[i].at))
        j++;
    return j;
}

static bool skipped(const struct pt_cfi_row *r, size_t code_size)
{
    return r->cfi.op == PT_CFI_NONE || r->at >= code_size; /* rules after the last instruction describe no code */
}

enum { MARK_REMEMBER = 1, MARK_RESTORE = 2 };

/* Where the program leaves the rules at entry and later comes back to
 * them (an epilogue), and the rows that come back take more than the two
 * bytes of DW_CFA_remember_state before the leaving row plus
 * DW_CFA_restore_state in their place: marks both (x86-64's
 * `pop %rbp; ret` is 4 bytes of rules, 2 this way).  Also checks the
 * order and the code alignment of every row. */
static int mark_epilogues(const struct pt_arch *a, const struct pt_cfi_row *rows, size_t n, size_t code_size,
                          uint8_t *mark)
{
    struct pt_cfi_state entry, cur;
    pt_cfi_state_entry(&entry, a);
    cur = entry;
    /* a group's rules are a few bytes; one that fills this is long enough */
    uint8_t room[32];
    struct pt_buf ops;
    pt_buf_init_fixed(&ops, room, sizeof room, a->big_endian);
    size_t loc = 0, open = n;
    for (size_t i = 0; i < n;) {
        if (skipped(&rows[i], code_size)) {
            i++;
            continue;
        }
        if (rows[i].at < loc || (rows[i].at - loc) % a->cie_code_align) {
            errno = EINVAL; /* unsorted, or not a multiple of the code alignment factor */
            return -1;
        }
        loc = rows[i].at;
        size_t end = group_end(rows, i, n, code_size);
        bool before = pt_cfi_state_equal(&cur, &entry);
        ops.len = 0;
        ops.failed = false;
        for (size_t k = i; k < end; k++) {
            if (skipped(&rows[k], code_size))
                continue;
            pt_cfi_state_apply(&cur, &rows[k].cfi, &entry);
            if (pt_cfi_op(&ops, a, &rows[k].cfi) < 0)
                return -1;
        }
        bool after = pt_cfi_state_equal(&cur, &entry);
        if (before && !after) {
            open = i;
        } else if (!before && after && open < n) {
            if (ops.failed || ops.len > 2) {
                mark[open] |= MARK_REMEMBER;
                mark[i] |= MARK_RESTORE;
            }
            open = n;
        }
        i = end;
    }
    return 0;
}

int pt_cfi_rows_program(struct pt_buf *b, const struct pt_arch *a, const struct pt_cfi_row *rows, size_t n,
                        size_t code_size)
{
    if (n == 0)
        return 0;
    /* a table's rows fit on the stack: laying one out allocates nothing */
    uint8_t small[PT_LAYOUT_MAX_INSNS * PT_INSN_MAX_CFI];
    uint8_t *mark = n <= sizeof small ? memset(small, 0, n) : calloc(n, 1);
    if (!mark) {
        errno = ENOMEM;
        return -1;
    }
    int r = mark_epilogues(a, rows, n, code_size, mark);
    size_t loc = 0;
    for (size_t i = 0; r == 0 && i < n;) {
        if (skipped(&rows[i], code_size)) {
            i++;
            continue;
        }
        size_t end = group_end(rows, i, n, code_size);
        pt_cfi_advance(b, (rows[i].at - loc) / a->cie_code_align);
        loc = rows[i].at;
        if (mark[i] & MARK_REMEMBER)
            pt_buf_u8(b, DW_CFA_remember_state);
        if (mark[i] & MARK_RESTORE) {
            pt_buf_u8(b, DW_CFA_restore_state);
        } else {
            for (size_t k = i; r == 0 && k < end; k++)
                if (!skipped(&rows[k], code_size))
                    r = pt_cfi_op(b, a, &rows[k].cfi);
        }
        i = end;
    }
    if (mark != small)
        free(mark);
    return r;
}

size_t pt_layout_cfi_rows(const struct pt_layout *l, struct pt_cfi_row *rows)
{
    const struct pt_arch *a = l->arch;
    size_t n = 0;
    for (size_t i = 0; i < a->n_insns && i < PT_LAYOUT_MAX_INSNS; i++) {
        const struct pt_insn *in = &a->insns[i];
        for (int k = 0; k < PT_INSN_MAX_CFI && in->cfi[k].op != PT_CFI_NONE; k++)
            rows[n++] = (struct pt_cfi_row){.at = (uint32_t)(l->insn_off[i] + in->len), .cfi = in->cfi[k]};
    }
    return n;
}

int pt_cfi_program(struct pt_buf *b, const struct pt_layout *l)
{
    struct pt_cfi_row rows[PT_LAYOUT_MAX_INSNS * PT_INSN_MAX_CFI];
    size_t n = pt_layout_cfi_rows(l, rows);
    return pt_cfi_rows_program(b, l->arch, rows, n, l->code_len);
}

/* DW_CFA_nop up to a multiple of 4 bytes from the entry start (the
 * offset, never the absolute address).  4, not the address size: the
 * readers (libgcc, libunwind, libdw, gdb) follow the length fields and
 * read the 4-byte fields of an entry at 4-byte alignment, and LLVM's
 * assembler pads .eh_frame entries to 4 on 64-bit targets as well; it
 * saves 4 bytes on an FDE of 28 (17 of fields, 11 of x86-64's rules). */
static void pad_entry(struct pt_buf *b, size_t start)
{
    while (!b->failed && (b->len - start) % 4) /* a failed buffer no longer grows */
        pt_buf_u8(b, DW_CFA_nop);
    pt_buf_set_u32(b, start, (uint32_t)(b->len - start - 4));
}

size_t pt_eh_cie(struct pt_buf *b, const struct pt_arch *a)
{
    return pt_eh_cie_enc(b, a, DW_EH_PE_pcrel | DW_EH_PE_sdata4);
}

size_t pt_eh_cie_enc(struct pt_buf *b, const struct pt_arch *a, uint8_t fde_enc)
{
    size_t start = b->len;
    pt_buf_u32(b, 0);   /* length, set by pad_entry */
    pt_buf_u32(b, 0);   /* CIE id */
    pt_buf_u8(b, 1);    /* version */
    pt_buf_put(b, "zR", 3);
    pt_buf_uleb(b, a->cie_code_align);
    pt_buf_sleb(b, a->cie_data_align);
    pt_buf_u8(b, a->ra_column);
    pt_buf_uleb(b, 1);  /* augmentation data length */
    pt_buf_u8(b, fde_enc);
    for (int k = 0; k < PT_INSN_MAX_CFI && a->cie_initial[k].op != PT_CFI_NONE; k++)
        pt_cfi_op(b, a, &a->cie_initial[k]);
    pad_entry(b, start);
    return start;
}

size_t pt_eh_fde(struct pt_buf *b, size_t cie_off, int64_t code_rel, uint64_t range,
                 const uint8_t *program, size_t program_len)
{
    size_t start = b->len;
    pt_buf_u32(b, 0);                                   /* length */
    pt_buf_u32(b, (uint32_t)(start + 4 - cie_off));     /* CIE pointer */
    pt_buf_u32(b, (uint32_t)(code_rel - (int64_t)b->len)); /* pc_begin, pcrel */
    pt_buf_u32(b, (uint32_t)range);                     /* pc_range */
    pt_buf_uleb(b, 0);                                  /* augmentation data length */
    pt_buf_put(b, program, program_len);
    pad_entry(b, start);
    return start;
}

size_t pt_eh_fde_abs(struct pt_buf *b, const struct pt_arch *a, size_t cie_off, uint64_t pc_begin, uint64_t range,
                     const uint8_t *program, size_t program_len)
{
    size_t start = b->len;
    pt_buf_u32(b, 0);                               /* length */
    pt_buf_u32(b, (uint32_t)(start + 4 - cie_off)); /* CIE pointer */
    pt_buf_addr(b, pc_begin, a->addr_size);         /* absptr: an address of the target's size */
    pt_buf_addr(b, range, a->addr_size);
    pt_buf_uleb(b, 0);                              /* augmentation data length */
    pt_buf_put(b, program, program_len);
    pad_entry(b, start);
    return start;
}

void pt_eh_terminator(struct pt_buf *b)
{
    pt_buf_u32(b, 0);
}

static int row_cmp(const void *x, const void *y)
{
    const struct pt_hdr_row *a = x, *b = y;
    return (a->pc > b->pc) - (a->pc < b->pc);
}

void pt_eh_hdr(struct pt_buf *b, int64_t eh_frame_rel, struct pt_hdr_row *rows, size_t n)
{
    qsort(rows, n, sizeof *rows, row_cmp);
    pt_buf_u8(b, 1);                                  /* version */
    pt_buf_u8(b, DW_EH_PE_pcrel | DW_EH_PE_sdata4);   /* eh_frame_ptr_enc */
    pt_buf_u8(b, DW_EH_PE_udata4);                    /* fde_count_enc */
    pt_buf_u8(b, DW_EH_PE_datarel | DW_EH_PE_sdata4); /* table_enc */
    pt_buf_u32(b, (uint32_t)(eh_frame_rel - 4));      /* relative to this field */
    pt_buf_u32(b, (uint32_t)n);
    for (size_t i = 0; i < n; i++) {
        pt_buf_u32(b, (uint32_t)rows[i].pc);
        pt_buf_u32(b, (uint32_t)rows[i].fde);
    }
}

int pt_eh_jitdump_blob(struct pt_buf *b, const struct pt_layout *l, size_t *eh_frame_size)
{
    struct pt_buf prog;
    pt_buf_init(&prog, l->arch->big_endian);
    if (pt_cfi_program(&prog, l) < 0) {
        pt_buf_free(&prog);
        return -1;
    }
    int r = prog.failed ? (errno = ENOMEM, -1)
                        : pt_eh_jitdump_blob_prog(b, l->arch, l->size, prog.data, prog.len, eh_frame_size);
    pt_buf_free(&prog);
    return r;
}

int pt_eh_jitdump_blob_prog(struct pt_buf *b, const struct pt_arch *a, size_t code_size, const uint8_t *program,
                            size_t program_len, size_t *eh_frame_size)
{
    size_t base = b->len;
    /* genelf: .text at 0, .eh_frame at ALIGN8(code_size) */
    int64_t text_rel = -(int64_t)((code_size + 7) & ~(size_t)7);
    size_t cie = pt_eh_cie(b, a);
    size_t fde = pt_eh_fde(b, cie, text_rel + (int64_t)base, code_size, program, program_len);
    pt_eh_terminator(b);
    size_t eh_size = b->len - base;
    struct pt_hdr_row row = {.pc = text_rel - (int64_t)eh_size, .fde = (int64_t)fde - (int64_t)b->len};
    pt_eh_hdr(b, -(int64_t)eh_size, &row, 1);
    if (b->failed) {
        errno = ENOMEM;
        return -1;
    }
    *eh_frame_size = eh_size;
    return 0;
}
