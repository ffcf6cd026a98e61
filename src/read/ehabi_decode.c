/* SPDX-License-Identifier: MIT */
/* Readers: Arm EHABI index and extab entries, and their unwind opcodes
 * run symbolically (ehabi_decode.h).  Opcodes: IHI 0038B 10.3, table 4. */
#include "read/ehabi_decode.h"

#include "read/eh_decode.h"

#include <stdio.h>
#include <string.h>

static int fail(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    return -1;
}

static uint32_t load32(const uint8_t *p, bool be)
{
    return be ? (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]
              : (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}

/* The address a prel31 field at `place` names. */
static uint64_t prel31_target(uint64_t place, uint32_t w)
{
    int64_t d = (int64_t)(w & 0x7fffffffu);
    if (d & 0x40000000)
        d -= INT64_C(1) << 31;
    return place + (uint64_t)d;
}

/* The opcode bytes of a compact-model word stream: word 0 holds `first`
 * opcodes after its header byte(s), each further word four. */
static int take_ops(struct pt_ehabi_entry *e, const uint8_t *words, size_t n_words, unsigned skip, bool be)
{
    for (size_t w = 0; w < n_words; w++) {
        uint32_t v = load32(words + 4 * w, be);
        for (unsigned b = w ? 0 : skip; b < 4; b++) {
            if (e->n_ops == PT_EHABI_DECODE_MAX_OPS)
                return -1;
            e->ops[e->n_ops++] = (uint8_t)(v >> (24 - 8 * b));
        }
    }
    return 0;
}

int pt_ehabi_read_entry(const uint8_t *index, size_t index_len, uint64_t index_addr, const uint8_t *extab,
                        size_t extab_len, uint64_t extab_addr, size_t i, bool big_endian,
                        struct pt_ehabi_entry *e, const char **why)
{
    memset(e, 0, sizeof *e);
    if (i >= index_len / 8)
        return fail(why, "index entry past the table");
    const uint8_t *p = index + 8 * i;
    uint64_t place = index_addr + 8 * i;
    uint32_t fn = load32(p, big_endian), data = load32(p + 4, big_endian);
    if (fn & 0x80000000u)
        return fail(why, "index entry whose first word has bit 31 set");
    e->start = prel31_target(place, fn);
    if (data == 1) {
        e->cantunwind = true;
        return 0;
    }
    if (data & 0x80000000u) { /* inline: personality 0, three opcodes */
        if ((data >> 24) != 0x80)
            return fail(why, "inline index entry that is not personality routine 0");
        e->inline_entry = true;
        uint8_t w[4];
        memcpy(w, p + 4, 4);
        return take_ops(e, w, 1, 1, big_endian) < 0 ? fail(why, "too many opcodes") : 0;
    }
    uint64_t at = prel31_target(place + 4, data);
    if (at < extab_addr || at - extab_addr + 4 > extab_len || (at - extab_addr) % 4)
        return fail(why, "index entry pointing outside .ARM.extab");
    const uint8_t *x = extab + (at - extab_addr);
    size_t room = (extab_len - (size_t)(at - extab_addr)) / 4;
    uint32_t head = load32(x, big_endian);
    if (!(head & 0x80000000u)) { /* a generic personality routine's own data */
        e->personality = 0x100;
        return 0;
    }
    e->personality = (head >> 24) & 0xf;
    if ((head >> 28) != 8 || e->personality > 2)
        return fail(why, "extab entry of an unknown compact personality routine");
    if (e->personality == 0)
        return take_ops(e, x, 1, 1, big_endian) < 0 ? fail(why, "too many opcodes") : 0;
    size_t more = (head >> 16) & 0xff;
    if (1 + more > room)
        return fail(why, "extab entry longer than .ARM.extab");
    return take_ops(e, x, 1 + more, 2, big_endian) < 0 ? fail(why, "too many opcodes") : 0;
}

static struct pt_ehabi_value reg_value(unsigned r)
{
    return (struct pt_ehabi_value){.reg = (uint16_t)r};
}

/* Pops `count` registers from vsp up (size bytes each) into regs[first..]. */
static int pop(struct pt_ehabi_frame *f, const unsigned *list, size_t count, unsigned size, const char **why)
{
    if (f->sp.deref)
        return fail(why, "a pop from a vsp loaded from memory: not followed");
    struct pt_ehabi_value at = f->sp;
    bool sp_popped = false;
    struct pt_ehabi_value new_sp = {0};
    for (size_t k = 0; k < count; k++) {
        struct pt_ehabi_value v = {.deref = true, .reg = at.reg, .off = at.off};
        unsigned r = list[k];
        f->regs[r] = v;
        f->popped |= UINT64_C(1) << r;
        if (r == 13) {
            sp_popped = true;
            new_sp = v;
        }
        at.off += (int32_t)size;
    }
    f->sp = sp_popped ? new_sp : at;
    return 0;
}

static void vsp_add(struct pt_ehabi_frame *f, int64_t d)
{
    if (f->sp.deref)
        f->sp.add += (int32_t)d;
    else
        f->sp.off += (int32_t)d;
}

int pt_ehabi_execute(const uint8_t *ops, size_t n, struct pt_ehabi_frame *f, const char **why)
{
    memset(f, 0, sizeof *f);
    for (unsigned r = 0; r < 48; r++)
        f->regs[r] = reg_value(r);
    f->sp = reg_value(13);
    bool pc_set = false;
    unsigned list[32];
    for (size_t i = 0; i < n;) {
        uint8_t op = ops[i++];
        if (op < 0x80) { /* 00xxxxxx vsp += (x << 2) + 4; 01xxxxxx vsp -= */
            int64_t d = ((op & 0x3f) << 2) + 4;
            vsp_add(f, op & 0x40 ? -d : d);
        } else if (op < 0x90) { /* 1000iiii iiiiiiii: pop r4-r15 under mask */
            if (i >= n)
                return fail(why, "truncated pop");
            unsigned mask = (unsigned)(op & 0xf) << 8 | ops[i++], c = 0;
            if (!mask)
                return fail(why, "refuse to unwind (pop of an empty mask)");
            for (unsigned r = 0; r < 12; r++)
                if (mask >> r & 1)
                    list[c++] = 4 + r;
            if (pop(f, list, c, 4, why) < 0)
                return -1;
            pc_set = pc_set || (mask >> 11 & 1);
        } else if (op < 0xa0) { /* 1001nnnn: vsp = r[nnnn] */
            unsigned r = op & 0xf;
            if (r == 13 || r == 15)
                return fail(why, "reserved opcode (vsp = r13/r15)");
            f->sp = f->regs[r];
        } else if (op < 0xb0) { /* 1010Lnnn: pop r4-r[4+nnn] (and r14) */
            unsigned c = 0;
            for (unsigned r = 4; r <= 4u + (op & 7); r++)
                list[c++] = r;
            if (op & 8)
                list[c++] = 14;
            if (pop(f, list, c, 4, why) < 0)
                return -1;
        } else if (op == 0xb0) { /* Finish */
            break;
        } else if (op == 0xb1) { /* pop r0-r3 under mask */
            if (i >= n)
                return fail(why, "truncated pop");
            unsigned mask = ops[i++], c = 0;
            if (!mask || mask > 0xf)
                return fail(why, "spare or reserved pop r0-r3 mask");
            for (unsigned r = 0; r < 4; r++)
                if (mask >> r & 1)
                    list[c++] = r;
            if (pop(f, list, c, 4, why) < 0)
                return -1;
        } else if (op == 0xb2) { /* vsp += 0x204 + (uleb128 << 2) */
            uint64_t v = 0;
            unsigned shift = 0;
            for (;;) {
                if (i >= n || shift > 28)
                    return fail(why, "truncated or long uleb128");
                uint8_t b = ops[i++];
                v |= (uint64_t)(b & 0x7f) << shift;
                shift += 7;
                if (!(b & 0x80))
                    break;
            }
            vsp_add(f, 0x204 + (int64_t)(v << 2));
        } else if (op == 0xc8 || op == 0xc9) { /* pop d[ssss(+16)]-d[...+cccc], VPUSH */
            if (i >= n)
                return fail(why, "truncated pop");
            unsigned s = (ops[i] >> 4) + (op == 0xc8 ? 16 : 0), c = (ops[i] & 0xf) + 1u;
            i++;
            if (s + c > 32)
                return fail(why, "pop of d registers past d31");
            for (unsigned k = 0; k < c; k++)
                list[k] = 16 + s + k;
            if (pop(f, list, c, 8, why) < 0)
                return -1;
        } else if ((op & 0xf8) == 0xd0) { /* pop d8-d[8+nnn], VPUSH */
            unsigned c = (op & 7) + 1u;
            for (unsigned k = 0; k < c; k++)
                list[k] = 16 + 8 + k;
            if (pop(f, list, c, 8, why) < 0)
                return -1;
        } else {
            return fail(why, "an opcode this reader does not follow (FSTMFDX, iWMMXt, reserved or spare)");
        }
    }
    f->pc = pc_set ? f->regs[15] : f->regs[14];
    return 0;
}

int pt_ehabi_frame_from_row(const struct pt_row *row, unsigned ra_column, struct pt_ehabi_frame *f)
{
    memset(f, 0, sizeof *f);
    if (row->cfa_expression || row->cfa_reg > 15)
        return -1;
    for (unsigned r = 0; r < 48; r++)
        f->regs[r] = reg_value(r);
    struct pt_ehabi_value cfa = {.reg = (uint16_t)row->cfa_reg, .off = (int32_t)row->cfa_offset};
    f->sp = cfa;
    for (size_t k = 0; k < row->n_rules; k++) {
        const struct pt_reg_rule *u = &row->rules[k];
        if (u->kind == PT_RULE_SAME_VALUE)
            continue;
        if (u->kind != PT_RULE_OFFSET)
            return -1;
        unsigned r = u->reg < 16 ? u->reg : u->reg >= 256 && u->reg < 288 ? u->reg - 256 + 16 : 48;
        if (r == 48)
            return -1;
        f->regs[r] = (struct pt_ehabi_value){.deref = true, .reg = cfa.reg, .off = cfa.off + (int32_t)u->offset};
        f->popped |= UINT64_C(1) << r;
        if (r == 13)
            f->sp = f->regs[r];
    }
    if (ra_column > 15)
        return -1;
    f->pc = f->regs[ra_column];
    return 0;
}

static bool same_value(const struct pt_ehabi_value *a, const struct pt_ehabi_value *b)
{
    return a->deref == b->deref && a->reg == b->reg && a->off == b->off && a->add == b->add;
}

void pt_ehabi_value_str(const struct pt_ehabi_value *v, char *out, size_t len)
{
    static const char *const core[16] = {"r0", "r1", "r2", "r3", "r4", "r5", "r6", "r7",
                                         "r8", "r9", "r10", "r11", "r12", "sp", "lr", "pc"};
    char reg[8];
    if (v->reg < 16)
        snprintf(reg, sizeof reg, "%s", core[v->reg]);
    else
        snprintf(reg, sizeof reg, "d%u", (unsigned)(v->reg - 16));
    if (v->deref)
        snprintf(out, len, "[%s%+d]%+d", reg, v->off, v->add);
    else
        snprintf(out, len, "%s%+d", reg, v->off);
}

static bool differ(const char *what, const struct pt_ehabi_value *x, const struct pt_ehabi_value *y, char *why,
                   size_t len)
{
    if (same_value(x, y))
        return false;
    char a[48], b[48];
    pt_ehabi_value_str(x, a, sizeof a);
    pt_ehabi_value_str(y, b, sizeof b);
    snprintf(why, len, "%s: %s against %s", what, a, b);
    return true;
}

bool pt_ehabi_same_caller(const struct pt_ehabi_frame *x, const struct pt_ehabi_frame *y, char *why, size_t len)
{
    if (differ("sp", &x->sp, &y->sp, why, len) || differ("pc", &x->pc, &y->pc, why, len))
        return false;
    static const unsigned saved[] = {4, 5, 6, 7, 8, 9, 10, 11, 16 + 8, 16 + 9, 16 + 10, 16 + 11,
                                     16 + 12, 16 + 13, 16 + 14, 16 + 15};
    for (size_t k = 0; k < sizeof saved / sizeof saved[0]; k++) {
        char what[8];
        unsigned r = saved[k];
        snprintf(what, sizeof what, r < 16 ? "r%u" : "d%u", r < 16 ? r : r - 16);
        if (differ(what, &x->regs[r], &y->regs[r], why, len))
            return false;
    }
    return true;
}
