/* SPDX-License-Identifier: MIT */
/* The context behind the public perftramp handle: its code memory and the
 * state of each output.  Internal: the API layer (src/api/) owns it and
 * drives the layers below it; nothing below includes this header. */
#ifndef PERFTRAMP_CONTEXT_H
#define PERFTRAMP_CONTEXT_H

#include "emit/layout.h"
#include "mem/arena.h"
#include "perftramp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PT_N_OUTPUTS 4

struct perftramp {
    pthread_mutex_t lock;          /* slots, outputs */
    const struct pt_arch *arch;
    struct pt_layout layout;
    unsigned outputs;              /* requested at open */
    atomic_uint active;            /* outputs still working */
    atomic_int output_error[PT_N_OUTPUTS]; /* errno that disabled each output */
    unsigned flags;
    struct pt_slots slots;         /* code memory */

    uint64_t tag_seed, tag_counter;
    pid_t pid;
    char *jitdump_dir;

    struct pt_perfmap *perfmap;    /* owned by outputs/perfmap.c */
    struct pt_jitdump *jitdump;    /* owned by outputs/jitdump.c */
    struct pt_unwind *unwind;      /* owned by outputs/unwind_register.c */
    struct pt_gdb *gdb;            /* owned by outputs/gdb_jit.c */
};

/* Output bit -> index in output_error. */
int pt_output_index(unsigned bit);
static inline bool pt_output_on(struct perftramp *pt, unsigned bit)
{
    return (atomic_load_explicit(&pt->active, memory_order_relaxed) & bit) != 0;
}

/* tag.c */
void pt_tag_seed(struct perftramp *pt);
uint64_t pt_tag_next(struct perftramp *pt);

/* options.c: $PERFTRAMP -> output bits; -1 with errno EINVAL. */
int pt_parse_outputs(const char *spec, unsigned *out);

#endif
