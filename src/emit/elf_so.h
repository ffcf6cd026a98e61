/* SPDX-License-Identifier: MIT */
/* The layout of a file-backed ELF arena (PERFTRAMP_ELF): a shared object
 * that perf reads like any library, with names (.symtab) and unwind info
 * (.eh_frame, .eh_frame_hdr) for code that is written into it while the
 * process runs.  This file only computes offsets and serializes headers;
 * mem/elf_arena.c owns the file and its mappings.
 *
 * File layout (every offset is also the vaddr: p_vaddr == p_offset):
 *   0           ELF header, 3 program headers, build-id note
 *   text_off    .text: n_slots slots of `stride` bytes        } one R+X
 *   eh_off      .eh_frame: CIE, one FDE per slot, terminator   } PT_LOAD
 *   hdr_off     .eh_frame_hdr, one row per slot, sorted        } from 0
 *   map_size    (page-rounded end of the PT_LOAD: what is mapped)
 *   shstr_off   .shstrtab, then the section headers at shdr_off
 *   symtab_off  .symtab: room for n_slots + 1 symbols, sh_size grows
 *   abbrev_off  .debug_abbrev: the one abbreviation every unit uses
 *   info_off    .debug_info: room for PT_ELF_INFO_ROOM bytes a slot, and
 *   line_off    .debug_line: PT_ELF_LINE_ROOM bytes a slot; one compile
 *               unit + line program (emit/debug_line.h) per slot made
 *               by perftramp_wrap_at, sh_size grows; past the room a
 *               slot gets no line (the sections are never cut short)
 *   strtab_off  .strtab: room for n_slots names of PT_ELF_STR_ROOM bytes
 *               (to the page), sh_size grows; longer names grow the file
 * perf 6.1 finds .eh_frame_hdr through the section headers, needs the
 * unwind tables inside the executable mapping, and reads .symtab at report
 * time (so .symtab/.strtab may grow while the code runs).
 * Formats: System V gABI "Object Files" and "Program Loading"; LSB 5.0
 * "Exception Frames" (.eh_frame_hdr); the GNU build-id note (NT_GNU_BUILD_ID
 * = 3, owner "GNU"). */
#ifndef PERFTRAMP_ELF_SO_H
#define PERFTRAMP_ELF_SO_H

#include "arch/table.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_ELF_BUILD_ID_SIZE 20
/* .strtab room reserved per slot (a name and its NUL), so that most names
 * go into the file through a mapping instead of system calls: 32 bytes
 * hold "tiny::collatz_length" or "py::method:file.py" with room to spare. */
#define PT_ELF_STR_ROOM 32
/* .debug_info and .debug_line room per slot, a fixed capacity per file
 * (the unit of a slot whose file name is F bytes takes 32 bytes of
 * .debug_info and at most 55 + F of .debug_line): 32 + 128 bytes hold one
 * unit for every slot while the file names average 73 bytes or less, as
 * Python's absolute co_filename paths usually do. */
#define PT_ELF_INFO_ROOM 32
#define PT_ELF_LINE_ROOM 128

/* What the arena puts in the file (all sizes in bytes). */
struct pt_elf_so_geometry {
    unsigned addr_size;                /* the table's .addr_size: the file's ELF class */
    size_t n_slots, stride, slot_size; /* slot_size: the symbol size */
    size_t block_bytes;                /* the arena's block: slots, then its .eh_frame */
    size_t eh_rel;                     /* .eh_frame's offset in the block */
    size_t cie_size, fde_size;         /* .eh_frame = CIE + n_slots FDEs + 4-byte terminator */
    size_t code_align;
    size_t page;
};

struct pt_elf_class;
struct pt_elf_so_plan {
    struct pt_elf_so_geometry g;
    const struct pt_elf_class *cls;  /* ELFCLASS32 or ELFCLASS64 (emit/elf_image.h) */
    size_t sym_size;                 /* one .symtab entry of that class */
    size_t note_off, note_size;
    size_t text_off, text_size;
    size_t eh_off, eh_size;
    size_t hdr_off, hdr_size;
    size_t load_size, map_size;
    size_t shstr_off, shstr_size;
    size_t shdr_off;
    size_t symtab_off, symtab_cap;
    size_t abbrev_off, abbrev_size;
    size_t info_off, info_cap;
    size_t line_off, line_cap;
    size_t strtab_off, strtab_cap;
    size_t file_size; /* page-rounded end of .strtab's room: the mapped tail ends there */
    /* file offsets of the sh_size words that grow */
    size_t symtab_size_at, strtab_size_at, info_size_at, line_size_at;
};

/* Section header indexes (the symbols' st_shndx is PT_ELF_SHNDX_TEXT). */
enum { PT_ELF_SHNDX_TEXT = 2 };

/* Computes every offset.  0, or -1 with errno EINVAL (inconsistent
 * geometry) or EFBIG (more than 4 GiB: sdata4 offsets cannot reach). */
int pt_elf_so_plan(struct pt_elf_so_plan *p, const struct pt_elf_so_geometry *g);

/* Bytes [0, text_off): ELF header, program headers, build-id note.
 * `out` holds text_off bytes. */
void pt_elf_so_head(uint8_t *out, const struct pt_elf_so_plan *p, const struct pt_arch *arch,
                    const uint8_t build_id[PT_ELF_BUILD_ID_SIZE]);

/* .eh_frame_hdr: hdr_size bytes, rows sorted by pc (slot order). */
void pt_elf_so_eh_hdr(uint8_t *out, const struct pt_elf_so_plan *p, bool big_endian);

/* Bytes [shstr_off, strtab_off + 1): .shstrtab, the section headers, the
 * null symbol (the rest of .symtab's room zero), .debug_abbrev, the empty
 * .debug_info/.debug_line rooms and the strtab's leading NUL.  `out`
 * holds strtab_off + 1 - shstr_off bytes. */
void pt_elf_so_tail(uint8_t *out, const struct pt_elf_so_plan *p, bool big_endian);
size_t pt_elf_so_tail_size(const struct pt_elf_so_plan *p);

/* One .symtab entry, p->sym_size bytes: STT_FUNC, STB_GLOBAL, in .text,
 * value = vaddr. */
void pt_elf_so_symbol(uint8_t *out, const struct pt_elf_so_plan *p, uint32_t name_off, uint64_t value, uint64_t size,
                      bool big_endian);

/* Serializes slot `slot`'s compile unit and line program (the slot's
 * first `size` bytes are `file`:`line_no`) at the ends of `info` (the
 * .debug_info room, *info_len bytes used) and `line` (.debug_line,
 * *line_len used), and advances both lengths.  0, or -1 with errno
 * ENOSPC (past the room: the lengths, and so the sections, unchanged) or
 * EINVAL (no file, line 0, size 0). */
int pt_elf_so_line_unit(const struct pt_elf_so_plan *p, uint8_t *info, size_t *info_len, uint8_t *line,
                        size_t *line_len, size_t slot, size_t size, const char *file, unsigned line_no,
                        bool big_endian);

#endif
