/* SPDX-License-Identifier: MIT */
/* The emitter and decoder: LEB128, advance_loc forms, padding, the hdr
 * search table, and emit -> decode round trips for synthetic tables. */
#include "emit/bytebuf.h"
#include "read/eh_decode.h"
#include "emit/eh_frame.h"
#include "emit/layout.h"
#include "arch/table.h"

#include <check.h>
#include "../lib/check_run.h"
#include "../lib/every_table.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- LEB128 ---------------------------------------------------------- */

static const uint64_t uleb_cases[] = {0, 1, 63, 64, 127, 128, 129, 255, 256, 16383, 16384,
                                      0xffffffffull, 0x100000000ull, INT64_MAX, UINT64_MAX};
static const int64_t sleb_cases[] = {0, 1, -1, 63, -64, 64, -65, 127, -128, 128, -129, 8191, -8192,
                                     8192, -8193, INT32_MAX, INT32_MIN, INT64_MAX, INT64_MIN};

START_TEST(uleb_round_trip)
{
    for (size_t i = 0; i < sizeof uleb_cases / sizeof uleb_cases[0]; i++) {
        uint8_t enc[10];
        size_t n = pt_uleb_encode(enc, uleb_cases[i]);
        const uint8_t *p = enc;
        uint64_t back;
        ck_assert(pt_eh_read_uleb(&p, enc + n, &back));
        ck_assert_uint_eq(back, uleb_cases[i]);
        ck_assert_ptr_eq(p, enc + n);
        /* minimal: the last byte has no continuation bit, the others do */
        ck_assert_uint_eq(enc[n - 1] & 0x80, 0);
        for (size_t k = 0; k + 1 < n; k++)
            ck_assert_uint_ne(enc[k] & 0x80, 0);
    }
}
END_TEST

START_TEST(uleb_known_bytes)
{
    uint8_t enc[10];
    ck_assert_uint_eq(pt_uleb_encode(enc, 127), 1);
    ck_assert_uint_eq(enc[0], 0x7f);
    ck_assert_uint_eq(pt_uleb_encode(enc, 128), 2);
    ck_assert_uint_eq(enc[0], 0x80);
    ck_assert_uint_eq(enc[1], 0x01);
    ck_assert_uint_eq(pt_uleb_encode(enc, 624485), 3); /* DWARF 4, figure 22 */
    ck_assert_uint_eq(enc[0], 0xe5);
    ck_assert_uint_eq(enc[1], 0x8e);
    ck_assert_uint_eq(enc[2], 0x26);
    ck_assert_uint_eq(pt_uleb_encode(enc, UINT64_MAX), 10);
    ck_assert_uint_eq(enc[9], 0x01);
}
END_TEST

START_TEST(sleb_round_trip)
{
    for (size_t i = 0; i < sizeof sleb_cases / sizeof sleb_cases[0]; i++) {
        uint8_t enc[10];
        size_t n = pt_sleb_encode(enc, sleb_cases[i]);
        const uint8_t *p = enc;
        int64_t back;
        ck_assert(pt_eh_read_sleb(&p, enc + n, &back));
        ck_assert_int_eq(back, sleb_cases[i]);
        ck_assert_ptr_eq(p, enc + n);
    }
    uint8_t enc[10];
    ck_assert_uint_eq(pt_sleb_encode(enc, -128), 2); /* DWARF 4, figure 23 */
    ck_assert_uint_eq(enc[0], 0x80);
    ck_assert_uint_eq(enc[1], 0x7f);
    ck_assert_uint_eq(pt_sleb_encode(enc, 63), 1);
    ck_assert_uint_eq(pt_sleb_encode(enc, 64), 2);
    ck_assert_uint_eq(pt_sleb_encode(enc, -64), 1);
    ck_assert_uint_eq(enc[0], 0x40);
}
END_TEST

START_TEST(leb_truncated_is_rejected)
{
    const uint8_t trunc[] = {0x80, 0x80};
    const uint8_t *p = trunc;
    uint64_t u;
    int64_t s;
    ck_assert(!pt_eh_read_uleb(&p, trunc + sizeof trunc, &u));
    p = trunc;
    ck_assert(!pt_eh_read_sleb(&p, trunc + sizeof trunc, &s));
    const uint8_t too_long[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f};
    p = too_long;
    ck_assert(!pt_eh_read_uleb(&p, too_long + sizeof too_long, &u));
}
END_TEST

/* ---- advance_loc ----------------------------------------------------- */

static const struct {
    uint64_t delta;
    size_t bytes;
    uint8_t first;
} advance_cases[] = {
    {0, 0, 0},
    {63, 1, DW_CFA_advance_loc | 63},
    {64, 2, DW_CFA_advance_loc1},
    {255, 2, DW_CFA_advance_loc1},
    {256, 3, DW_CFA_advance_loc2},
    {65535, 3, DW_CFA_advance_loc2},
    {65536, 5, DW_CFA_advance_loc4},
};

START_TEST(advance_forms)
{
    for (size_t i = 0; i < sizeof advance_cases / sizeof advance_cases[0]; i++) {
        for (int be = 0; be < 2; be++) {
            struct pt_buf b;
            pt_buf_init(&b, be);
            pt_cfi_advance(&b, advance_cases[i].delta);
            ck_assert_uint_eq(b.len, advance_cases[i].bytes);
            if (b.len)
                ck_assert_uint_eq(b.data[0], advance_cases[i].first);
            if (advance_cases[i].delta == 65535) {
                ck_assert_uint_eq(b.data[1], 0xff);
                ck_assert_uint_eq(b.data[2], 0xff);
            }
            if (advance_cases[i].delta == 65536)
                ck_assert_uint_eq(b.data[be ? 2 : 3], 0x01);
            pt_buf_free(&b);
        }
    }
}
END_TEST

/* ---- synthetic tables ------------------------------------------------ */

/* A made-up table whose CFI changes sit at the advance_loc boundaries: a
 * long "instruction" of filler lets each delta land exactly. */
enum { SP = 7, FP = 6, RA = 16 };

static struct pt_insn *make_insns(const uint64_t *gaps, size_t n_gaps, size_t *n_out)
{
    /* each gap becomes a run of 8-byte filler instructions + one 1-byte
     * instruction carrying a CFI change */
    size_t cap = 0;
    for (size_t i = 0; i < n_gaps; i++)
        cap += gaps[i] + 2;
    struct pt_insn *v = calloc(cap, sizeof *v);
    size_t k = 0;
    for (size_t i = 0; i < n_gaps; i++) {
        uint64_t g = gaps[i];
        while (g > 1) {
            uint8_t n = g - 1 > 8 ? 8 : (uint8_t)(g - 1);
            v[k] = (struct pt_insn){.len = n, .text = "filler"};
            memset(v[k++].bytes, 0x90, n);
            g -= n;
        }
        v[k++] = (struct pt_insn){PT_BYTES(0x90), .text = "change",
                                  PT_CFI(CFA_OFFSET((int16_t)(16 + 8 * (int)i)), SAVED(FP, -16))};
    }
    v[k++] = (struct pt_insn){PT_BYTES(0xc3), .text = "ret"};
    *n_out = k;
    return v;
}

struct capture {
    struct pt_cie cie;
    struct pt_fde fde;
    int n;
};

static int cb(void *arg, const struct pt_cie *c, const struct pt_fde *f)
{
    struct capture *cap = arg;
    cap->cie = *c;
    cap->fde = *f;
    cap->n++;
    return 0;
}

/* Emits CIE + FDE for `insns` at code address `code`, decodes, returns rows. */
static int emit_and_decode(const struct pt_arch *arch, const struct pt_insn *insns, size_t n, struct pt_row *rows,
                           size_t max_rows, struct pt_layout *l)
{
    (void)insns;
    (void)n;
    ck_assert_int_eq(pt_layout_build(l, arch, NULL), 0);
    struct pt_buf prog, eh;
    pt_buf_init(&prog, arch->big_endian);
    pt_buf_init(&eh, arch->big_endian);
    ck_assert_int_eq(pt_cfi_program(&prog, l), 0);
    size_t cie = pt_eh_cie(&eh, arch);
    /* pretend the code sits 0x1000 bytes before the section */
    pt_eh_fde(&eh, cie, -0x1000, l->size, prog.data, prog.len);
    pt_eh_terminator(&eh);
    ck_assert(!eh.failed);

    struct pt_eh_ctx ctx = {.data = eh.data, .len = eh.len, .address = 0x10000, .big_endian = arch->big_endian,
                            .addr_size = 8};
    struct capture cap = {.n = 0};
    size_t ncie, nfde;
    ck_assert_int_eq(pt_eh_walk(&ctx, cb, &cap, &ncie, &nfde), 0);
    ck_assert_uint_eq(nfde, 1);
    ck_assert_uint_eq(cap.fde.pc_begin, 0x10000 - 0x1000);
    ck_assert_uint_eq(cap.fde.pc_range, l->size);
    /* every entry's length is padded to a multiple of 4 */
    ck_assert_uint_eq(cap.fde.offset % 4, 0);
    ck_assert_uint_eq((eh.len - 4) % 4, 0);
    int nrows = pt_eh_rows(&ctx, &cap.cie, &cap.fde, rows, max_rows);
    ck_assert_msg(nrows > 0, "%s", ctx.error);
    pt_buf_free(&prog);
    pt_buf_free(&eh);
    return nrows;
}

static struct pt_arch synthetic_arch(const struct pt_insn *insns, size_t n, int big_endian)
{
    return (struct pt_arch){
        .name = "synthetic",
        .clang_target = "synthetic-linux-gnu",
        .elf_machine = 62,
        .dwarf_regs = 17,
        .big_endian = (uint8_t)big_endian,
        .addr_size = 8,
        .icache = PT_ICACHE_COHERENT,
        .code_align = 16,
        .cie_code_align = 1,
        .cie_data_align = -8,
        .ra_column = RA,
        .cie_initial = {CFA(SP, 8), SAVED(RA, -8)},
        .insns = insns,
        .n_insns = n,
        .trap_len = 1,
        .trap = {0xcc},
        .reg_names = (const char *const[]){"r0"},
        .n_reg_names = 1,
        .nops = {{PT_BYTES(0x90)}},
    };
}

START_TEST(round_trip_advance_deltas)
{
    /* gaps between CFI changes: the loc deltas the emitter must encode.
     * A layout holds at most PT_LAYOUT_MAX_BYTES, so large deltas are
     * checked through pt_cfi_advance + the decoder directly below. */
    static const uint64_t gaps[] = {1, 63, 64, 7};
    size_t n;
    struct pt_insn *insns = make_insns(gaps, 4, &n);
    for (int be = 0; be < 2; be++) {
        struct pt_arch arch = synthetic_arch(insns, n, be);
        struct pt_layout l;
        struct pt_row rows[16];
        int nrows = emit_and_decode(&arch, insns, n, rows, 16, &l);
        ck_assert_int_eq(nrows, 5);
        ck_assert_uint_eq(rows[0].loc, 0);
        ck_assert_uint_eq(rows[0].cfa_reg, SP);
        ck_assert_int_eq(rows[0].cfa_offset, 8);
        ck_assert_int_eq(pt_row_rule(&rows[0], RA)->offset, -8);
        ck_assert_ptr_null(pt_row_rule(&rows[0], FP));
        uint64_t loc = 0;
        for (int i = 1; i < 5; i++) {
            loc += gaps[i - 1];
            ck_assert_uint_eq(rows[i].loc, loc);
            ck_assert_int_eq(rows[i].cfa_offset, 16 + 8 * (i - 1));
            ck_assert_int_eq(pt_row_rule(&rows[i], FP)->kind, PT_RULE_OFFSET);
            ck_assert_int_eq(pt_row_rule(&rows[i], FP)->offset, -16);
        }
    }
    free(insns);
}
END_TEST

START_TEST(decode_large_advances)
{
    static const uint64_t deltas[] = {0, 63, 64, 255, 256, 65535, 65536};
    for (int be = 0; be < 2; be++) {
        struct pt_arch arch = synthetic_arch(NULL, 0, be);
        struct pt_buf prog, eh;
        pt_buf_init(&prog, be);
        pt_buf_init(&eh, be);
        uint64_t total = 0;
        for (size_t i = 0; i < 7; i++) {
            pt_cfi_advance(&prog, deltas[i]);
            total += deltas[i];
            struct pt_cfi c = CFA_OFFSET((int16_t)(16 + 8 * (int)i));
            ck_assert_int_eq(pt_cfi_op(&prog, &arch, &c), 0);
        }
        size_t cie = pt_eh_cie(&eh, &arch);
        pt_eh_fde(&eh, cie, 0, total + 1, prog.data, prog.len);
        pt_eh_terminator(&eh);
        struct pt_eh_ctx ctx = {.data = eh.data, .len = eh.len, .big_endian = be, .addr_size = 8};
        struct capture cap = {.n = 0};
        ck_assert_int_eq(pt_eh_walk(&ctx, cb, &cap, NULL, NULL), 0);
        struct pt_row rows[16];
        int n = pt_eh_rows(&ctx, &cap.cie, &cap.fde, rows, 16);
        ck_assert_msg(n == 7, "rows %d: %s", n, ctx.error);
        uint64_t loc = 0;
        for (int i = 0; i < 7; i++) {
            loc += deltas[i];
            ck_assert_uint_eq(rows[i].loc, loc);
            /* a delta of 0 emits no advance: the CIE row and the first
             * change share loc 0, the later rule wins */
            ck_assert_int_eq(rows[i].cfa_offset, 16 + 8 * i);
        }
        pt_buf_free(&prog);
        pt_buf_free(&eh);
    }
}
END_TEST

START_TEST(padding_from_offset)
{
    /* CIE and FDE lengths round to 4 from the entry start, whatever the
     * buffer's absolute position. */
    for (size_t lead = 0; lead < 8; lead++) {
        struct pt_arch arch = synthetic_arch(NULL, 0, 0);
        struct pt_buf eh;
        pt_buf_init(&eh, false);
        for (size_t k = 0; k < lead; k++)
            pt_buf_u8(&eh, 0xee);
        size_t cie = pt_eh_cie(&eh, &arch);
        size_t after_cie = eh.len;
        uint8_t prog[] = {DW_CFA_nop};
        size_t fde = pt_eh_fde(&eh, cie, 0, 16, prog, 1);
        ck_assert_uint_eq((after_cie - cie) % 4, 0);
        ck_assert_uint_eq((eh.len - fde) % 4, 0);
        ck_assert_uint_eq(pt_load_u32(eh.data + cie, false) + 4, after_cie - cie);
        /* the pad bytes are DW_CFA_nop */
        ck_assert_uint_eq(eh.data[eh.len - 1], DW_CFA_nop);
        pt_buf_free(&eh);
    }
}
END_TEST

static void hdr_row(void *arg, uint64_t pc, uint64_t fde)
{
    uint64_t *seen = arg;
    seen[seen[0] * 2 + 1] = pc;
    seen[seen[0] * 2 + 2] = fde;
    seen[0]++;
}

START_TEST(epilogue_in_one_byte)
{
    /* x86-64: `pop %rbp` brings the rules back to those at entry (CFA
     * rsp+8, rbp as at entry): DW_CFA_remember_state before `push %rbp`'s
     * rules and DW_CFA_restore_state instead of def_cfa + restore (4
     * bytes), so the FDE is 17 + 11 = 28 bytes; the decoded rows are the
     * same as spelled out. */
    const struct pt_arch *a = pt_arch_find("x86_64");
    ck_assert_ptr_nonnull(a);
    struct pt_layout l;
    ck_assert_int_eq(pt_layout_build(&l, a, NULL), 0);
    struct pt_buf prog, eh;
    pt_buf_init(&prog, a->big_endian);
    pt_buf_init(&eh, a->big_endian);
    ck_assert_int_eq(pt_cfi_program(&prog, &l), 0);
    ck_assert_ptr_nonnull(memchr(prog.data, DW_CFA_remember_state, prog.len));
    ck_assert_ptr_nonnull(memchr(prog.data, DW_CFA_restore_state, prog.len));
    size_t cie = pt_eh_cie(&eh, a);
    size_t fde = pt_eh_fde(&eh, cie, -0x1000, l.size, prog.data, prog.len);
    ck_assert_uint_eq(eh.len - fde, 28);
    pt_eh_terminator(&eh);
    struct pt_eh_ctx ctx = {.data = eh.data, .len = eh.len, .address = 0x10000, .big_endian = a->big_endian,
                            .addr_size = 8};
    struct capture cap = {.n = 0};
    size_t ncie, nfde;
    ck_assert_int_eq(pt_eh_walk(&ctx, cb, &cap, &ncie, &nfde), 0);
    struct pt_row rows[16];
    int n = pt_eh_rows(&ctx, &cap.cie, &cap.fde, rows, 16);
    ck_assert_msg(n >= 3, "%s", ctx.error);
    /* the last row (after pop %rbp) is the entry row again */
    ck_assert_uint_eq(rows[n - 1].cfa_reg, rows[0].cfa_reg);
    ck_assert_int_eq(rows[n - 1].cfa_offset, rows[0].cfa_offset);
    ck_assert_ptr_null(pt_row_rule(&rows[n - 1], 6));
    ck_assert_ptr_nonnull(pt_row_rule(&rows[n - 2], 6));
    pt_buf_free(&prog);
    pt_buf_free(&eh);
}
END_TEST

START_TEST(epilogue_spelled_out_when_shorter)
{
    /* a return to the entry rules in 2 bytes or fewer (def_cfa_offset 8)
     * stays as it is: remember + restore would cost as much */
    static const struct pt_insn insns[] = {
        {.len = 1, .bytes = {0x90}, .cfi = {CFA_OFFSET(16)}},
        {.len = 1, .bytes = {0x90}, .cfi = {CFA_OFFSET(8)}},
        {.len = 1, .bytes = {0x90}},
    };
    struct pt_arch arch = synthetic_arch(insns, 3, 0);
    struct pt_layout l;
    ck_assert_int_eq(pt_layout_build(&l, &arch, NULL), 0);
    struct pt_buf prog;
    pt_buf_init(&prog, false);
    ck_assert_int_eq(pt_cfi_program(&prog, &l), 0);
    ck_assert_ptr_null(memchr(prog.data, DW_CFA_remember_state, prog.len));
    ck_assert_ptr_null(memchr(prog.data, DW_CFA_restore_state, prog.len));
    pt_buf_free(&prog);
}
END_TEST

START_TEST(hdr_table_sorted)
{
    struct pt_hdr_row rows[] = {{.pc = 300, .fde = 3}, {.pc = -50, .fde = 1}, {.pc = 100, .fde = 2},
                                {.pc = 0x7000, .fde = 4}, {.pc = -4000, .fde = 0}};
    struct pt_buf b;
    pt_buf_init(&b, false);
    pt_eh_hdr(&b, -64, rows, 5);
    ck_assert_uint_eq(b.len, 12 + 5 * 8);
    struct pt_eh_ctx ctx = {.data = b.data, .len = b.len, .address = 0x100000, .addr_size = 8};
    struct pt_eh_hdr_info info;
    uint64_t seen[1 + 2 * 5] = {0};
    ck_assert_int_eq(pt_eh_hdr_decode(&ctx, &info, hdr_row, seen), 0);
    ck_assert_uint_eq(info.version, 1);
    ck_assert_uint_eq(info.eh_frame_ptr_enc, 0x1b);
    ck_assert_uint_eq(info.fde_count_enc, 0x03);
    ck_assert_uint_eq(info.table_enc, 0x3b);
    ck_assert_uint_eq(info.eh_frame_ptr, 0x100000 - 64);
    ck_assert_uint_eq(info.fde_count, 5);
    ck_assert(info.sorted);
    for (uint64_t i = 0; i < 5; i++)
        ck_assert_uint_eq(seen[1 + 2 * i + 1], 0x100000 + i);
    ck_assert_uint_eq(seen[1], 0x100000 - 4000);
    ck_assert_uint_eq(seen[9], 0x100000 + 0x7000);
    pt_buf_free(&b);
}
END_TEST

/* The data words are addresses: .addr_size bytes each, aligned to their
 * size right after the code, written in the table's byte order (a 4-byte
 * tag is the low half of the 64-bit one); the code bytes do not depend on
 * it (the twin's code is its table's). */
START_TEST(data_words_of_addr_size)
{
    for (size_t i = 0; i < n_tables(); i++) {
        struct pt_arch twin;
        const struct pt_arch *a = table_i(i, &twin);
        struct pt_layout l;
        ck_assert_int_eq(pt_layout_build(&l, a, NULL), 0);
        size_t w = a->addr_size;
        ck_assert_msg(l.word_off[PT_WORD_TARGET] % w == 0 && l.word_off[PT_WORD_TARGET] >= l.code_len &&
                          l.word_off[PT_WORD_TARGET] < l.code_len + w,
                      "%s: target word at %zu after %zu bytes of code", a->name, l.word_off[PT_WORD_TARGET],
                      l.code_len);
        ck_assert_uint_eq(l.word_off[PT_WORD_TAG], l.word_off[PT_WORD_TARGET] + w);
        ck_assert_uint_eq(l.size, l.word_off[PT_WORD_TAG] + w);
        uint8_t t[PT_LAYOUT_MAX_BYTES + 8];
        memset(t, 0xee, sizeof t);
        pt_layout_write(&l, t, 0x1122334455667788ull, 0x99aabbccddeeff00ull);
        uint8_t want[8];
        pt_store_addr(want, 0x1122334455667788ull, (unsigned)w, a->big_endian);
        ck_assert_mem_eq(t + l.word_off[PT_WORD_TARGET], want, w);
        pt_store_addr(want, 0x99aabbccddeeff00ull, (unsigned)w, a->big_endian);
        ck_assert_mem_eq(t + l.word_off[PT_WORD_TAG], want, w);
        ck_assert_uint_eq(t[l.size], 0xee); /* nothing past the trampoline */
        ck_assert_mem_eq(t, l.bytes, l.code_len);
    }
    struct pt_arch twin;
    const struct pt_arch *t32 = table_i(n_tables() - 1, &twin);
    struct pt_layout l32, l64;
    ck_assert_int_eq(pt_layout_build(&l32, t32, NULL), 0);
    ck_assert_int_eq(pt_layout_build(&l64, pt_arch_list[0], NULL), 0);
    ck_assert_uint_eq(l32.code_len, l64.code_len);
    ck_assert_uint_lt(l32.size, l64.size);
}
END_TEST

/* An absptr FDE (perftramp_publish's in-process one) holds addresses of
 * the table's size, and decodes with that address size. */
START_TEST(absptr_fde_of_addr_size)
{
    for (size_t i = 0; i < n_tables(); i++) {
        struct pt_arch twin;
        const struct pt_arch *a = table_i(i, &twin);
        struct pt_layout l;
        ck_assert_int_eq(pt_layout_build(&l, a, NULL), 0);
        struct pt_buf prog, eh;
        pt_buf_init(&prog, a->big_endian);
        pt_buf_init(&eh, a->big_endian);
        ck_assert_int_eq(pt_cfi_program(&prog, &l), 0);
        size_t cie = pt_eh_cie_enc(&eh, a, DW_EH_PE_absptr);
        uint64_t pc = a->addr_size == 4 ? 0xf7654320u : 0x7f0011223340ull;
        size_t fde = pt_eh_fde_abs(&eh, a, cie, pc, l.size, prog.data, prog.len);
        pt_eh_terminator(&eh);
        ck_assert(!eh.failed);
        /* length, CIE pointer, then pc_begin and pc_range of addr_size each */
        uint8_t want[8];
        pt_store_addr(want, pc, a->addr_size, a->big_endian);
        ck_assert_mem_eq(eh.data + fde + 8, want, a->addr_size);
        struct pt_eh_ctx ctx = {.data = eh.data, .len = eh.len, .address = 0x10000, .big_endian = a->big_endian,
                                .addr_size = a->addr_size};
        struct capture cap = {.n = 0};
        ck_assert_msg(pt_eh_walk(&ctx, cb, &cap, NULL, NULL) == 0, "%s: %s", a->name, ctx.error);
        ck_assert_int_eq(cap.n, 1);
        ck_assert_uint_eq(cap.fde.pc_begin, pc);
        ck_assert_uint_eq(cap.fde.pc_range, l.size);
        struct pt_row rows[PT_LAYOUT_MAX_INSNS + 1];
        ck_assert_int_gt(pt_eh_rows(&ctx, &cap.cie, &cap.fde, rows, PT_LAYOUT_MAX_INSNS + 1), 0);
        pt_buf_free(&prog);
        pt_buf_free(&eh);
    }
}
END_TEST

/* The jitdump blob: .eh_frame then hdr, all pointers relative, so it
 * decodes the same at any base (perf's .text offset changed 0x40 -> 0x80),
 * for every table: perf's genelf puts .eh_frame at ALIGN8(text + size)
 * whatever the class (tools/perf/util/genelf.c). */
START_TEST(jitdump_blob_genelf_layout)
{
    for (size_t i = 0; i < n_tables(); i++) {
        struct pt_arch twin;
        const struct pt_arch *arch = table_i(i, &twin);
        struct pt_layout l;
        ck_assert_int_eq(pt_layout_build(&l, arch, NULL), 0);
        struct pt_buf b;
        pt_buf_init(&b, arch->big_endian);
        size_t eh_size = 0;
        ck_assert_int_eq(pt_eh_jitdump_blob(&b, &l, &eh_size), 0);
        for (uint64_t text = 0x40; text <= 0x80; text += 0x40) {
            uint64_t eh_addr = text + ((l.size + 7) & ~7ull);
            struct pt_eh_ctx ctx = {.data = b.data, .len = eh_size, .address = eh_addr,
                                    .big_endian = arch->big_endian, .addr_size = arch->addr_size};
            struct capture cap = {.n = 0};
            ck_assert_int_eq(pt_eh_walk(&ctx, cb, &cap, NULL, NULL), 0);
            ck_assert_int_eq(cap.n, 1);
            ck_assert_uint_eq(cap.fde.pc_begin, text);
            ck_assert_uint_eq(cap.fde.pc_range, l.size);
            struct pt_eh_ctx hctx = {.data = b.data + eh_size, .len = b.len - eh_size, .address = eh_addr + eh_size,
                                     .big_endian = arch->big_endian, .addr_size = arch->addr_size};
            struct pt_eh_hdr_info info;
            uint64_t seen[3] = {0};
            ck_assert_int_eq(pt_eh_hdr_decode(&hctx, &info, hdr_row, seen), 0);
            ck_assert_uint_eq(info.eh_frame_ptr, eh_addr);
            ck_assert_uint_eq(info.fde_count, 1);
            ck_assert_uint_eq(seen[1], text);
            ck_assert_uint_eq(seen[2], eh_addr + cap.fde.offset);
        }
        pt_buf_free(&b);
    }
}
END_TEST

START_TEST(decoder_rejects_garbage)
{
    /* lengths past the end, bad CIE pointers, bad versions: errors, not crashes */
    uint8_t buf[64];
    for (unsigned seed = 1; seed < 2000; seed++) {
        unsigned x = seed;
        for (size_t i = 0; i < sizeof buf; i++) {
            x = x * 1103515245u + 12345u;
            buf[i] = (uint8_t)(x >> 16);
        }
        struct pt_eh_ctx ctx = {.data = buf, .len = (seed % sizeof buf) + 1, .addr_size = 8};
        struct pt_row rows[8];
        struct capture cap = {.n = 0};
        if (pt_eh_walk(&ctx, cb, &cap, NULL, NULL) == 0 && cap.n)
            (void)pt_eh_rows(&ctx, &cap.cie, &cap.fde, rows, 8);
        struct pt_eh_hdr_info info;
        (void)pt_eh_hdr_decode(&ctx, &info, NULL, NULL);
    }
    const uint8_t too_long[] = {0xff, 0, 0, 0, 0, 0, 0, 0};
    struct pt_eh_ctx ctx = {.data = too_long, .len = sizeof too_long, .addr_size = 8};
    ck_assert_int_eq(pt_eh_walk(&ctx, NULL, NULL, NULL, NULL), -1);
    ck_assert_str_ne(ctx.error, "");
}
END_TEST

START_TEST(layout_rejects_bad_tables)
{
    static const struct pt_insn far[] = {
        {PT_BYTES(0x00, 0x00, 0x00, 0x00), .text = "ldr", PT_FIX(PT_FIX_A64_LDR_LIT19, PT_WORD_TARGET)},
        {PT_BYTES(0x00, 0x00), .text = "odd"},
    };
    struct pt_arch arch = synthetic_arch(far, 2, 0);
    arch.cie_code_align = 4; /* a 2-byte instruction breaks 4-byte alignment of what follows */
    struct pt_insn three[3] = {far[1], far[0], far[1]};
    arch.insns = three;
    arch.n_insns = 3;
    struct pt_layout l;
    const char *why = NULL;
    ck_assert_int_eq(pt_layout_build(&l, &arch, &why), -1);
    ck_assert_ptr_nonnull(why);
    ck_assert_int_eq(pt_layout_build(&l, NULL, &why), -1);
}
END_TEST

/* Every table of the lists is complete, and a table that lacks any one
 * required field of struct pt_arch is refused when it is laid out (what
 * perftramp_open does first), not later: docs/porting.md's promise. */
START_TEST(tables_lack_no_field)
{
    for (size_t i = 0; i < pt_arch_count + pt_arch_variant_count; i++) {
        const struct pt_arch *a = i < pt_arch_count ? pt_arch_list[i] : pt_arch_variants[i - pt_arch_count].arch;
        const char *why = NULL;
        ck_assert_msg(pt_arch_check(a, &why) == 0, "%s: %s", a->name, why);
    }
    const struct pt_arch *h = pt_arch_list[0];
    for (int f = 0; f < 14; f++) {
        struct pt_arch a = *h;
        switch (f) {
        case 0: a.name = NULL; break;
        case 1: a.clang_target = NULL; break;
        case 2: a.elf_machine = 0; break;
        case 3: a.dwarf_regs = 0; break;
        case 4: a.icache = PT_ICACHE_UNSET; break;
        case 5: a.code_align = 0; break;
        case 6: a.cie_code_align = 0; break;
        case 7: a.cie_data_align = 0; break;
        case 8: a.cie_initial[0] = (struct pt_cfi){0}; break;
        case 9: a.trap_len = 0; break;
        case 10: a.reg_names = NULL; a.n_reg_names = 0; break;
        case 11: memset(a.nops, 0, sizeof a.nops); a.x86_nop_forms = 0; break;
        case 12: a.dwarf_regs = a.ra_column; break; /* too few for its own rules */
        case 13: a.addr_size = 0; break;
        }
        struct pt_layout l;
        const char *why = NULL;
        ck_assert_msg(pt_layout_build(&l, &a, &why) == -1 && why, "field %d: a table without it was laid out", f);
        ck_assert_int_eq(errno, EINVAL);
    }
    for (unsigned k = PT_FIX_NONE; k < PT_FIXUP_KINDS; k++)
        ck_assert_str_ne(pt_fixup_name(k), "unknown");
}
END_TEST

static Suite *emitter_suite(void)
{
    Suite *s = suite_create("emitter");
    TCase *t = tcase_create("leb128");
    tcase_add_test(t, uleb_round_trip);
    tcase_add_test(t, uleb_known_bytes);
    tcase_add_test(t, sleb_round_trip);
    tcase_add_test(t, leb_truncated_is_rejected);
    suite_add_tcase(s, t);
    t = tcase_create("cfi");
    tcase_add_test(t, advance_forms);
    tcase_add_test(t, round_trip_advance_deltas);
    tcase_add_test(t, decode_large_advances);
    tcase_add_test(t, padding_from_offset);
    tcase_add_test(t, epilogue_in_one_byte);
    tcase_add_test(t, epilogue_spelled_out_when_shorter);
    tcase_add_test(t, layout_rejects_bad_tables);
    tcase_add_test(t, tables_lack_no_field);
    suite_add_tcase(s, t);
    t = tcase_create("eh_frame");
    tcase_add_test(t, hdr_table_sorted);
    tcase_add_test(t, jitdump_blob_genelf_layout);
    tcase_add_test(t, data_words_of_addr_size);
    tcase_add_test(t, absptr_fde_of_addr_size);
    tcase_add_test(t, decoder_rejects_garbage);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    int failed = pt_check_run(emitter_suite());
    return failed ? 1 : 0;
}
