/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: one context's GDB state, shared by the
 * chunks of its arenas (gdb_jit.c) and its published code (gdb_batch.c). */
#ifndef PERFTRAMP_OUTPUTS_GDB_STATE_H
#define PERFTRAMP_OUTPUTS_GDB_STATE_H

#include "emit/bytebuf.h"
#include "outputs/outputs.h"

#include <stdbool.h>

struct pt_gdb_batch;

struct pt_gdb {
    const struct pt_slots *slots; /* geometry: stride, FDE size, layout, arch */
    bool lazy; /* the stub understands these trampolines (gdb_lazy.h) */
    struct pt_buf program; /* the FDE program, shared by every slot */
    struct pt_gdb_batch *first, *last; /* published code, oldest batch first */
};

/* gdb_batch.c: every batch of published code goes (pt_gdb_close) */
void pt_gdb_batches_free(struct pt_gdb *g);

#endif
