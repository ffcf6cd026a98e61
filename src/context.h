/* SPDX-License-Identifier: MIT */
/* The context behind the public perftramp handle: its arenas of
 * trampolines and the state of each output.  Internal. */
#ifndef PERFTRAMP_CONTEXT_H
#define PERFTRAMP_CONTEXT_H

#include "layout.h"
#include "perftramp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* One block of executable memory from ffi_closure_alloc, cut into slots.
 * In-process unwind info for every slot lives at its end (PERFTRAMP_UNWIND),
 * close to the code so pcrel|sdata4 pointers reach it. */
struct pt_arena {
    void *closure;        /* ffi_closure_alloc's return: writable base */
    uint8_t *w;           /* writable address of byte 0 */
    uintptr_t x;          /* executable address of byte 0 */
    size_t bytes;         /* total size */
    size_t n_slots;       /* capacity */
    size_t high_water;    /* slots ever handed out: [0, high_water) */
    size_t live;          /* live slots */
    uint64_t *live_bits;  /* one bit per slot */
    char **names;         /* per-slot names, when an output needs them */
    size_t eh_off;        /* .eh_frame inside the arena (0: none) */
    size_t eh_len;
    void *unwind_handle;  /* unwinder registration, owned by unwind_register.c */
    void *gdb_handle;     /* GDB JIT entry, owned by gdb_jit.c */
};

struct perftramp {
    pthread_mutex_t lock;          /* arenas, free list, outputs */
    const struct pt_arch *arch;
    struct pt_layout layout;
    unsigned outputs;              /* requested at open */
    atomic_uint active;            /* outputs still working */
    atomic_int output_error[4];    /* errno that disabled each output */
    unsigned flags;
    size_t stride;                 /* bytes between slots */
    size_t fde_size;               /* bytes of one in-process FDE (UNWIND) */
    bool keep_names;

    struct pt_arena **arenas;      /* sorted by executable address */
    size_t n_arenas, cap_arenas;
    size_t next_arena_bytes;
    uintptr_t free_head;           /* executable address of a free slot, 0: none */
    struct pt_arena *filling;      /* the newest arena: the only one with never-used slots */

    uint64_t tag_seed, tag_counter;
    uint64_t code_index;           /* jitdump: next code_index, never reused */
    pid_t pid;
    char *jitdump_dir;

    struct pt_perfmap *perfmap;    /* owned by perfmap.c */
    struct pt_jitdump *jitdump;    /* owned by jitdump.c */
    struct pt_unwind *unwind;      /* owned by unwind_register.c */
    struct pt_gdb *gdb;            /* owned by gdb_jit.c */
};

/* Output bit -> index in output_error. */
int pt_output_index(unsigned bit);
/* Disables an output after a failure, recording errno `e`. */
void pt_output_fail(struct perftramp *pt, unsigned bit, int e);
static inline bool pt_output_on(struct perftramp *pt, unsigned bit)
{
    return (atomic_load_explicit(&pt->active, memory_order_relaxed) & bit) != 0;
}

/* arena.c: slots.  All called with pt->lock held. */
int pt_slot_alloc(struct perftramp *pt, struct pt_arena **arena, size_t *index);
void pt_slot_free(struct perftramp *pt, struct pt_arena *a, size_t index);
struct pt_arena *pt_arena_of(struct perftramp *pt, uintptr_t x, size_t *index);
void pt_arenas_init(struct perftramp *pt);
void pt_arenas_destroy(struct perftramp *pt);
static inline uintptr_t pt_slot_x(const struct perftramp *pt, const struct pt_arena *a, size_t i)
{
    return a->x + i * pt->stride;
}
static inline uint8_t *pt_slot_w(const struct perftramp *pt, const struct pt_arena *a, size_t i)
{
    return a->w + i * pt->stride;
}
static inline bool pt_slot_live(const struct pt_arena *a, size_t i)
{
    return (a->live_bits[i / 64] >> (i % 64)) & 1;
}

/* Calls fn for every live trampoline, in address order. */
typedef int (*pt_live_fn)(struct perftramp *pt, struct pt_arena *a, size_t index, void *arg);
int pt_for_each_live(struct perftramp *pt, pt_live_fn fn, void *arg);

/* tag.c */
void pt_tag_seed(struct perftramp *pt);
uint64_t pt_tag_next(struct perftramp *pt);

/* options.c: $PERFTRAMP -> output bits; -1 with errno EINVAL. */
int pt_parse_outputs(const char *spec, unsigned *out);

#endif
