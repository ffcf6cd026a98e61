/* SPDX-License-Identifier: MIT */
/* Emit layer: DWARF 2 compile units and line programs for one source position per
 * code range (emit/debug_line.h has the format references). */
#include "emit/debug_line.h"

#include <errno.h>
#include <string.h>

enum {
    DW_TAG_compile_unit = 0x11,
    DW_CHILDREN_no = 0,
    DW_AT_stmt_list = 0x10, DW_AT_low_pc = 0x11, DW_AT_high_pc = 0x12,
    DW_FORM_addr = 0x01, DW_FORM_data4 = 0x06,
    DW_LNS_copy = 1, DW_LNS_advance_pc = 2, DW_LNS_advance_line = 3,
    DW_LNE_end_sequence = 1, DW_LNE_set_address = 2,
};

/* The line program header's fixed choices: no special opcodes are used
 * (rows come from DW_LNS_copy), so line_base/line_range only need to be
 * valid; opcode_base 10 = the nine DWARF 2 standard opcodes. */
enum { LINE_BASE = -5, LINE_RANGE = 14, OPCODE_BASE = 10 };
static const uint8_t standard_opcode_lengths[OPCODE_BASE - 1] = {0, 1, 1, 1, 1, 0, 0, 0, 1};

void pt_dwarf_abbrev(struct pt_buf *b)
{
    pt_buf_uleb(b, 1); /* abbreviation code */
    pt_buf_uleb(b, DW_TAG_compile_unit);
    pt_buf_u8(b, DW_CHILDREN_no);
    /* no DW_AT_name: the file is named once, in the line program's file
     * table, which is all addr2line, perf's srcline and gdb read for a
     * position; naming it twice halved the slots an ELF arena's fixed
     * room holds for Python's absolute paths */
    static const uint8_t attrs[][2] = {
        {DW_AT_stmt_list, DW_FORM_data4},
        {DW_AT_low_pc, DW_FORM_addr},
        {DW_AT_high_pc, DW_FORM_addr},
    };
    for (size_t i = 0; i < sizeof attrs / sizeof attrs[0]; i++) {
        pt_buf_uleb(b, attrs[i][0]);
        pt_buf_uleb(b, attrs[i][1]);
    }
    pt_buf_uleb(b, 0); /* end of the attributes */
    pt_buf_uleb(b, 0);
    pt_buf_uleb(b, 0); /* end of the table */
}

int pt_dwarf_line_unit(struct pt_buf *info, struct pt_buf *line, unsigned addr_size, uint64_t addr, uint64_t size,
                       const char *file, unsigned line_no)
{
    if ((addr_size != 4 && addr_size != 8) || !size || !line_no || !file || !*file ||
        (addr_size == 4 && (addr > UINT32_MAX || size > UINT32_MAX - addr)) ||
        (addr_size == 8 && size > UINT64_MAX - addr) || line->len > UINT32_MAX) {
        errno = EINVAL;
        return -1;
    }
    size_t info_start = info->len, line_start = line->len;
    size_t file_len = strlen(file);

    /* .debug_info: unit_length, version 2, debug_abbrev_offset 0,
     * address_size, then the unit's one DIE (abbreviation 1) */
    pt_buf_u32(info, 0); /* unit_length, set below */
    pt_buf_u16(info, 2);
    pt_buf_u32(info, 0);
    pt_buf_u8(info, (uint8_t)addr_size);
    pt_buf_uleb(info, 1);
    pt_buf_u32(info, (uint32_t)line_start);
    pt_buf_addr(info, addr, addr_size);
    pt_buf_addr(info, addr + size, addr_size);

    /* .debug_line: unit_length, version 2, header_length, the header
     * fields, no include directory, one file, then the program */
    pt_buf_u32(line, 0); /* unit_length, set below */
    pt_buf_u16(line, 2);
    size_t header_length_at = line->len;
    pt_buf_u32(line, 0); /* header_length, set below */
    size_t header_start = line->len;
    pt_buf_u8(line, 1); /* minimum_instruction_length */
    pt_buf_u8(line, 1); /* default_is_stmt */
    pt_buf_u8(line, (uint8_t)(int8_t)LINE_BASE);
    pt_buf_u8(line, LINE_RANGE);
    pt_buf_u8(line, OPCODE_BASE);
    pt_buf_put(line, standard_opcode_lengths, sizeof standard_opcode_lengths);
    pt_buf_u8(line, 0); /* include_directories: none */
    pt_buf_put(line, file, file_len + 1);
    pt_buf_uleb(line, 0); /* directory index: the compilation directory */
    pt_buf_uleb(line, 0); /* mtime */
    pt_buf_uleb(line, 0); /* length */
    pt_buf_u8(line, 0);   /* end of file_names */
    size_t program_start = line->len;
    /* the row: file 1 (the register's initial value), line_no at addr;
     * the sequence ends at addr + size */
    pt_buf_u8(line, 0);
    pt_buf_uleb(line, 1 + addr_size);
    pt_buf_u8(line, DW_LNE_set_address);
    pt_buf_addr(line, addr, addr_size);
    pt_buf_u8(line, DW_LNS_advance_line);
    pt_buf_sleb(line, (int64_t)line_no - 1);
    pt_buf_u8(line, DW_LNS_copy);
    pt_buf_u8(line, DW_LNS_advance_pc);
    pt_buf_uleb(line, size); /* the sequence ends after the code */
    pt_buf_u8(line, 0);      /* extended opcode: length 1 */
    pt_buf_uleb(line, 1);
    pt_buf_u8(line, DW_LNE_end_sequence);

    if (info->failed || line->failed) {
        errno = ENOMEM;
        return -1;
    }
    pt_buf_set_u32(info, info_start, (uint32_t)(info->len - info_start - 4));
    pt_buf_set_u32(line, line_start, (uint32_t)(line->len - line_start - 4));
    pt_buf_set_u32(line, header_length_at, (uint32_t)(program_start - header_start));
    return 0;
}
