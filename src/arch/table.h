/* SPDX-License-Identifier: MIT */
/* The shape of an architecture table: the single source of truth for a
 * trampoline's machine code and its call-frame information.
 *
 * A table is a list of instructions.  Each holds its bytes, its mnemonic,
 * an optional pc-relative fixup that points into the trampoline's data
 * words, and the CFI rules that hold AFTER it.  The emitter lays the
 * instructions out back to back, appends the data words (each .addr_size
 * bytes and aligned to it: the target address, then the per-trampoline
 * tag) and derives every
 * DW_CFA_advance_loc from the byte offsets, so code and CFI cannot drift.
 * See docs/porting.md. */
#ifndef PERFTRAMP_TABLE_H
#define PERFTRAMP_TABLE_H

#include <stddef.h>
#include <stdint.h>

/* One CFI rule change.  Register numbers are DWARF numbers; offsets are
 * in bytes (the emitter divides by the CIE's alignment factors). */
enum pt_cfi_op {
    PT_CFI_NONE = 0,
    PT_CFI_DEF_CFA,           /* CFA = reg + offset */
    PT_CFI_DEF_CFA_REGISTER,  /* CFA = reg + (same offset) */
    PT_CFI_DEF_CFA_OFFSET,    /* CFA = (same reg) + offset */
    PT_CFI_OFFSET,            /* reg saved at CFA + offset */
    PT_CFI_RESTORE,           /* reg back to its CIE rule */
    PT_CFI_SAME_VALUE,        /* reg unchanged by this frame */
    PT_CFI_UNDEFINED,         /* reg not recoverable */
    PT_CFI_NEGATE_RA_STATE,   /* AArch64 PAC: return address signed/unsigned */
};

struct pt_cfi {
    uint8_t op;      /* enum pt_cfi_op */
    uint16_t reg;    /* DWARF register number */
    int32_t offset;  /* bytes */
};

/* One rule change at a code offset: the form shared by the tables (each
 * instruction's rules hold from the end of that instruction) and by code
 * a JIT publishes (perftramp_publish's struct perftramp_cfi rows).  The
 * emitter serializes both through pt_cfi_rows_program (emit/eh_frame.h). */
struct pt_cfi_row {
    uint32_t at;     /* code offset from which the rule holds */
    struct pt_cfi cfi;
};

/* pc-relative fields the emitter fills from the layout: the distance from
 * an anchor to one of the trampoline's data words. */
enum pt_fixup_kind {
    PT_FIX_NONE = 0,
    PT_FIX_X86_PCREL32,   /* le32 at byte `at`, from the end of this insn */
    PT_FIX_A64_LDR_LIT19, /* LDR (literal) imm19 = delta/4, from this insn */
    PT_FIX_RV_PCREL_HI20, /* AUIPC imm20 (rounded), from this insn */
    PT_FIX_RV_PCREL_LO12, /* I-type imm12, from the PREVIOUS insn (its AUIPC) */
    PT_FIX_PPC_DS16,      /* DS-form (ld) 16-bit, from the PREVIOUS insn's address */
    PT_FIX_S390_RIL32,    /* RIL-b be32 halfwords at byte 2, from this insn */
    PT_FIX_X86_THUNK32,   /* le32 at byte `at`, from the START of this insn: the pc a call to a
                           * pc thunk (mov (%esp),%reg; ret) left in a register (i686) */
    PT_FIX_A32_LDR_LIT12, /* A32 LDR (literal) U + imm12, from this insn + 8 */

    /* Relocations: fields that hold the distance from an instruction to
     * the VALUE of a data word (the target address), not to the word's
     * place.  They depend on where a trampoline lands and what it calls,
     * so the template leaves them zero and pt_layout_write_at resolves
     * them per trampoline, refusing (ERANGE) a target out of reach. */
    PT_RELOC_X86_REL32,   /* le32 at byte `at` = value - end of this insn (call/jmp rel32: +-2 GiB) */
};
#define PT_FIXUP_IS_RELOC(kind) ((kind) >= PT_RELOC_X86_REL32)
#define PT_FIXUP_KINDS (PT_RELOC_X86_REL32 + 1)
/* "x86 pcrel32", ...: for tools (src/arch/fixup_names.c); "unknown" past the list. */
const char *pt_fixup_name(unsigned kind);

enum pt_data_word {
    PT_WORD_TARGET = 0, /* the target address, written per trampoline */
    PT_WORD_TAG = 1,    /* a per-trampoline unique tag (makes bytes unique) */
    PT_WORD_COUNT
};

#define PT_INSN_MAX_BYTES 8
#define PT_INSN_MAX_CFI 4

struct pt_insn {
    uint8_t len;
    uint8_t bytes[PT_INSN_MAX_BYTES];
    const char *text;                  /* mnemonic, for humans and tools */
    uint8_t fixup;                     /* enum pt_fixup_kind */
    uint8_t fixup_word;                /* enum pt_data_word */
    uint8_t fixup_at;                  /* byte offset of the field (x86) */
    struct pt_cfi cfi[PT_INSN_MAX_CFI]; /* rules that hold after this insn */
};

/* Helpers that keep tables readable.  Instruction words of fixed-width
 * ISAs are written as the manuals print them and stored in the ISA's byte
 * order. */
#define PT_BYTES(...) .len = sizeof((uint8_t[]){__VA_ARGS__}), .bytes = {__VA_ARGS__}
#define PT_LE32(w) PT_BYTES((uint8_t)(w), (uint8_t)((w) >> 8), (uint8_t)((w) >> 16), (uint8_t)((w) >> 24))
#define PT_BE32(w) PT_BYTES((uint8_t)((w) >> 24), (uint8_t)((w) >> 16), (uint8_t)((w) >> 8), (uint8_t)(w))
#define PT_BE16(h) PT_BYTES((uint8_t)((h) >> 8), (uint8_t)(h))
#define PT_LE16(h) PT_BYTES((uint8_t)(h), (uint8_t)((h) >> 8))
#define PT_BE48(w) PT_BYTES((uint8_t)((w) >> 40), (uint8_t)((w) >> 32), (uint8_t)((w) >> 24), \
                            (uint8_t)((w) >> 16), (uint8_t)((w) >> 8), (uint8_t)(w))
#define PT_FIX(kind, word) .fixup = (kind), .fixup_word = (word)
#define PT_FIX_AT(kind, word, at) .fixup = (kind), .fixup_word = (word), .fixup_at = (at)

#define CFA(reg, off)       {PT_CFI_DEF_CFA, (reg), (off)}
#define CFA_REGISTER(reg)   {PT_CFI_DEF_CFA_REGISTER, (reg), 0}
#define CFA_OFFSET(off)     {PT_CFI_DEF_CFA_OFFSET, 0, (off)}
#define SAVED(reg, off)     {PT_CFI_OFFSET, (reg), (off)}
#define RESTORED(reg)       {PT_CFI_RESTORE, (reg), 0}
#define SAME(reg)           {PT_CFI_SAME_VALUE, (reg), 0}
#define NEGATE_RA_STATE     {PT_CFI_NEGATE_RA_STATE, 0, 0}
#define PT_CFI(...)         .cfi = {__VA_ARGS__}

/* Whether written code must be flushed from the caches before it runs
 * (src/mem/icache.c holds the host's sequence). */
enum pt_icache {
    PT_ICACHE_UNSET = 0,  /* refused by pt_arch_check */
    PT_ICACHE_COHERENT,   /* instruction fetch sees data stores */
    PT_ICACHE_FLUSH,      /* it does not: pt_icache_flush after every write */
};

/* One instruction that does nothing, as compilers and JITs pad code with. */
struct pt_nop {
    uint8_t len;
    uint8_t bytes[PT_INSN_MAX_BYTES]; /* in code byte order: PT_LE32(...) */
};
#define PT_MAX_NOPS 3

/* Every field is required unless it says "optional": pt_arch_check()
 * (src/arch/arch_check.c) refuses a table that lacks one, and
 * pt_layout_build() runs it, so perftramp_open fails (EINVAL) on such a
 * host table and tests/emit/check_emitter fails for any table in the lists. */
struct pt_arch {
    const char *name;         /* "x86_64", "aarch64", ... */
    const char *clang_target; /* triple for clang --target and cross tools */
    uint16_t elf_machine;     /* EM_*: ELF images' e_machine, jitdump's elf_mach */
    uint32_t elf_flags;       /* e_flags of the ELF images (optional: 0 where the ABI has none) */
    uint16_t dwarf_regs;      /* one past the highest DWARF register number the ABI defines:
                               * perftramp_publish refuses rows naming a register at or past it */
    uint8_t big_endian;       /* byte order of code, data words and DWARF */
    uint8_t addr_size;        /* 4 or 8: the size of an address, so of each data word, of an
                               * absolute (absptr) pointer in .eh_frame, of a DWARF address, and
                               * the ELF class of every image (4: ELFCLASS32, 8: ELFCLASS64) */
    uint8_t icache;           /* enum pt_icache: no default, a forgotten flush is silent under qemu */
    uint16_t code_align;      /* start alignment of every trampoline (bytes) */

    /* CIE parameters */
    uint8_t cie_code_align;   /* code alignment factor */
    int8_t cie_data_align;    /* data alignment factor */
    uint8_t ra_column;        /* return address column */
    struct pt_cfi cie_initial[PT_INSN_MAX_CFI]; /* rules at the entry point */

    const struct pt_insn *insns;
    size_t n_insns;

    /* Written over a released slot so a stale call traps. */
    uint8_t trap_len;
    uint8_t trap[PT_INSN_MAX_BYTES];

    /* DWARF register names for the registers the table uses, indexed by
     * number; NULL where unused.  Only for display. */
    const char *const *reg_names;
    size_t n_reg_names;

    /* Padding a compiler or JIT leaves after code: the jitdump reader
     * accepts it uncovered by any FDE (src/read/jitdump_rows.c).  The nops
     * are tried in order, longest first; x86_nop_forms: the variable-length
     * x86 family too (prefixes 66/2e, 90, cc, 0f 1f /0), which the reader
     * decodes.  At least one of the two. */
    struct pt_nop nops[PT_MAX_NOPS];
    uint8_t x86_nop_forms;

    /* Optional: the machine's in-process unwinder reads Arm EHABI tables
     * (.ARM.exidx/.ARM.extab: libgcc on 32-bit Arm), which the emitter
     * derives from the same CFI rows (src/emit/ehabi.c). */
    uint8_t ehabi;
};

/* 0, or -1 with errno EINVAL and the missing or inconsistent field in
 * `why` (src/arch/arch_check.c). */
int pt_arch_check(const struct pt_arch *a, const char **why);

/* The list of built-in tables (src/arch/arch_list.c). */
extern const struct pt_arch *const pt_arch_list[];
extern const size_t pt_arch_count;

/* Variants: tables that stand in for a main table of pt_arch_list when a
 * condition holds, e.g. a direct call that reaches its target.  A variant
 * names its main table (`main_name`) and must lay out to the same size
 * with the same CFI program, so that one arena's FDEs serve both and a
 * context can pick either per trampoline (src/arch/arch_list.c). */
struct pt_arch_variant {
    const char *main_name;     /* the table it stands in for */
    const struct pt_arch *arch;
};
extern const struct pt_arch_variant pt_arch_variants[];
extern const size_t pt_arch_variant_count;
/* The variant of `main` named "<main>_<suffix>", or NULL. */
const struct pt_arch *pt_arch_variant_of(const struct pt_arch *main, const char *suffix);
const struct pt_arch *pt_arch_find(const char *name);
const struct pt_arch *pt_arch_host(void); /* NULL when no table for the host */

#endif
