/* SPDX-License-Identifier: MIT */
/* DWARF line information for code with one source position (a trampoline
 * made by perftramp_wrap_at, a published region): what addr2line, perf's
 * srcline and gdb read to turn an address into file:line.
 *
 * One compile unit per code range, each in .debug_info with its own line
 * program in .debug_line; every unit uses the same abbreviation table
 * (.debug_abbrev, written once).  Units are independent, so a file that
 * gains code while it is being read (an ELF arena) can append one per
 * slot.  DWARF version 2 (what perf's own jitted .so files carry, read by
 * every consumer): DWARF 2 standard, sections 6.2 (line number program)
 * and 7.5 (compile unit header, abbreviations); DW_TAG_compile_unit 0x11,
 * DW_AT_stmt_list 0x10, DW_AT_low_pc 0x11,
 * DW_AT_high_pc 0x12, DW_FORM_addr 0x01, DW_FORM_data4 0x06,
 * DW_LNS_copy 1, DW_LNS_advance_pc 2,
 * DW_LNS_advance_line 3, DW_LNE_end_sequence 1, DW_LNE_set_address 2. */
#ifndef PERFTRAMP_DEBUG_LINE_H
#define PERFTRAMP_DEBUG_LINE_H

#include "emit/bytebuf.h"

#include <stdint.h>

/* .debug_abbrev: the one abbreviation (code 1) every unit uses. */
void pt_dwarf_abbrev(struct pt_buf *abbrev);

/* Appends a compile unit to `info` and its line program to `line`: the
 * range [addr, addr + size) is `file`:`line_no`.  The unit's stmt_list is
 * line->len before the call (the offset in .debug_line when `line` holds
 * the whole section).  addr_size: 4 or 8, the target's.  0, or -1 with
 * errno EINVAL (size 0, line_no 0, NULL or empty file, a bad addr_size,
 * an address that does not fit) or ENOMEM (a buffer could not grow). */
int pt_dwarf_line_unit(struct pt_buf *info, struct pt_buf *line, unsigned addr_size, uint64_t addr, uint64_t size,
                       const char *file, unsigned line_no);

#endif
