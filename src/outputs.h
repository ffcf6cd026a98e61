/* SPDX-License-Identifier: MIT */
/* The outputs a context feeds.  Each lives in its own file and owns its
 * state; the core calls these hooks with pt->lock held.  A hook that fails
 * returns -1 with errno; the core then disables that output (open fails
 * instead, for the *_open hooks). */
#ifndef PERFTRAMP_OUTPUTS_H
#define PERFTRAMP_OUTPUTS_H

#include "context.h"

/* What the outputs learn about one new trampoline. */
struct pt_tramp {
    uintptr_t addr;        /* executable address */
    const uint8_t *code;   /* its bytes (layout.size of them) */
    size_t size;
    const char *name;
};

/* perfmap.c: /tmp/perf-<pid>.map */
int pt_perfmap_open(struct perftramp *pt);
int pt_perfmap_add(struct perftramp *pt, const struct pt_tramp *t);
int pt_perfmap_after_fork(struct perftramp *pt);
int pt_perfmap_close(struct perftramp *pt);

/* jitdump.c: <dir>/jit-<pid>.dump */
int pt_jitdump_open(struct perftramp *pt);
int pt_jitdump_add(struct perftramp *pt, const struct pt_tramp *t);
int pt_jitdump_after_fork(struct perftramp *pt);
int pt_jitdump_close(struct perftramp *pt);

/* unwind_register.c: the in-process unwinder, one registration per arena */
int pt_unwind_open(struct perftramp *pt);
int pt_unwind_arena_added(struct perftramp *pt, struct pt_arena *a);
void pt_unwind_arena_removed(struct perftramp *pt, struct pt_arena *a);
void pt_unwind_close(struct perftramp *pt);

/* gdb_jit.c: the GDB JIT interface, one entry per arena */
int pt_gdb_open(struct perftramp *pt);
int pt_gdb_add(struct perftramp *pt, struct pt_arena *a, size_t index);
int pt_gdb_remove(struct perftramp *pt, struct pt_arena *a, size_t index);
void pt_gdb_arena_removed(struct perftramp *pt, struct pt_arena *a);
void pt_gdb_close(struct perftramp *pt);

#endif
