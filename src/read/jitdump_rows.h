/* SPDX-License-Identifier: MIT */
/* Row by row checks of one jitdump LOAD's unwinding info: what the rules
 * say at every pc of the code, not only that the FDE decodes.
 *
 *  (a) any producer: every pc in [code_addr, code_addr + code_size) must be
 *      covered by an FDE whose row there defines a CFA and a return-address
 *      rule.  Bytes no FDE covers are an error, except a run of padding
 *      (nops, int3) at the very end, which is a warning (V8 ends its FDEs
 *      before the trailing nop of its code objects).
 *  (b) when the header's e_machine has a built-in table and the LOAD's code
 *      is that table's trampoline (data words masked), the decoded rules at
 *      every instruction boundary must equal the table's, as the emitter
 *      derives them (pt_eh_jitdump_blob, decoded by the same decoder): a CFA
 *      offset of 24 where the table says 16 is an error naming the pc, the
 *      rules found and the rules expected.
 *
 * Self-contained: one call per [UNWINDING_INFO][LOAD] pair, so a reader
 * that streams records can call it as they arrive. */
#ifndef PERFTRAMP_JITDUMP_ROWS_H
#define PERFTRAMP_JITDUMP_ROWS_H

#include "read/jitdump_reader.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What the checks covered so far (summed over every call). */
struct pt_jd_rows_stats {
    size_t loads;        /* LOADs whose rows were checked */
    uint64_t pcs;        /* code bytes found with a CFA and a return-address rule */
    size_t table_loads;  /* LOADs whose code is a built-in table's trampoline */
    size_t boundaries;   /* instruction boundaries compared with the table's rules */
    const char *table;   /* the last table matched (its name), or NULL */
};

/* Scratch space and the expected rows of the built-in tables, built on
 * first use.  NULL when out of memory. */
struct pt_jd_rows *pt_jd_rows_new(void);
void pt_jd_rows_free(struct pt_jd_rows *r);
void pt_jd_rows_get_stats(const struct pt_jd_rows *r, struct pt_jd_rows_stats *out);

/* The size of an address in a dump of machine `elf_mach`: the built-in
 * table's .addr_size, 8 for a machine without a table.  It sizes the
 * absptr pointers of its .eh_frame (every field perftramp and perf's genelf
 * layout use is pc- or data-relative and 4 bytes, so it rarely matters). */
unsigned pt_jd_addr_size(uint32_t elf_mach);

/* Checks the rows of `unwind` (an UNWINDING_INFO with .eh_frame bytes, whose
 * .eh_frame and .eh_frame_hdr already decode in perf's genelf layout) for
 * the code of `load` (the next LOAD).  `elf_mach` is the dump header's,
 * `big_endian` the byte order of the data in the records.  Issues go to fn
 * (may be NULL) at the UNWINDING_INFO record's offset.  Returns the number
 * of errors. */
size_t pt_jd_rows_check(struct pt_jd_rows *r, uint32_t elf_mach, bool big_endian, const struct pt_jd_record *unwind,
                        const struct pt_jd_record *load, pt_jd_issue_fn fn, void *arg);

#endif
