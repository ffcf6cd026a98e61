/* SPDX-License-Identifier: MIT */
/* Emit layer: Arm EHABI index and extab entries from CFI rows (ehabi.h).
 * Opcodes: IHI 0038B, 10.3 "Frame unwinding instructions", table 4. */
#include "emit/ehabi.h"

#include "emit/bytebuf.h"
#include "emit/eh_frame.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

enum {
    R_SP = 13,
    R_LR = 14,
    R_PC = 15,
    DWARF_D0 = 256, /* d0-d31: 256-287 (aadwarf32 3.1) */
    OP_FINISH = 0xb0,
};

static int refuse(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    errno = EINVAL;
    return -1;
}

struct ops {
    uint8_t *p;
    size_t n;
    bool full;
};

static void put(struct ops *o, uint8_t v)
{
    if (o->n == PT_EHABI_MAX_OPS)
        o->full = true;
    else
        o->p[o->n++] = v;
}

/* vsp += d (d a multiple of 4): 00xxxxxx adds 4..256, 0xb2 uleb128 adds
 * 0x204 and more; 01xxxxxx subtracts 4..256. */
static void adjust(struct ops *o, int64_t d)
{
    if (d > 0x200) {
        uint8_t leb[10];
        size_t k = pt_uleb_encode(leb, (uint64_t)(d - 0x204) >> 2);
        put(o, 0xb2);
        for (size_t i = 0; i < k; i++)
            put(o, leb[i]);
    } else if (d > 0x100) {
        put(o, 0x3f);
        put(o, (uint8_t)((d - 0x104) >> 2));
    } else if (d > 0) {
        put(o, (uint8_t)((d - 4) >> 2));
    } else {
        for (d = -d; d > 0x100; d -= 0x100)
            put(o, 0x7f);
        if (d > 0)
            put(o, (uint8_t)(0x40 | ((d - 4) >> 2)));
    }
}

/* Pops the core registers of `mask` (bit r: register r) from vsp up,
 * lowest register at the lowest address: r4-r15 first as one opcode, then
 * r0-r3 (they sit below r4's slots, so a mask holding both is split by
 * the caller).  The short forms pop r4-r[4+n] (and r14). */
static void pop_core(struct ops *o, uint32_t mask)
{
    uint32_t high = (mask >> 4) & 0xfff; /* bit i: r(4+i) */
    unsigned n = 0;
    while (n < 8 && (high >> n) & 1)
        n++;
    uint32_t rest = high & ~((1u << n) - 1) & ~(1u << (R_LR - 4));
    if (high && n && !rest) {
        put(o, (uint8_t)(((high >> (R_LR - 4)) & 1 ? 0xa8 : 0xa0) | (n - 1)));
    } else if (high) {
        put(o, (uint8_t)(0x80 | (high >> 8)));
        put(o, (uint8_t)high);
    }
}

static void pop_low(struct ops *o, uint32_t mask)
{
    put(o, 0xb1);
    put(o, (uint8_t)(mask & 0xf));
}

/* A saved register and its slot, for sorting. */
struct slot {
    uint16_t reg;
    int32_t off;
};

static int by_offset(const void *x, const void *y)
{
    const struct slot *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

static bool is_core(uint16_t reg) { return reg < 16; }
static bool is_d(uint16_t reg) { return reg >= DWARF_D0 && reg < DWARF_D0 + 32; }

int pt_ehabi_ops(const struct pt_arch *a, const struct pt_cfi_state *s, uint8_t *ops, size_t *n, const char **why)
{
    struct ops o = {.p = ops};
    if (s->untracked)
        return refuse(why, "a rule EHABI has no opcode for");
    if (a->ra_column != R_LR)
        return refuse(why, "EHABI returns through lr: the return address column must be r14");
    if (s->cfa_reg >= 16 || s->cfa_reg == R_PC)
        return refuse(why, "the CFA is not from a core register other than pc");
    if (s->cfa_off % 4)
        return refuse(why, "the CFA offset is not a multiple of 4");
    if (s->cfa_reg != R_SP)
        put(&o, (uint8_t)(0x90 | s->cfa_reg)); /* vsp = r[n] */

    struct slot saved[PT_CFI_STATE_REGS];
    size_t k = 0;
    for (int i = 0; i < s->n; i++) {
        if (s->r[i].op == PT_CFI_SAME_VALUE)
            continue; /* EHABI leaves a register alone */
        if (s->r[i].op != PT_CFI_OFFSET)
            return refuse(why, "an undefined register: EHABI can only leave it as it is");
        if (s->r[i].reg == R_PC)
            return refuse(why, "pc saved: EHABI's Finish takes the return address from lr");
        if (!is_core(s->r[i].reg) && !is_d(s->r[i].reg))
            return refuse(why, "a saved register that is neither r0-r15 nor d0-d31");
        if (s->r[i].off % 4)
            return refuse(why, "a save slot offset that is not a multiple of 4");
        saved[k++] = (struct slot){s->r[i].reg, s->r[i].off};
    }
    qsort(saved, k, sizeof saved[0], by_offset);

    int64_t cur = -(int64_t)s->cfa_off; /* vsp - CFA */
    for (size_t i = 0; i < k;) {
        /* a run of slots one pop takes: ascending registers of one kind
         * in consecutive slots (4 bytes a core register, 8 a d register) */
        bool core = is_core(saved[i].reg);
        unsigned size = core ? 4 : 8;
        size_t j = i + 1;
        while (j < k && is_core(saved[j].reg) == core && saved[j].off == saved[j - 1].off + (int32_t)size &&
               saved[j].reg > saved[j - 1].reg && (core || (saved[j].reg - DWARF_D0) / 16 == (saved[i].reg - DWARF_D0) / 16))
            j++;
        adjust(&o, saved[i].off - cur);
        uint32_t mask = 0;
        for (size_t m = i; m < j; m++)
            mask |= core ? 1u << saved[m].reg : 1u << (saved[m].reg - DWARF_D0);
        if (core) {
            /* r0-r3 sit below r4 and up: pop them first */
            if (mask & 0xf)
                pop_low(&o, mask);
            pop_core(&o, mask);
        } else {
            unsigned first = (unsigned)(saved[i].reg - DWARF_D0);
            put(&o, first < 16 ? 0xc9 : 0xc8); /* pop d[ssss]-d[ssss+cccc], as saved by VPUSH */
            put(&o, (uint8_t)(((first % 16) << 4) | (unsigned)(j - i - 1)));
        }
        /* a popped r13 is the caller's sp, which is the CFA */
        cur = core && (mask >> R_SP) & 1 ? 0 : saved[j - 1].off + (int64_t)size;
        i = j;
    }
    adjust(&o, -cur);
    if (o.full)
        return refuse(why, "more unwind opcodes than an entry holds here");
    *n = o.n;
    return 0;
}

/* Appends the region of the rules `s` from `at` on, unless its opcodes
 * are those of the region before. */
static int add_region(const struct pt_arch *a, const struct pt_cfi_state *s, uint32_t at,
                      struct pt_ehabi_region *out, size_t cap, size_t *n, const char **why)
{
    struct pt_ehabi_region r = {.start = at};
    size_t k;
    if (pt_ehabi_ops(a, s, r.ops, &k, why) < 0)
        return -1;
    r.n_ops = (uint8_t)k;
    if (*n && out[*n - 1].n_ops == r.n_ops && memcmp(out[*n - 1].ops, r.ops, k) == 0)
        return 0;
    if (*n == cap)
        return refuse(why, "more EHABI regions than the emitter holds");
    out[(*n)++] = r;
    return 0;
}

int pt_ehabi_regions(const struct pt_arch *a, const struct pt_cfi_row *rows, size_t n_rows, size_t code_size,
                     struct pt_ehabi_region *out, size_t cap, size_t *n_out, const char **why)
{
    for (size_t i = 1; i < n_rows; i++)
        if (rows[i].at < rows[i - 1].at)
            return refuse(why, "rows not sorted by offset");
    struct pt_cfi_state entry, cur;
    pt_cfi_state_entry(&entry, a);
    cur = entry;
    size_t n = 0, i = 0;
    uint32_t at = 0;
    for (;;) {
        while (i < n_rows && rows[i].at <= at) /* every row that holds from `at` */
            pt_cfi_state_apply(&cur, &rows[i++].cfi, &entry);
        if (add_region(a, &cur, at, out, cap, &n, why) < 0)
            return -1;
        if (i == n_rows || rows[i].at >= code_size) /* rows past the code describe none */
            break;
        at = rows[i].at;
    }
    *n_out = n;
    return 0;
}

int pt_ehabi_layout_regions(const struct pt_layout *l, struct pt_ehabi_region *out, size_t cap, size_t *n_out,
                            const char **why)
{
    struct pt_cfi_row rows[PT_LAYOUT_MAX_INSNS * PT_INSN_MAX_CFI];
    size_t n = pt_layout_cfi_rows(l, rows);
    return pt_ehabi_regions(l->arch, rows, n, l->code_len, out, cap, n_out, why);
}

size_t pt_ehabi_extab_size(const struct pt_ehabi_region *r)
{
    if (r->n_ops <= 3)
        return 0;
    /* word 0: 0x81, the count of further words, two opcodes; then four
     * opcodes a word; then the zero word that ends the descriptors */
    return 4 + 4 * ((r->n_ops - 2 + 3) / 4) + 4;
}

/* The opcodes padded with Finish: byte i of the entry's opcode stream. */
static uint8_t op_at(const struct pt_ehabi_region *r, size_t i)
{
    return i < r->n_ops ? r->ops[i] : OP_FINISH;
}

static void write_extab(uint8_t *p, const struct pt_ehabi_region *r, bool be)
{
    size_t words = (r->n_ops - 2 + 3) / 4;
    pt_store_u32(p, 0x81000000u | (uint32_t)words << 16 | (uint32_t)op_at(r, 0) << 8 | op_at(r, 1), be);
    for (size_t w = 0; w < words; w++) {
        size_t b = 2 + 4 * w;
        pt_store_u32(p + 4 + 4 * w,
                     (uint32_t)op_at(r, b) << 24 | (uint32_t)op_at(r, b + 1) << 16 | (uint32_t)op_at(r, b + 2) << 8 |
                         op_at(r, b + 3),
                     be);
    }
    pt_store_u32(p + 4 + 4 * words, 0, be);
}

/* prel31: the signed distance from `place` to `target` in 31 bits. */
static bool prel31(uint64_t place, uint64_t target, uint32_t *out)
{
    int64_t d = (int64_t)(target - place);
    if (d < -(INT64_C(1) << 30) || d >= (INT64_C(1) << 30))
        return false;
    *out = (uint32_t)d & 0x7fffffffu;
    return true;
}

size_t pt_ehabi_tables(uint8_t *dst, size_t cap, uint64_t at, uint64_t code, size_t count, size_t stride, size_t end,
                       const struct pt_ehabi_region *r, size_t n_regions, bool big_endian, size_t *n_index)
{
    size_t entries = count * n_regions + 1;
    size_t extab_at[PT_EHABI_MAX_REGIONS] = {0}, total = entries * 8;
    if (n_regions > PT_EHABI_MAX_REGIONS) {
        errno = EINVAL;
        return 0;
    }
    for (size_t k = 0; k < n_regions; k++) {
        size_t len = pt_ehabi_extab_size(&r[k]);
        extab_at[k] = len ? total : 0;
        total += len;
    }
    *n_index = entries;
    if (!dst)
        return total;
    if (total > cap) {
        errno = ENOSPC;
        return 0;
    }
    uint8_t *p = dst;
    for (size_t c = 0; c < count; c++)
        for (size_t k = 0; k < n_regions; k++, p += 8) {
            uint64_t place = at + (uint64_t)(p - dst);
            uint32_t fn, data;
            if (!prel31(place, code + c * stride + r[k].start - PT_EHABI_SHIFT, &fn) ||
                (extab_at[k] && !prel31(place + 4, at + extab_at[k], &data))) {
                errno = EINVAL;
                return 0;
            }
            if (!extab_at[k])
                data = 0x80000000u | (uint32_t)op_at(&r[k], 0) << 16 | (uint32_t)op_at(&r[k], 1) << 8 | op_at(&r[k], 2);
            pt_store_u32(p, fn, big_endian);
            pt_store_u32(p + 4, data, big_endian);
        }
    uint32_t fn;
    if (!prel31(at + (uint64_t)(p - dst), code + (count - 1) * stride + end - PT_EHABI_SHIFT, &fn)) {
        errno = EINVAL;
        return 0;
    }
    pt_store_u32(p, fn, big_endian);
    pt_store_u32(p + 4, PT_EHABI_CANTUNWIND, big_endian);
    for (size_t k = 0; k < n_regions; k++)
        if (extab_at[k])
            write_extab(dst + extab_at[k], &r[k], big_endian);
    return total;
}
