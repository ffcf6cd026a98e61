/* SPDX-License-Identifier: MIT */
/* Arm EHABI entries derived from CFI rows (src/emit/ehabi.c), their reader
 * (src/read/ehabi_decode.c) and the lock-free registry libgcc's lookup
 * reads (src/outputs/unwind_ehabi.c), on any host:
 *   - every EHABI table: at every instruction boundary, the entry libgcc
 *     would find there recovers the caller as the emitted .eh_frame's row
 *     there says (decoded by the .eh_frame decoder);
 *   - each vsp adjustment and pop form, executed back;
 *   - the rules EHABI cannot say are refused with EINVAL;
 *   - index tables: sorted, 2 bytes before each region, inline or shared
 *     .ARM.extab entries, the EXIDX_CANTUNWIND end, prel31 reach;
 *   - the reader on damaged tables: errors, no crash;
 *   - the registry while threads add and remove ranges. */
#include "emit/bytebuf.h"
#include "emit/eh_frame.h"
#include "emit/ehabi.h"
#include "emit/layout.h"
#include "outputs/outputs.h"
#include "read/eh_decode.h"
#include "read/ehabi_decode.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { R4 = 4, R11 = 11, R12 = 12, SP = 13, LR = 14, PC = 15, D8 = 256 + 8 };

/* ---- every EHABI table against its own .eh_frame --------------------- */

struct one_fde {
    struct pt_eh_ctx *ctx;
    struct pt_row rows[32];
    int n;
};

static int take(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct one_fde *o = arg;
    o->n = pt_eh_rows(o->ctx, cie, fde, o->rows, 32);
    return 1;
}

START_TEST(every_boundary_recovers_what_the_eh_frame_says)
{
    int tables = 0;
    for (size_t t = 0; t < pt_arch_count; t++) {
        const struct pt_arch *a = pt_arch_list[t];
        if (!a->ehabi)
            continue;
        tables++;
        struct pt_layout l;
        ck_assert_int_eq(pt_layout_build(&l, a, NULL), 0);
        struct pt_buf blob;
        pt_buf_init(&blob, a->big_endian);
        size_t eh_size;
        ck_assert_int_eq(pt_eh_jitdump_blob(&blob, &l, &eh_size), 0);
        struct pt_eh_ctx ctx = {.data = blob.data, .len = eh_size, .address = 0x2000, .big_endian = a->big_endian,
                                .addr_size = a->addr_size};
        struct one_fde o = {.ctx = &ctx, .n = -1};
        ck_assert_int_ge(pt_eh_walk(&ctx, take, &o, NULL, NULL), 0);
        ck_assert_int_gt(o.n, 0);

        struct pt_ehabi_region r[PT_EHABI_MAX_REGIONS];
        size_t n, n_index;
        const char *why = "";
        ck_assert_msg(pt_ehabi_layout_regions(&l, r, PT_EHABI_MAX_REGIONS, &n, &why) == 0, "%s: %s", a->name, why);
        uint8_t tab[1024];
        size_t len = pt_ehabi_tables(tab, sizeof tab, 0x9000, 0x1000, 1, 0, l.size, r, n, a->big_endian, &n_index);
        ck_assert_uint_gt(len, 0);
        for (size_t i = 0; i < a->n_insns; i++) {
            uint64_t off = l.insn_off[i], key = 0x1000 + off - 2;
            size_t k = 0;
            struct pt_ehabi_entry e;
            for (size_t j = 0; j < n_index; j++) {
                ck_assert_int_eq(pt_ehabi_read_entry(tab, n_index * 8, 0x9000, tab, len, 0x9000, j, a->big_endian, &e,
                                                     &why), 0);
                if (e.start <= key)
                    k = j;
            }
            ck_assert_int_eq(pt_ehabi_read_entry(tab, n_index * 8, 0x9000, tab, len, 0x9000, k, a->big_endian, &e, &why),
                             0);
            struct pt_ehabi_frame mine, dwarf;
            ck_assert_msg(pt_ehabi_execute(e.ops, e.n_ops, &mine, &why) == 0, "%s", why);
            const struct pt_row *row = &o.rows[0];
            for (int q = 0; q < o.n && o.rows[q].loc <= off; q++)
                row = &o.rows[q];
            ck_assert_int_eq(pt_ehabi_frame_from_row(row, a->ra_column, &dwarf), 0);
            char d[120];
            ck_assert_msg(pt_ehabi_same_caller(&mine, &dwarf, d, sizeof d), "%s boundary %zu (%s): %s", a->name, i,
                          a->insns[i].text, d);
        }
        pt_buf_free(&blob);
    }
    ck_assert_int_gt(tables, 0);
}
END_TEST

/* ---- opcodes, one rule state at a time ------------------------------- */

static const struct pt_arch *arm(void)
{
    const struct pt_arch *a = pt_arch_find("arm");
    ck_assert_ptr_nonnull(a);
    return a;
}

/* A state: CFA = reg + off, then (reg, offset) saves. */
static struct pt_cfi_state state(uint16_t cfa_reg, int32_t cfa_off, int n, const int32_t (*saves)[2])
{
    struct pt_cfi_state s;
    memset(&s, 0, sizeof s);
    s.cfa_reg = cfa_reg;
    s.cfa_off = cfa_off;
    for (int i = 0; i < n; i++) {
        s.r[i].reg = (uint16_t)saves[i][0];
        s.r[i].op = PT_CFI_OFFSET;
        s.r[i].off = saves[i][1];
    }
    s.n = (uint8_t)n;
    return s;
}

/* Derives, executes back, and checks the caller's sp and the saves. */
static void round_trip(const struct pt_cfi_state *s, const uint8_t *want, size_t want_len)
{
    uint8_t ops[PT_EHABI_MAX_OPS];
    size_t n;
    const char *why = "";
    ck_assert_msg(pt_ehabi_ops(arm(), s, ops, &n, &why) == 0, "%s", why);
    if (want) {
        ck_assert_uint_eq(n, want_len);
        ck_assert_mem_eq(ops, want, n);
    }
    struct pt_ehabi_frame f;
    ck_assert_msg(pt_ehabi_execute(ops, n, &f, &why) == 0, "%s", why);
    bool sp_saved = false;
    for (int i = 0; i < s->n; i++) {
        unsigned r = s->r[i].reg < 16 ? s->r[i].reg : s->r[i].reg - 256 + 16;
        ck_assert(f.regs[r].deref);
        ck_assert_uint_eq(f.regs[r].reg, s->cfa_reg);
        ck_assert_int_eq(f.regs[r].off, s->cfa_off + s->r[i].off);
        sp_saved = sp_saved || s->r[i].reg == SP;
    }
    if (!sp_saved) {
        ck_assert(!f.sp.deref);
        ck_assert_uint_eq(f.sp.reg, s->cfa_reg);
        ck_assert_int_eq(f.sp.off, s->cfa_off);
    }
}

START_TEST(vsp_adjustments)
{
    /* CFA = sp + N, nothing saved: vsp += N */
    static const int32_t offs[] = {0, 4, 8, 256, 260, 512, 516, 0x1000, 0x40000};
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++) {
        struct pt_cfi_state s = state(SP, offs[i], 0, NULL);
        round_trip(&s, NULL, 0);
    }
    round_trip(&(struct pt_cfi_state){.cfa_reg = SP, .cfa_off = 4}, (const uint8_t[]){0x00}, 1);
    round_trip(&(struct pt_cfi_state){.cfa_reg = SP, .cfa_off = 256}, (const uint8_t[]){0x3f}, 1);
    round_trip(&(struct pt_cfi_state){.cfa_reg = SP, .cfa_off = 260}, (const uint8_t[]){0x3f, 0x00}, 2);
    round_trip(&(struct pt_cfi_state){.cfa_reg = SP, .cfa_off = 0x204}, (const uint8_t[]){0xb2, 0x00}, 2);
    /* a frame pointer below the saves: vsp = r11, then down */
    static const int32_t fp[][2] = {{R11, -16}, {SP, -12}, {LR, -8}};
    struct pt_cfi_state s = state(R11, 4, 3, fp);
    round_trip(&s, (const uint8_t[]){0x9b, 0x42, 0x86, 0x80}, 4);
    /* far down: several vsp -= 256 */
    static const int32_t deep[][2] = {{LR, -0x304}};
    s = state(R11, 0, 1, deep);
    round_trip(&s, NULL, 0);
}
END_TEST

START_TEST(pop_forms)
{
    static const int32_t r4_r7[][2] = {{4, -16}, {5, -12}, {6, -8}, {7, -4}};
    round_trip(&(struct pt_cfi_state){.cfa_reg = SP}, (const uint8_t[]){0}, 0); /* CFA sp+0: nothing */
    struct pt_cfi_state s = state(SP, 16, 4, r4_r7);
    round_trip(&s, (const uint8_t[]){0xa3}, 1);
    static const int32_t r4_r11_lr[][2] = {{4, -36}, {5, -32}, {6, -28}, {7, -24}, {8, -20},
                                           {9, -16}, {10, -12}, {11, -8}, {LR, -4}};
    s = state(SP, 36, 9, r4_r11_lr);
    round_trip(&s, (const uint8_t[]){0xaf}, 1);
    static const int32_t r0_r4[][2] = {{0, -20}, {1, -16}, {2, -12}, {3, -8}, {4, -4}};
    s = state(SP, 20, 5, r0_r4);
    round_trip(&s, (const uint8_t[]){0xb1, 0x0f, 0xa0}, 3);
    static const int32_t gap[][2] = {{R11, -16}, {LR, -8}}; /* a slot between: skipped */
    s = state(SP, 16, 2, gap);
    round_trip(&s, (const uint8_t[]){0x80, 0x80, 0x00, 0x84, 0x00, 0x00}, 6);
    static const int32_t vfp[][2] = {{D8, -16}, {D8 + 1, -8}};
    s = state(SP, 16, 2, vfp);
    round_trip(&s, (const uint8_t[]){0xc9, 0x81}, 2);
    static const int32_t high_d[][2] = {{256 + 16, -8}};
    s = state(SP, 8, 1, high_d);
    round_trip(&s, (const uint8_t[]){0xc8, 0x00}, 2);
}
END_TEST

START_TEST(rules_ehabi_cannot_say_are_refused)
{
    uint8_t ops[PT_EHABI_MAX_OPS];
    size_t n;
    const char *why;
    struct pt_cfi_state s = {.cfa_reg = PC};
    errno = 0;
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    ck_assert_int_eq(errno, EINVAL);
    s = (struct pt_cfi_state){.cfa_reg = SP, .cfa_off = 6};
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    static const int32_t pc_saved[][2] = {{PC, -4}};
    s = state(SP, 8, 1, pc_saved);
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    static const int32_t odd_slot[][2] = {{R4, -6}};
    s = state(SP, 8, 1, odd_slot);
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    static const int32_t s_reg[][2] = {{64, -4}}; /* s0: not a core or d register */
    s = state(SP, 8, 1, s_reg);
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    s = (struct pt_cfi_state){.cfa_reg = SP, .n = 1};
    s.r[0].reg = R4;
    s.r[0].op = PT_CFI_UNDEFINED;
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    s = (struct pt_cfi_state){.cfa_reg = SP, .untracked = true};
    ck_assert_int_eq(pt_ehabi_ops(arm(), &s, ops, &n, &why), -1);
    /* a table whose return address is not in lr */
    struct pt_arch other = *arm();
    other.ra_column = R12;
    s = (struct pt_cfi_state){.cfa_reg = SP};
    ck_assert_int_eq(pt_ehabi_ops(&other, &s, ops, &n, &why), -1);
    ck_assert_ptr_nonnull(strstr(why, "r14"));
    /* rows out of order */
    struct pt_cfi_row rows[] = {{8, CFA_OFFSET(8)}, {4, CFA_OFFSET(4)}};
    struct pt_ehabi_region r[4];
    ck_assert_int_eq(pt_ehabi_regions(arm(), rows, 2, 16, r, 4, &n, &why), -1);
}
END_TEST

/* ---- index tables ----------------------------------------------------- */

START_TEST(index_tables)
{
    struct pt_layout l;
    ck_assert_int_eq(pt_layout_build(&l, arm(), NULL), 0);
    struct pt_ehabi_region r[PT_EHABI_MAX_REGIONS];
    size_t n, n_index;
    ck_assert_int_eq(pt_ehabi_layout_regions(&l, r, PT_EHABI_MAX_REGIONS, &n, NULL), 0);
    size_t extab = 0, inline_regions = 0;
    for (size_t k = 0; k < n; k++) {
        extab += pt_ehabi_extab_size(&r[k]);
        inline_regions += pt_ehabi_extab_size(&r[k]) == 0;
    }
    ck_assert_uint_gt(extab, 0); /* the arm table's body needs .ARM.extab */
    const size_t copies = 5, stride = 40;
    size_t need = pt_ehabi_tables(NULL, 0, 0, 0x100000, copies, stride, stride, r, n, false, &n_index);
    ck_assert_uint_eq(n_index, copies * n + 1);
    ck_assert_uint_eq(need, n_index * 8 + extab); /* extab entries shared by the copies */
    uint8_t *tab = malloc(need);
    errno = 0;
    ck_assert_uint_eq(pt_ehabi_tables(tab, need - 1, 0x200000, 0x100000, copies, stride, stride, r, n, false, &n_index), 0);
    ck_assert_int_eq(errno, ENOSPC);
    ck_assert_uint_eq(pt_ehabi_tables(tab, need, 0x200000, 0x100000, copies, stride, stride, r, n, false, &n_index), need);
    uint64_t prev = 0;
    size_t inlined = 0;
    for (size_t i = 0; i < n_index; i++) {
        struct pt_ehabi_entry e;
        const char *why = "";
        ck_assert_msg(pt_ehabi_read_entry(tab, n_index * 8, 0x200000, tab, need, 0x200000, i, false, &e, &why) == 0, "%s",
                      why);
        ck_assert(i == 0 || e.start > prev); /* sorted, as libgcc's binary search wants */
        prev = e.start;
        if (i + 1 == n_index) {
            ck_assert(e.cantunwind);
            ck_assert_uint_eq(e.start, 0x100000 + (copies - 1) * stride + stride - PT_EHABI_SHIFT);
            continue;
        }
        size_t c = i / n, k = i % n;
        ck_assert_uint_eq(e.start, 0x100000 + c * stride + r[k].start - PT_EHABI_SHIFT);
        ck_assert_uint_eq(e.n_ops >= r[k].n_ops, 1);
        ck_assert_mem_eq(e.ops, r[k].ops, r[k].n_ops);
        for (size_t b = r[k].n_ops; b < e.n_ops; b++)
            ck_assert_uint_eq(e.ops[b], 0xb0); /* Finish padding */
        inlined += e.inline_entry;
        ck_assert_uint_eq(e.personality, e.inline_entry ? 0 : 1);
    }
    ck_assert_uint_eq(inlined, copies * inline_regions);
    /* a table more than 1 GiB from its code: prel31 cannot reach */
    errno = 0;
    ck_assert_uint_eq(pt_ehabi_tables(tab, need, 0x200000 + (UINT64_C(1) << 31), 0x100000, copies, stride, stride, r, n,
                                      false, &n_index),
                      0);
    ck_assert_int_eq(errno, EINVAL);
    free(tab);
}
END_TEST

START_TEST(reader_refuses_damaged_tables)
{
    uint8_t index[16] = {0}, extab[8] = {0};
    struct pt_ehabi_entry e;
    const char *why = NULL;
    /* bit 31 set in the function word */
    index[3] = 0x80;
    ck_assert_int_eq(pt_ehabi_read_entry(index, 16, 0x1000, extab, 8, 0x2000, 0, false, &e, &why), -1);
    ck_assert_ptr_nonnull(why);
    index[3] = 0;
    /* past the table */
    ck_assert_int_eq(pt_ehabi_read_entry(index, 16, 0x1000, extab, 8, 0x2000, 2, false, &e, &why), -1);
    /* an extab offset outside .ARM.extab */
    index[4] = 0x40; /* prel31 +0x40 from 0x1004: 0x1044 */
    ck_assert_int_eq(pt_ehabi_read_entry(index, 16, 0x1000, extab, 8, 0x2000, 0, false, &e, &why), -1);
    /* an extab entry claiming more words than there are */
    uint32_t d = 0x2000 - 0x1004;
    memcpy(index + 4, &d, 4);
    uint32_t head = 0x81ff0000u; /* personality 1, 255 more words */
    memcpy(extab, &head, 4);
    ck_assert_int_eq(pt_ehabi_read_entry(index, 16, 0x1000, extab, 8, 0x2000, 0, false, &e, &why), -1);
    /* an inline word of another personality */
    uint32_t inl = 0x81b0b0b0u;
    memcpy(index + 4, &inl, 4);
    ck_assert_int_eq(pt_ehabi_read_entry(index, 16, 0x1000, extab, 8, 0x2000, 0, false, &e, &why), -1);
    /* opcodes: reserved vsp = r13, truncated pop, refuse-to-unwind mask */
    struct pt_ehabi_frame f;
    ck_assert_int_eq(pt_ehabi_execute((const uint8_t[]){0x9d}, 1, &f, &why), -1);
    ck_assert_int_eq(pt_ehabi_execute((const uint8_t[]){0x84}, 1, &f, &why), -1);
    ck_assert_int_eq(pt_ehabi_execute((const uint8_t[]){0x80, 0x00}, 2, &f, &why), -1);
    ck_assert_int_eq(pt_ehabi_execute((const uint8_t[]){0xb2, 0x80, 0x80, 0x80, 0x80, 0x80}, 6, &f, &why), -1);
}
END_TEST

/* ---- the registry libgcc's lookup reads ------------------------------ */

static atomic_bool stop;
static atomic_int wrong;
static const uint8_t table_a[8], table_b[8];

static void *churn(void *arg)
{
    uintptr_t base = (uintptr_t)arg;
    for (int i = 0; i < 20000; i++) {
        int id = pt_ehabi_add(base, base + 0x1000, table_b, 1);
        if (id >= 0)
            pt_ehabi_remove(id);
    }
    return NULL;
}

static void *look(void *arg)
{
    (void)arg;
    while (!atomic_load(&stop)) {
        int n = 0;
        if (pt_ehabi_find(0x10000 + 8, &n) != (uintptr_t)table_a || n != 1)
            atomic_fetch_add(&wrong, 1);
        n = 0;
        uintptr_t t = pt_ehabi_find(0x80000 + 8, &n);
        if (t && (t != (uintptr_t)table_b || n != 1)) /* there or not, never torn */
            atomic_fetch_add(&wrong, 1);
    }
    return NULL;
}

START_TEST(registry_while_ranges_come_and_go)
{
    int kept = pt_ehabi_add(0x10000, 0x11000, table_a, 1);
    ck_assert_int_ge(kept, 0);
    errno = 0;
    ck_assert_int_eq(pt_ehabi_add(0x2000, 0x1000, table_a, 1), -1);
    ck_assert_int_eq(errno, EINVAL);
    pthread_t w[2], r[2];
    for (int i = 0; i < 2; i++) {
        pthread_create(&w[i], NULL, churn, (void *)(uintptr_t)(0x80000 + i * 0x1000));
        pthread_create(&r[i], NULL, look, NULL);
    }
    for (int i = 0; i < 2; i++)
        pthread_join(w[i], NULL);
    atomic_store(&stop, true);
    for (int i = 0; i < 2; i++)
        pthread_join(r[i], NULL);
    ck_assert_int_eq(atomic_load(&wrong), 0);
    int n = 0;
    ck_assert_uint_eq(pt_ehabi_find(0x80000 + 8, &n), 0); /* all removed */
    /* more ranges than one chunk of slots holds, each found, then gone */
    static int ids[600];
    for (int i = 0; i < 600; i++) {
        ids[i] = pt_ehabi_add(0x1000000 + (uintptr_t)i * 0x100, 0x1000000 + (uintptr_t)i * 0x100 + 0x80, table_b, 3);
        ck_assert_int_ge(ids[i], 0);
    }
    for (int i = 0; i < 600; i++) {
        n = 0;
        ck_assert_uint_eq(pt_ehabi_find(0x1000000 + (uintptr_t)i * 0x100 + 0x7f, &n), (uintptr_t)table_b);
        ck_assert_int_eq(n, 3);
        ck_assert_uint_eq(pt_ehabi_find(0x1000000 + (uintptr_t)i * 0x100 + 0x80, &n), 0);
    }
    for (int i = 0; i < 600; i++)
        pt_ehabi_remove(ids[i]);
    ck_assert_uint_eq(pt_ehabi_find(0x1000000 + 8, &n), 0);
    pt_ehabi_remove(kept);
    ck_assert_uint_eq(pt_ehabi_find(0x10000 + 8, &n), 0);
}
END_TEST

static Suite *ehabi_suite(void)
{
    Suite *s = suite_create("ehabi");
    TCase *t = tcase_create("derivation");
    tcase_add_test(t, every_boundary_recovers_what_the_eh_frame_says);
    tcase_add_test(t, vsp_adjustments);
    tcase_add_test(t, pop_forms);
    tcase_add_test(t, rules_ehabi_cannot_say_are_refused);
    tcase_add_test(t, index_tables);
    tcase_add_test(t, reader_refuses_damaged_tables);
    suite_add_tcase(s, t);
    t = tcase_create("registry");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, registry_while_ranges_come_and_go);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    return pt_check_run(ehabi_suite()) ? 1 : 0;
}
