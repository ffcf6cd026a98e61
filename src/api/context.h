/* SPDX-License-Identifier: MIT */
/* The context behind the public perftramp handle: its code memory and the
 * state of each output.  Internal: the API layer (src/api/) owns it and
 * drives the layers below it; nothing below includes this header. */
#ifndef PERFTRAMP_CONTEXT_H
#define PERFTRAMP_CONTEXT_H

#include "emit/layout.h"
#include "mem/arena.h"
#include "mem/elf_arena.h"
#include "perftramp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PT_N_OUTPUTS 5

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
    /* PERFTRAMP_ATFORK: forked, the child's files not written yet (the
     * first wrap, or perftramp_after_fork_child, writes them) */
    bool fork_pending;

    struct pt_perfmap *perfmap;    /* owned by outputs/perfmap.c */
    struct pt_jitdump *jitdump;    /* owned by outputs/jitdump.c */
    struct pt_unwind *unwind;      /* owned by outputs/unwind_register.c */
    struct pt_gdb *gdb;            /* owned by outputs/gdb_jit.c */
    /* PERFTRAMP_ELF: the directory the ELF arenas go to (open when
     * elf_open), as asked for (NULL: $PERFTRAMP_ELF_DIR, else the default) */
    struct pt_elf_dir elf;
    bool elf_open;
    char *elf_dir_opt;
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

/* The options as this library knows them: the public struct, plus (in a
 * test build only) a field a future release might add, so that the ABI
 * test can run old programs against a library whose struct has grown. */
struct pt_options {
    struct perftramp_options pub;
#ifdef PERFTRAMP_TEST_GROWN_OPTIONS
    uint64_t test_future;
#endif
};

/* options.c: the caller's options (opts_size bytes of them, by the
 * size-safe growth rule) or, opts NULL, $PERFTRAMP; jitdump_dir NULL
 * becomes $JITDUMPDIR (still NULL when unset).  0, or -1 with errno
 * EINVAL. */
int pt_options_read(struct pt_options *o, const struct perftramp_options *opts, size_t opts_size);
/* $PERFTRAMP -> output bits; -1 with errno EINVAL. */
int pt_parse_outputs(const char *spec, unsigned *out);
extern const size_t pt_options_size_0_1;

#endif
