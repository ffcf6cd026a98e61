/* SPDX-License-Identifier: MIT */
/* The in-memory ELF one GDB JIT entry hands gdb for a chunk of slots,
 * built once with room for every slot's symbol and patched in place per
 * wrap and release (outputs/gdb_jit.c decides when gdb is told).
 *
 * Layout (ELF gABI, "Object Files"): ET_REL; sections
 *   1 .text      SHT_NOBITS over the chunk's code (all its slots),
 *   2 .eh_frame  one FDE per slot of the chunk, built once; an unnamed
 *                slot's FDE is a copy of a named slot's (lldb makes a
 *                symbol of every FDE), pointed at its own slot by a wrap,
 *   3 .symtab    room for PT_GDB_CHUNK_SLOTS STT_FUNC symbols; its sh_size
 *                says how many are live (the count, stored last),
 *   4 .strtab    fixed size, names appended; full: the image is rebuilt,
 *   5 .shstrtab.
 * A debugger may read the image at any instruction (gdb -p, or a stop):
 * a symbol is written before the count that exposes it, and a removal
 * overwrites the dead symbol with the last one before the count drops,
 * so every prefix the count exposes is whole. */
#ifndef PERFTRAMP_OUTPUTS_GDB_CHUNK_H
#define PERFTRAMP_OUTPUTS_GDB_CHUNK_H

#include "mem/arena.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_GDB_CHUNK_SLOTS 64

struct pt_elf_class;
struct pt_gdb_image {
    uint8_t *data;
    size_t len;
    bool big_endian;
    const struct pt_elf_class *cls; /* the table's ELF class (emit/elf_image.h) */
    size_t symtab_off;   /* file offset of symbol 0 (the null one) */
    size_t strtab_off, str_used, str_cap;
    size_t symtab_size_at; /* file offset of .symtab's sh_size */
    size_t n_syms;       /* live symbols (1..n_syms in .symtab) */
    /* where the FDEs are, to point one at its slot (gdb_chunk.c) */
    size_t eh_off, fde0_off, fde_len, n_fdes, stride;
    uintptr_t text, eh_addr;
};

/* Builds the image of the chunk starting at slot `first` of arena a, with
 * symbols for the live, named slots among `named` (bit j: slot first+j)
 * and room for at least `min_str` bytes of names.  `program` is the
 * table's FDE program.  0, or -1 with errno. */
int pt_gdb_image_build(struct pt_gdb_image *im, const struct pt_slots *sl, const struct pt_arena *a, size_t first,
                       uint64_t named, const uint8_t *program, size_t program_len, size_t min_str);
/* Adds slot `j` of the chunk, named `name`: its FDE, then its symbol.
 * 0, or -1 when the names no longer fit (the caller rebuilds). */
int pt_gdb_image_add(struct pt_gdb_image *im, size_t j, size_t stride, size_t size, const char *name);
/* Removes slot j's symbol (no-op when it has none), then points its FDE at
 * a slot of `named` (the slots still named), as every unnamed slot's. */
void pt_gdb_image_remove(struct pt_gdb_image *im, size_t j, size_t stride, uint64_t named);
void pt_gdb_image_free(struct pt_gdb_image *im);

#endif
