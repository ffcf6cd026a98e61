/* SPDX-License-Identifier: MIT */
/* Emit layer: a table laid out as a trampoline template (instruction
 * offsets, data words, fixups resolved; relocations per trampoline). */
#include "emit/layout.h"

#include "emit/bytebuf.h"

#include <errno.h>
#include <string.h>

static int fail(const char **why, const char *reason)
{
    if (why)
        *why = reason;
    errno = EINVAL;
    return -1;
}

static int64_t sext(uint64_t v, unsigned bits)
{
    uint64_t m = 1ull << (bits - 1);
    v &= (1ull << bits) - 1;
    return (int64_t)((v ^ m) - m);
}

static bool fits_signed(int64_t v, unsigned bits)
{
    return sext((uint64_t)v, bits) == v;
}

/* ORs `field` into the 32-bit instruction word at p (arch byte order). */
static void or_word(uint8_t *p, uint32_t field, bool be)
{
    pt_store_u32(p, pt_load_u32(p, be) | field, be);
}

static int apply_fixup(struct pt_layout *l, size_t i, const char **why)
{
    const struct pt_insn *in = &l->arch->insns[i];
    bool be = l->arch->big_endian;
    uint8_t *p = l->bytes + l->insn_off[i];
    int64_t here = (int64_t)l->insn_off[i];
    int64_t word = (int64_t)l->word_off[in->fixup_word];
    int64_t prev = i ? (int64_t)l->insn_off[i - 1] : 0;

    switch (in->fixup) {
    case PT_FIX_NONE:
        return 0;
    case PT_RELOC_X86_REL32: /* resolved per trampoline: the field's place only */
        if (in->fixup_at + 4u > in->len)
            return fail(why, "x86 rel32 relocation outside its instruction");
        if (l->n_relocs == PT_LAYOUT_MAX_RELOCS)
            return fail(why, "too many relocations");
        l->relocs[l->n_relocs++] = i;
        return 0;
    case PT_FIX_X86_PCREL32: {
        int64_t d = word - (here + in->len);
        if (in->fixup_at + 4u > in->len || !fits_signed(d, 32))
            return fail(why, "x86 pcrel32 fixup out of range");
        pt_store_u32(p + in->fixup_at, (uint32_t)d, false);
        return 0;
    }
    case PT_FIX_X86_THUNK32: {
        int64_t d = word - here;
        if (in->fixup_at + 4u > in->len || !fits_signed(d, 32))
            return fail(why, "x86 pc-thunk disp32 fixup out of range");
        pt_store_u32(p + in->fixup_at, (uint32_t)d, false);
        return 0;
    }
    case PT_FIX_A64_LDR_LIT19: {
        int64_t d = word - here;
        if (in->len != 4 || d % 4 || !fits_signed(d / 4, 19))
            return fail(why, "aarch64 ldr literal fixup out of range");
        or_word(p, (uint32_t)((d / 4) & 0x7ffff) << 5, be);
        return 0;
    }
    case PT_FIX_RV_PCREL_HI20: {
        int64_t d = word - here;
        int64_t hi = (d + 0x800) >> 12;
        if (in->len != 4 || !fits_signed(hi, 20))
            return fail(why, "riscv pcrel_hi20 fixup out of range");
        or_word(p, (uint32_t)(hi & 0xfffff) << 12, be);
        return 0;
    }
    case PT_FIX_RV_PCREL_LO12: {
        if (i == 0 || in->len != 4)
            return fail(why, "riscv pcrel_lo12 fixup needs a preceding auipc");
        int64_t d = word - prev;
        int64_t lo = d - (((d + 0x800) >> 12) << 12);
        or_word(p, (uint32_t)(lo & 0xfff) << 20, be);
        return 0;
    }
    case PT_FIX_PPC_DS16: {
        int64_t d = word - prev;
        if (i == 0 || in->len != 4 || d % 4 || !fits_signed(d, 16))
            return fail(why, "ppc ds16 fixup out of range");
        or_word(p, (uint32_t)d & 0xfffc, be);
        return 0;
    }
    case PT_FIX_A32_LDR_LIT12: { /* Arm ARM A8.8.64: the pc reads as the instruction + 8 */
        int64_t d = word - (here + 8);
        int64_t mag = d < 0 ? -d : d;
        if (in->len != 4 || mag > 0xfff)
            return fail(why, "a32 ldr literal fixup out of range");
        or_word(p, (d < 0 ? 0 : 1u << 23) | (uint32_t)mag, be);
        return 0;
    }
    case PT_FIX_S390_RIL32: {
        int64_t d = word - here;
        if (in->len != 6 || d % 2 || !fits_signed(d / 2, 32))
            return fail(why, "s390 ril32 fixup out of range");
        pt_store_u32(p + 2, (uint32_t)(d / 2), true);
        return 0;
    }
    }
    return fail(why, "unknown fixup kind");
}

int pt_layout_build(struct pt_layout *l, const struct pt_arch *arch, const char **why)
{
    memset(l, 0, sizeof *l);
    l->arch = arch;
    if (pt_arch_check(arch, why) < 0)
        return -1;
    if (arch->n_insns > PT_LAYOUT_MAX_INSNS)
        return fail(why, "table has no instructions or too many");

    size_t off = 0;
    for (size_t i = 0; i < arch->n_insns; i++) {
        const struct pt_insn *in = &arch->insns[i];
        if (in->len == 0 || in->len > PT_INSN_MAX_BYTES || off + in->len > PT_LAYOUT_MAX_BYTES)
            return fail(why, "instruction length out of range");
        if (off % arch->cie_code_align)
            return fail(why, "instruction offset not a multiple of the code alignment factor");
        l->insn_off[i] = off;
        memcpy(l->bytes + off, in->bytes, in->len);
        off += in->len;
    }
    l->code_len = off;
    size_t word = arch->addr_size; /* 4 or 8 (pt_arch_check): the words are addresses */
    off = (off + word - 1) & ~(word - 1);
    for (int w = 0; w < PT_WORD_COUNT; w++, off += word)
        l->word_off[w] = off;
    if (off > PT_LAYOUT_MAX_BYTES)
        return fail(why, "trampoline too large");
    l->size = off;

    for (size_t i = 0; i < arch->n_insns; i++)
        if (apply_fixup(l, i, why) < 0)
            return -1;
    return 0;
}

/* The value of relocation k for a trampoline at x calling target: 0, or
 * -1 when it does not fit the field. */
static int reloc_value(const struct pt_layout *l, size_t k, uint64_t x, uint64_t target, uint32_t *field)
{
    const struct pt_insn *in = &l->arch->insns[l->relocs[k]];
    uint64_t end = x + l->insn_off[l->relocs[k]] + in->len;
    switch (in->fixup) {
    case PT_RELOC_X86_REL32: {
        int64_t d = (int64_t)(target - end); /* two's complement: the distance either way */
        if (!fits_signed(d, 32))
            return -1;
        *field = (uint32_t)d;
        return 0;
    }
    }
    return -1;
}

bool pt_layout_reaches(const struct pt_layout *l, uint64_t x, uint64_t target)
{
    uint32_t field;
    for (size_t k = 0; k < l->n_relocs; k++)
        if (reloc_value(l, k, x, target, &field) < 0)
            return false;
    return true;
}

int pt_layout_write_at(const struct pt_layout *l, uint8_t *dst, uint64_t x, uint64_t target, uint64_t tag)
{
    uint32_t field[PT_LAYOUT_MAX_RELOCS];
    for (size_t k = 0; k < l->n_relocs; k++)
        if (reloc_value(l, k, x, target, &field[k]) < 0) {
            errno = ERANGE;
            return -1;
        }
    pt_layout_write(l, dst, target, tag);
    for (size_t k = 0; k < l->n_relocs; k++) {
        const struct pt_insn *in = &l->arch->insns[l->relocs[k]];
        pt_store_u32(dst + l->insn_off[l->relocs[k]] + in->fixup_at, field[k], l->arch->big_endian);
    }
    return 0;
}

void pt_layout_write(const struct pt_layout *l, uint8_t *dst, uint64_t target, uint64_t tag)
{
    memcpy(dst, l->bytes, l->size); /* the code, then zeros up to and in the words: one copy */
    if (l->arch->addr_size == 8) {
        pt_store_u64(dst + l->word_off[PT_WORD_TARGET], target, l->arch->big_endian);
        pt_store_u64(dst + l->word_off[PT_WORD_TAG], tag, l->arch->big_endian);
    } else { /* the tag's low half: still unique (docs/design.md, "The tag") */
        pt_store_u32(dst + l->word_off[PT_WORD_TARGET], (uint32_t)target, l->arch->big_endian);
        pt_store_u32(dst + l->word_off[PT_WORD_TAG], (uint32_t)tag, l->arch->big_endian);
    }
}
