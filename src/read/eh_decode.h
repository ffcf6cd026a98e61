/* SPDX-License-Identifier: MIT */
/* Decodes .eh_frame and .eh_frame_hdr from untrusted bytes into CIEs, FDEs
 * and rule rows (pc -> CFA rule + register rules).  Every read is bounds
 * checked; errors come back as a message, never a crash. */
#ifndef PERFTRAMP_EH_DECODE_H
#define PERFTRAMP_EH_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_ROW_MAX_RULES 24

enum pt_rule_kind {
    PT_RULE_UNDEFINED = 0,  /* never listed: absence means "as in the CIE default" */
    PT_RULE_SAME_VALUE,
    PT_RULE_OFFSET,         /* saved at CFA + offset */
    PT_RULE_VAL_OFFSET,     /* value is CFA + offset */
    PT_RULE_REGISTER,       /* in register `offset` */
    PT_RULE_EXPRESSION,
    PT_RULE_VAL_EXPRESSION,
    PT_RULE_EXPLICIT_UNDEFINED, /* DW_CFA_undefined */
};

struct pt_reg_rule {
    uint32_t reg;
    uint8_t kind;      /* enum pt_rule_kind */
    int64_t offset;    /* bytes (already multiplied by the data alignment) */
};

struct pt_row {
    uint64_t loc;          /* bytes from pc_begin */
    uint32_t cfa_reg;
    int64_t cfa_offset;
    bool cfa_expression;
    bool ra_signed;        /* AArch64 negate_ra_state parity */
    size_t n_rules;        /* sorted by register */
    struct pt_reg_rule rules[PT_ROW_MAX_RULES];
};

struct pt_cie {
    size_t offset;          /* in the section */
    uint8_t version;
    char augmentation[16];
    uint64_t code_align;
    int64_t data_align;
    uint64_t ra_column;
    uint8_t fde_encoding;
    uint8_t lsda_encoding;
    bool has_personality;
    bool signal_frame;
    const uint8_t *insns;
    size_t insns_len;
};

struct pt_fde {
    size_t offset;
    size_t cie_offset;
    uint64_t pc_begin;      /* decoded absolute address */
    uint64_t pc_range;
    const uint8_t *insns;
    size_t insns_len;
};

struct pt_eh_ctx {
    const uint8_t *data;
    size_t len;
    uint64_t address;       /* run-time address of data[0], for pcrel */
    bool big_endian;
    unsigned addr_size;     /* 4 or 8 */
    char error[160];        /* set on failure */
    size_t error_offset;
    uint64_t file_offset;   /* file offset of data[0], for positions in messages (0: section-relative) */
};

/* Calls `fde_cb` for each FDE in section order, with its CIE.  Stops at a
 * zero terminator or the end.  Returns 0, a callback's non-zero value, or
 * -1 with ctx->error set. */
typedef int (*pt_fde_cb)(void *arg, const struct pt_cie *cie, const struct pt_fde *fde);
int pt_eh_walk(struct pt_eh_ctx *ctx, pt_fde_cb fde_cb, void *arg, size_t *n_cies, size_t *n_fdes);

/* Runs the CIE initial instructions then the FDE program; writes one row
 * per location change (the first at loc 0).  Returns the row count, or -1
 * with ctx->error set (bad opcode, truncated, too many rows/rules). */
int pt_eh_rows(struct pt_eh_ctx *ctx, const struct pt_cie *cie, const struct pt_fde *fde,
               struct pt_row *rows, size_t max_rows);

/* Finds the rule for `reg` in a row; NULL when the row lists none. */
const struct pt_reg_rule *pt_row_rule(const struct pt_row *row, uint32_t reg);

struct pt_eh_hdr_info {
    uint8_t version, eh_frame_ptr_enc, fde_count_enc, table_enc;
    uint64_t eh_frame_ptr;  /* decoded absolute address */
    uint64_t fde_count;
    bool sorted;            /* table rows ascending by pc */
};
/* Decodes .eh_frame_hdr at run-time address `address`; rows (pc, fde
 * absolute addresses) go to the callback when non-NULL. */
int pt_eh_hdr_decode(struct pt_eh_ctx *ctx, struct pt_eh_hdr_info *out,
                     void (*row_cb)(void *arg, uint64_t pc, uint64_t fde), void *arg);

/* Reads one encoded pointer; exposed for the tests. */
bool pt_eh_read_uleb(const uint8_t **p, const uint8_t *end, uint64_t *out);
bool pt_eh_read_sleb(const uint8_t **p, const uint8_t *end, int64_t *out);

#endif
