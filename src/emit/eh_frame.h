/* SPDX-License-Identifier: MIT */
/* Serializes a table's CFI as .eh_frame (CIE + FDEs, augmentation "zR",
 * pcrel|sdata4 pointers) and .eh_frame_hdr, in the table's byte order.
 * Works for any table on any host.  Formats: LSB 5.0 "Exception Frames"
 * (.eh_frame, .eh_frame_hdr) and DWARF 4 section 6.4 (call frame ops). */
#ifndef PERFTRAMP_EH_FRAME_H
#define PERFTRAMP_EH_FRAME_H

#include "emit/bytebuf.h"
#include "emit/layout.h"

/* DWARF call frame instruction opcodes (DWARF 4, 7.23). */
enum {
    DW_CFA_nop = 0x00,
    DW_CFA_set_loc = 0x01,
    DW_CFA_advance_loc1 = 0x02,
    DW_CFA_advance_loc2 = 0x03,
    DW_CFA_advance_loc4 = 0x04,
    DW_CFA_offset_extended = 0x05,
    DW_CFA_restore_extended = 0x06,
    DW_CFA_undefined = 0x07,
    DW_CFA_same_value = 0x08,
    DW_CFA_register = 0x09,
    DW_CFA_remember_state = 0x0a,
    DW_CFA_restore_state = 0x0b,
    DW_CFA_def_cfa = 0x0c,
    DW_CFA_def_cfa_register = 0x0d,
    DW_CFA_def_cfa_offset = 0x0e,
    DW_CFA_def_cfa_expression = 0x0f,
    DW_CFA_expression = 0x10,
    DW_CFA_offset_extended_sf = 0x11,
    DW_CFA_def_cfa_sf = 0x12,
    DW_CFA_def_cfa_offset_sf = 0x13,
    DW_CFA_val_offset = 0x14,
    DW_CFA_val_offset_sf = 0x15,
    DW_CFA_val_expression = 0x16,
    DW_CFA_AARCH64_negate_ra_state = 0x2d, /* same value as GNU_window_save */
    DW_CFA_GNU_args_size = 0x2e,
    DW_CFA_GNU_negative_offset_extended = 0x2f,
    DW_CFA_advance_loc = 0x40,
    DW_CFA_offset = 0x80,
    DW_CFA_restore = 0xc0,
};

/* Pointer encodings (LSB 5.0, 10.5). */
enum {
    DW_EH_PE_absptr = 0x00,
    DW_EH_PE_uleb128 = 0x01,
    DW_EH_PE_udata2 = 0x02,
    DW_EH_PE_udata4 = 0x03,
    DW_EH_PE_udata8 = 0x04,
    DW_EH_PE_sleb128 = 0x09,
    DW_EH_PE_sdata2 = 0x0a,
    DW_EH_PE_sdata4 = 0x0b,
    DW_EH_PE_sdata8 = 0x0c,
    DW_EH_PE_pcrel = 0x10,
    DW_EH_PE_datarel = 0x30,
    DW_EH_PE_indirect = 0x80,
    DW_EH_PE_omit = 0xff,
};

/* Emits DW_CFA_advance_loc* for `delta` code units (nothing for 0),
 * choosing the smallest form. */
void pt_cfi_advance(struct pt_buf *b, uint64_t delta);
/* Emits one rule change; returns -1 (errno EINVAL) for an offset that is
 * not a multiple of the data alignment factor. */
int pt_cfi_op(struct pt_buf *b, const struct pt_arch *a, const struct pt_cfi *c);
/* The FDE program of rows sorted by offset, for code of code_size bytes:
 * one advance per change of offset, rows at or past code_size dropped
 * (they describe no code).  The one serializer of CFI: the tables go
 * through it (pt_cfi_program) and so does published code (api/publish.c).
 * -1 with errno EINVAL for an op the arch cannot encode. */
int pt_cfi_rows_program(struct pt_buf *b, const struct pt_arch *a, const struct pt_cfi_row *rows, size_t n,
                        size_t code_size);
/* A laid-out table's rules as rows (each instruction's at its end), in
 * order; rows has room for PT_LAYOUT_MAX_INSNS * PT_INSN_MAX_CFI.  Returns
 * their number. */
size_t pt_layout_cfi_rows(const struct pt_layout *l, struct pt_cfi_row *rows);
/* The FDE program of a laid-out table: its rows, then pt_cfi_rows_program. */
int pt_cfi_program(struct pt_buf *b, const struct pt_layout *l);

/* Appends a CIE; returns its offset in b. */
size_t pt_eh_cie(struct pt_buf *b, const struct pt_arch *a);
/* A CIE whose FDEs use pointer encoding `fde_enc`: pcrel|sdata4 (what
 * pt_eh_cie writes) or DW_EH_PE_absptr, absolute addresses of a->addr_size
 * bytes that reach code anywhere (published code may be far from the heap). */
size_t pt_eh_cie_enc(struct pt_buf *b, const struct pt_arch *a, uint8_t fde_enc);
/* An FDE with absolute pc_begin and pc_range, a->addr_size bytes each (a
 * CIE from pt_eh_cie_enc(..., DW_EH_PE_absptr)).  Returns its offset in b. */
size_t pt_eh_fde_abs(struct pt_buf *b, const struct pt_arch *a, size_t cie_off, uint64_t pc_begin, uint64_t range,
                     const uint8_t *program, size_t program_len);
/* Appends an FDE for code at `code_rel` bytes from the start of b's data
 * (code address minus the address b->data will have), covering `range`
 * bytes, with a prebuilt program.  Returns its offset in b. */
size_t pt_eh_fde(struct pt_buf *b, size_t cie_off, int64_t code_rel, uint64_t range,
                 const uint8_t *program, size_t program_len);
/* The zero terminator. */
void pt_eh_terminator(struct pt_buf *b);

struct pt_hdr_row {
    int64_t pc;   /* relative to the hdr start */
    int64_t fde;  /* relative to the hdr start */
};
/* Appends .eh_frame_hdr at the current end of b.  `eh_frame_rel` is the
 * address of .eh_frame minus that of the hdr.  Sorts rows by pc. */
void pt_eh_hdr(struct pt_buf *b, int64_t eh_frame_rel, struct pt_hdr_row *rows, size_t n);

/* One trampoline's .eh_frame (CIE, FDE, terminator) followed by its
 * .eh_frame_hdr, laid out as perf's genelf places them: .eh_frame at
 * ALIGN8(code_size) after the code, the hdr right after it.  This is the
 * jitdump UNWINDING_INFO payload; the same for every trampoline. */
int pt_eh_jitdump_blob(struct pt_buf *b, const struct pt_layout *l, size_t *eh_frame_size);
/* The same for any code: code_size bytes described by an FDE program. */
int pt_eh_jitdump_blob_prog(struct pt_buf *b, const struct pt_arch *a, size_t code_size, const uint8_t *program,
                            size_t program_len, size_t *eh_frame_size);

#endif
