/* SPDX-License-Identifier: MIT */
/* API layer: the table of outputs (api/output_table.h), one row per
 * output, each hook a few lines between the context and the leaf. */
#include "config.h"

#include "api/context.h"
#include "api/output_table.h"
#include "outputs/outputs.h"

#include <errno.h>

/* ---- the perf map: /tmp/perf-<pid>.map (outputs/perfmap.c) ---- */

static int perfmap_open(struct perftramp *pt)
{
    return pt_perfmap_open(&pt->perfmap, pt->pid);
}

static int perfmap_close(struct perftramp *pt)
{
    int r = pt_perfmap_close(pt->perfmap);
    pt->perfmap = NULL;
    return r;
}

static int perfmap_slot(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_tramp *t)
{
    (void)a, (void)i;
    return pt_perfmap_add(pt->perfmap, t);
}

static int perfmap_code(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t)
{
    (void)r;
    return pt_perfmap_add(pt->perfmap, t);
}

static int perfmap_reopen(struct perftramp *pt)
{
    return pt_perfmap_reopen(pt->perfmap, pt->pid);
}

/* ---- the jitdump: <dir>/jit-<pid>.dump (outputs/jitdump.c) ---- */

static int jitdump_open(struct perftramp *pt)
{
    int r = pt_jitdump_open(&pt->jitdump, &pt->layout, pt->jitdump_dir, pt->pid, pt->wide);
    if (r >= 0) /* enabled again: perf inject never reuses a jitted-<pid>-<index>.so name */
        pt_jitdump_set_next_index(pt->jitdump, pt->jitdump_next_index);
    return r;
}

static int jitdump_close(struct perftramp *pt)
{
    /* a forked child that never wrote its own dump still holds the
     * parent's: no CLOSE record into that one */
    bool write_close = pt_output_on(pt, PERFTRAMP_JITDUMP) && !pt->fork_pending;
    pt->jitdump_next_index = pt_jitdump_next_index(pt->jitdump);
    int r = pt_jitdump_close(pt->jitdump, write_close);
    pt->jitdump = NULL;
    return r;
}

static int jitdump_slot(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_tramp *t)
{
    (void)a, (void)i;
    return pt_jitdump_add(pt->jitdump, t);
}

static int jitdump_code(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t)
{
    (void)r;
    return pt_jitdump_add(pt->jitdump, t);
}

static int jitdump_reopen(struct perftramp *pt)
{
    return pt_jitdump_reopen(pt->jitdump, pt->pid);
}

/* ---- the in-process unwinders (outputs/unwind_register.c) ---- */

static int unwind_open(struct perftramp *pt)
{
    return pt_unwind_open(&pt->unwind);
}

static int unwind_close(struct perftramp *pt)
{
    pt_unwind_close(pt->unwind); /* clears every arena's and region's handle */
    pt->unwind = NULL;
    return 0;
}

static int unwind_arena(struct perftramp *pt, struct pt_arena *a)
{
    return a->unwind_handle ? 0 : pt_unwind_arena_added(pt->unwind, &pt->slots, a);
}

static void unwind_arena_removed(struct perftramp *pt, struct pt_arena *a)
{
    pt_unwind_arena_removed(pt->unwind, a);
}

static int unwind_code(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t)
{
    (void)t;
    return r->unwind_handle ? 0 : pt_unwind_code_add(pt->unwind, r->eh, r->eh_len, &r->unwind_handle);
}

static void unwind_code_removed(struct perftramp *pt, struct pt_region *r)
{
    pt_unwind_code_removed(pt->unwind, &r->unwind_handle);
}

/* ---- the GDB JIT interface (outputs/gdb_jit.c) ---- */

static int gdb_open(struct perftramp *pt)
{
    return pt_gdb_open(&pt->gdb, &pt->slots);
}

static int gdb_close(struct perftramp *pt)
{
    for (size_t k = pt->slots.n_arenas; k-- > 0;)
        pt_gdb_arena_removed(pt->gdb, pt->slots.arenas[k]);
    pt_gdb_close(pt->gdb);
    pt->gdb = NULL;
    return 0;
}

static void gdb_arena_removed(struct perftramp *pt, struct pt_arena *a)
{
    pt_gdb_arena_removed(pt->gdb, a);
}

static int gdb_slot(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_tramp *t)
{
    (void)t;
    return pt_gdb_add(pt->gdb, a, i);
}

static int gdb_slot_removed(struct perftramp *pt, struct pt_arena *a, size_t i)
{
    return pt_gdb_remove(pt->gdb, a, i);
}

static int gdb_code(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t)
{
    (void)t;
    return r->gdb_handle ? 0 : pt_region_gdb_add(pt, r);
}

static void gdb_code_removed(struct perftramp *pt, struct pt_region *r)
{
    pt_gdb_code_removed(pt->gdb, &r->gdb_handle);
}

/* ---- ELF arenas: code in files perf reads (mem/elf_arena.c,
 * outputs/elf_symbols.c, outputs/elf_lines.c) ---- */

/* The directory, checked, and cleaned of the files of processes that are
 * gone.  A directory that cannot be used (someone else's, a symlink,
 * noexec, missing) is refused: the arenas come from the usual code memory.
 * The first arena file is made at the first wrap (pt_elf_arena_alloc). */
static int elf_open(struct perftramp *pt)
{
    if (!pt->elf_open) { /* perftramp_set_outputs enabling it again: the directory is open */
        if (pt_elf_dir_open(&pt->elf, pt->elf_dir_opt, pt->pid) < 0)
            return errno == ENOMEM ? -1 : PT_OUT_REFUSED;
        pt->elf_open = true;
        (void)pt_elf_dir_clean(pt->elf.fd); /* best effort: a file it cannot remove stays */
    }
    pt->slots.elf_dir = &pt->elf;
    pt->slots.elf_on = true;
    pt->slots.elf_error = 0;
    /* enabled on a running context: the next never-used slot comes from a
     * new arena, an ELF file, rather than from the rest of an ordinary one */
    if (pt->slots.filling && !pt->slots.filling->mem.elf)
        pt->slots.filling = NULL;
    return 0;
}

/* After a failure: no new ELF arena (the filling one still takes slots,
 * as ordinary memory would). */
static void elf_disabled(struct perftramp *pt)
{
    pt->slots.elf_on = false; /* the filling arena is kept */
}

/* Code cannot move: the ELF arenas that exist stay files (their
 * trampolines keep running there, and the other outputs still see them).
 * New trampolines go to ordinary memory from now on: the filling ELF
 * arena takes no more (as after fork).  The directory stays open for a
 * later enable, and is closed with the context. */
static int elf_close(struct perftramp *pt)
{
    pt->slots.elf_on = false;
    if (pt->slots.filling && pt->slots.filling->mem.elf)
        pt->slots.filling = NULL;
    return 0;
}

static int elf_slot(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_tramp *t)
{
    if (pt->slots.elf_error) { /* no ELF arena could be made: this slot is ordinary memory */
        errno = pt->slots.elf_error;
        return -1;
    }
    if (!a->mem.elf)
        return 0;
    if (pt_elf_symbol_add(a->mem.elf, i, t->size, t->name) < 0)
        return -1;
    return t->file && *t->file ? pt_elf_line_add(a->mem.elf, i, t->size, t->file, t->line) : 0;
}

/* In open order.  Each output's bit indexes perftramp_output_error's
 * record by its row's place. */
const struct pt_output_row pt_output_rows[] = {
    {.bit = PERFTRAMP_PERF_MAP, .word = "perfmap",
     .traits = PT_OUT_REPLAYED | PT_OUT_CLOSE_ERROR | PT_OUT_NAMES_SOURCE,
     .open = perfmap_open, .close = perfmap_close, .slot_added = perfmap_slot, .code_added = perfmap_code,
     .reopen = perfmap_reopen},
    {.bit = PERFTRAMP_JITDUMP, .word = "jitdump",
     .traits = PT_OUT_REPLAYED | PT_OUT_CLOSE_ERROR | PT_OUT_WIDE_SLOTS,
     .open = jitdump_open, .close = jitdump_close, .slot_added = jitdump_slot, .code_added = jitdump_code,
     .reopen = jitdump_reopen},
    {.bit = PERFTRAMP_UNWIND, .word = "unwind", .traits = PT_OUT_REPLAYED | PT_OUT_READS_EH,
     .open = unwind_open, .close = unwind_close, .arena_added = unwind_arena, .arena_removed = unwind_arena_removed,
     .code_added = unwind_code, .code_removed = unwind_code_removed},
    {.bit = PERFTRAMP_GDB, .word = "gdb", .traits = PT_OUT_REPLAYED | PT_OUT_READS_EH | PT_OUT_READS_NAMES,
     .open = gdb_open, .close = gdb_close, .arena_removed = gdb_arena_removed, .slot_added = gdb_slot,
     .slot_removed = gdb_slot_removed, .code_added = gdb_code, .code_removed = gdb_code_removed},
    /* not replayed: code cannot move, so only arenas made after it is
     * enabled are files (perftramp.h, perftramp_set_outputs); each file
     * carries its own .eh_frame (mem/elf_arena.c) */
    {.bit = PERFTRAMP_ELF, .word = "elf", .traits = 0,
     .open = elf_open, .close = elf_close, .disabled = elf_disabled, .slot_added = elf_slot},
};
const size_t pt_n_output_rows = sizeof pt_output_rows / sizeof pt_output_rows[0];
_Static_assert(sizeof pt_output_rows / sizeof pt_output_rows[0] == PT_N_OUTPUTS, "one row per output");

unsigned pt_output_bits_with(unsigned traits)
{
    unsigned bits = 0;
    for (size_t k = 0; k < pt_n_output_rows; k++)
        if ((pt_output_rows[k].traits & traits) == traits)
            bits |= pt_output_rows[k].bit;
    return bits;
}
