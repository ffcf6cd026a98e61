/* SPDX-License-Identifier: MIT */
/* Code memory: arenas of executable memory cut into fixed-stride slots,
 * one trampoline per slot.  Knows tables and the emitter (for the
 * in-arena .eh_frame), nothing above: the core decides what happens when
 * an arena appears (unwinder registration) and what goes into a slot. */
#ifndef PERFTRAMP_MEM_ARENA_H
#define PERFTRAMP_MEM_ARENA_H

#include "emit/layout.h"
#include "mem/codemem.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One block of executable memory, cut into slots.  In-process unwind info
 * for every slot lives at its end (when the context wants it), close to
 * the code so pcrel|sdata4 pointers reach it. */
struct pt_arena {
    struct pt_code_block mem; /* the code memory (codemem.h) */
    uint8_t *w;           /* writable address of byte 0 (mem.w) */
    uintptr_t x;          /* executable address of byte 0 (mem.x), aligned to the table's code_align */
    size_t bytes;         /* total size */
    size_t n_slots;       /* capacity */
    size_t high_water;    /* slots ever handed out: [0, high_water) */
    size_t live;          /* live slots */
    uint64_t *live_bits;  /* one bit per slot */
    char **names;         /* per-slot names, when an output needs them */
    size_t eh_off;        /* .eh_frame inside the arena (0: none) */
    size_t eh_len;        /* 0: the room at eh_off not built yet (pt_arena_eh_build) */
    size_t prefaulted;    /* slot bytes [0, prefaulted) pre-faulted (pt_code_prefault) */
    void *unwind_handle;  /* unwinder registration, owned by outputs/unwind_register.c */
    void *gdb_handle;     /* GDB JIT entries, owned by outputs/gdb_jit.c */
};

/* Every arena of a context, and the free list. */
struct pt_slots {
    const struct pt_arch *arch;
    const struct pt_layout *layout;
    size_t stride;                 /* bytes between slots */
    size_t fde_size;               /* bytes of one in-arena FDE (with_eh_frame) */
    size_t eh_fixed;               /* bytes of the CIE and the terminator */
    bool with_eh_frame;            /* room for .eh_frame at each arena's end */
    /* build each arena's .eh_frame when it is made (an output that reads
     * it is on); else the room stays untouched (no resident page) until
     * pt_arena_eh_build, when such an output is switched on */
    bool eh_now;
    bool keep_names;               /* arenas hold a name per slot */

    struct pt_arena **arenas;      /* sorted by executable address */
    size_t n_arenas, cap_arenas;
    size_t next_arena_bytes;
    uintptr_t free_head;           /* executable address of a free slot, 0: none */
    struct pt_arena *filling;      /* the newest arena: the only one with never-used slots */

    /* PERFTRAMP_ELF: new arenas are file-backed ELF arenas in elf_dir
     * (mem/elf_arena.h) while elf_on.  One that cannot be made turns
     * elf_on off, records its errno in elf_error and comes from the usual
     * code memory instead.  Slots of an ELF arena are never recycled (perf
     * reads names from the file at report time: an address must keep its
     * name); an ELF arena whose slots were all handed out and released is
     * unmapped (pt_arena_spent, pt_arena_retire). */
    struct pt_elf_dir *elf_dir;
    bool elf_on;
    int elf_error;
    size_t cie_size;               /* bytes of the in-arena CIE (with_eh_frame) */
};

/* Returns 0, or -1 with errno (EINVAL: the table's CFI cannot be
 * serialized). */
int pt_slots_init(struct pt_slots *s, const struct pt_arch *arch, const struct pt_layout *layout, size_t stride,
                  bool with_eh_frame, bool eh_now, bool keep_names);
void pt_slots_destroy(struct pt_slots *s);
/* Frees every slot's kept name and keeps none from now on (a failed
 * switch that was to keep them undoes itself so). */
void pt_slots_drop_names(struct pt_slots *s);

/* Builds the arena's .eh_frame in its reserved room when not built yet
 * (s->with_eh_frame).  0, or -1 with errno. */
int pt_arena_eh_build(struct pt_slots *s, struct pt_arena *a);
/* Every arena's, and those made from now on (sets s->eh_now). */
int pt_slots_eh_build(struct pt_slots *s);

/* A free slot; *new_arena tells the caller that a new arena was created
 * for it (its .eh_frame is ready to register).  -1 with errno. */
int pt_slot_alloc(struct pt_slots *s, struct pt_arena **arena, size_t *index, bool *new_arena);
/* Puts a trap over the slot's code (flushed from the instruction cache)
 * and links it into the free list. */
void pt_slot_free(struct pt_slots *s, struct pt_arena *a, size_t index);
/* The arena and slot index of an executable address (exact slot starts
 * only), or NULL. */
struct pt_arena *pt_arena_of(const struct pt_slots *s, uintptr_t x, size_t *index);

static inline uintptr_t pt_slot_x(const struct pt_slots *s, const struct pt_arena *a, size_t i)
{
    return a->x + i * s->stride;
}
static inline uint8_t *pt_slot_w(const struct pt_slots *s, const struct pt_arena *a, size_t i)
{
    return a->w + i * s->stride;
}
static inline bool pt_slot_live(const struct pt_arena *a, size_t i)
{
    return (a->live_bits[i / 64] >> (i % 64)) & 1;
}

/* An ELF arena with no live slot and no never-used one: nothing will
 * ever run or be written there again. */
static inline bool pt_arena_spent(const struct pt_arena *a)
{
    return a->mem.elf && a->live == 0 && a->high_water == a->n_slots;
}
/* Removes and frees an arena (outputs have let go of it); its file stays. */
void pt_arena_retire(struct pt_slots *s, struct pt_arena *a);

/* Calls fn for every live slot, in address order; stops at the first
 * non-zero return and returns it. */
typedef int (*pt_live_fn)(struct pt_arena *a, size_t index, void *arg);
int pt_for_each_live(const struct pt_slots *s, pt_live_fn fn, void *arg);

#endif
