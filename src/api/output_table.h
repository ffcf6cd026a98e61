/* SPDX-License-Identifier: MIT */
/* The API layer's table of outputs: one row per output, in the order they
 * open (they close in reverse).  A row joins the context to that output's
 * leaf (src/outputs/outputs.h): the leaf never sees the context, the rows
 * (api/output_rows.c) do.  Every loop over the outputs, and the handling
 * of a hook that fails, is written once, in api/output_state.c.
 *
 * Adding an output: its leaf file, one row, one line in Makefile.am's list
 * and one bit in include/perftramp.h (docs/design.md, "Outputs"). */
#ifndef PERFTRAMP_OUTPUT_TABLE_H
#define PERFTRAMP_OUTPUT_TABLE_H

#include "outputs/outputs.h"

#include <stddef.h>

struct perftramp;
struct pt_region;

/* What an output needs from the rest of the context (traits). */
enum {
    /* switched on while trampolines are live, it is sent every one of them
     * and every published region (api/switch.c); without it, only what
     * comes later */
    PT_OUT_REPLAYED = 1u << 0,
    /* a failure in closing is perftramp_close's error (a file's last write) */
    PT_OUT_CLOSE_ERROR = 1u << 1,
    /* asked for at open: slots spaced for a per-trampoline unwind record */
    PT_OUT_WIDE_SLOTS = 1u << 2,
    /* reads the arenas' in-memory .eh_frame: built at open */
    PT_OUT_READS_EH = 1u << 3,
    /* reads every slot's name from the slots: names are kept while open */
    PT_OUT_READS_NAMES = 1u << 4,
    /* its file names the slots wrapped while it is on, at a later replay:
     * they keep no copy of their own (api/slot_name.c, pt_keep_names) */
    PT_OUT_NAMES_SOURCE = 1u << 5,
};

/* Every hook but open and close may be NULL (nothing to do).  Hooks that
 * return int give 0, or -1 with errno: the core then disables the output
 * (pt_output_fail) and goes on with the others. */
struct pt_output_row {
    unsigned bit;     /* PERFTRAMP_* */
    const char *word; /* its name in $PERFTRAMP and perftramp_set_outputs' callers */
    unsigned traits;  /* PT_OUT_* */
    /* 0; PT_OUT_REFUSED (a refused file: errno says why, the state exists
     * but the output is disabled); or -1 with errno and no state */
    int (*open)(struct perftramp *pt);
    int (*close)(struct perftramp *pt); /* the state is gone even when it fails */
    /* the output was disabled after a failure */
    void (*disabled)(struct perftramp *pt);
    /* a new arena (at a wrap), or one met by a replay (already added ones
     * are skipped by the row), before any of its slots */
    int (*arena_added)(struct perftramp *pt, struct pt_arena *a);
    void (*arena_removed)(struct perftramp *pt, struct pt_arena *a);
    int (*slot_added)(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_tramp *t);
    int (*slot_removed)(struct perftramp *pt, struct pt_arena *a, size_t i);
    int (*code_added)(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t);
    void (*code_removed)(struct perftramp *pt, struct pt_region *r);
    /* in a forked child: the parent's file let go, the child's opened:
     * 0, PT_OUT_REFUSED or -1, as open (either disables the output) */
    int (*reopen)(struct perftramp *pt);
};

extern const struct pt_output_row pt_output_rows[];
extern const size_t pt_n_output_rows;

/* Every row, in open order. */
#define EACH_ROW(row) for (const struct pt_output_row *row = pt_output_rows; row < pt_output_rows + pt_n_output_rows; row++)

/* The bits of the rows that have every trait in `traits`. */
unsigned pt_output_bits_with(unsigned traits);

#endif
