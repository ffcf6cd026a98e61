/* SPDX-License-Identifier: MIT */
/* Reads Arm EHABI tables from untrusted bytes: index entries (.ARM.exidx),
 * their extab entries (.ARM.extab), and what an entry's unwind opcodes
 * recover, executed symbolically ("Exception Handling ABI for the Arm
 * Architecture", IHI 0038B, 6 and 10.3).  For the tests and the
 * `perftramp` command: the emitter's entries and those gas and clang
 * write for tests/ref/arm.S are compared by what they recover, never by
 * their bytes.  Every read is bounds checked. */
#ifndef PERFTRAMP_EHABI_DECODE_H
#define PERFTRAMP_EHABI_DECODE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_EHABI_DECODE_MAX_OPS 64

/* One index entry. */
struct pt_ehabi_entry {
    uint64_t start;       /* the address its prel31 names */
    bool cantunwind;      /* EXIDX_CANTUNWIND */
    bool inline_entry;    /* compact model, personality routine 0, in the index word */
    unsigned personality; /* 0-2: __aeabi_unwind_cpp_pr<N>; 0x100: a generic routine (not decoded) */
    uint8_t n_ops;
    uint8_t ops[PT_EHABI_DECODE_MAX_OPS];
};

/* Entry i of an index table at run-time address index_addr (index_len
 * bytes); extab entries are looked up at their address in [extab_addr,
 * extab_addr + extab_len).  0, or -1 with a message in `why`. */
int pt_ehabi_read_entry(const uint8_t *index, size_t index_len, uint64_t index_addr, const uint8_t *extab,
                        size_t extab_len, uint64_t extab_addr, size_t i, bool big_endian,
                        struct pt_ehabi_entry *e, const char **why);

/* A value the opcodes recover: the entry value of register `reg` plus
 * `off`, or (deref) the word at that address plus `add`. */
struct pt_ehabi_value {
    bool deref;
    uint16_t reg;
    int32_t off, add;
};

/* What an entry recovers: the caller's sp (the final vsp), its pc (r15 if
 * popped, else r14), and every core register r0-r15 and d0-d31 (index
 * 16 + n), each its own entry value when not popped. */
struct pt_ehabi_frame {
    struct pt_ehabi_value sp, pc;
    struct pt_ehabi_value regs[48];
    uint64_t popped; /* bit r: register r was popped */
};

/* Executes opcodes from vsp = sp.  0, or -1 with `why` (a reserved or
 * unsupported opcode, a pop from a vsp loaded from memory, truncation). */
int pt_ehabi_execute(const uint8_t *ops, size_t n, struct pt_ehabi_frame *f, const char **why);

/* What a DWARF row says of the caller in the same terms (registers
 * r0-r15 and d0-d31 = DWARF 256-287; the return address from column
 * ra_column), to compare an entry with the .eh_frame of the same code.
 * Rules other than "saved at CFA+N" and "same value" are refused (-1). */
struct pt_row;
int pt_ehabi_frame_from_row(const struct pt_row *row, unsigned ra_column, struct pt_ehabi_frame *f);

/* Same recovery of the caller: sp, pc and the registers AAPCS makes
 * callee-saved (r4-r11, d8-d15); the scratch ones (r0-r3, r12, lr itself
 * once pc is known, d0-d7, d16-d31) may differ.  On a difference, false
 * with it described in why (len bytes). */
bool pt_ehabi_same_caller(const struct pt_ehabi_frame *x, const struct pt_ehabi_frame *y, char *why, size_t len);

/* "[r11-12]+0", "sp+16": for messages. */
void pt_ehabi_value_str(const struct pt_ehabi_value *v, char *out, size_t len);

#endif
