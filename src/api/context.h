/* SPDX-License-Identifier: MIT */
/* The context behind the public perftramp handle: its code memory and the
 * state of each output.  Internal: the API layer (src/api/) owns it and
 * drives the layers below it; nothing below includes this header. */
#ifndef PERFTRAMP_CONTEXT_H
#define PERFTRAMP_CONTEXT_H

#include "emit/layout.h"
#include "mem/arena.h"
#include "outputs/outputs.h"
#include "mem/elf_arena.h"
#include "perftramp.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define PT_N_OUTPUTS 5

/* A published code region (api/publish.c), in perftramp.regions. */
struct pt_region {
    uintptr_t addr;
    size_t size;
    char *name, *file;      /* copies; file NULL for none */
    unsigned line;
    uint8_t *code;          /* the bytes as published (jitdump replays copy these) */
    uint8_t *eh;            /* in-process .eh_frame: CIE + absptr FDE + terminator */
    size_t eh_len;
    uint8_t *jd_blob;       /* jitdump UNWINDING_INFO payload (genelf layout) */
    size_t jd_blob_len, jd_eh_size;
    void *unwind_handle;    /* outputs/unwind_register.c */
    void *gdb_handle;       /* outputs/gdb_jit.c */
};

struct pt_signal_slot; /* api/signal_switch.c */

struct perftramp {
    pthread_mutex_t lock;          /* slots, outputs */
    const struct pt_arch *arch;
    struct pt_layout layout;
    /* PERFTRAMP_NEAR_CALLS: the host table's direct-call variant, used for
     * every trampoline whose target it reaches (api/near.c) */
    struct pt_layout near_layout;
    bool near;
    /* slots spaced for a jitdump's UNWINDING_INFO (compute_stride): a
     * jitdump on at open, PERFTRAMP_WIDE_SLOTS or PERFTRAMP_SIGNAL; else
     * packed at the code's size (dense) */
    bool wide;
    /* perftramp_set_name_callback: the names of slots that keep none,
     * asked for at a replay */
    perftramp_name_fn name_fn;
    void *name_data;
    /* the process whose perf map names the slots that keep no name (ours
     * once our map has been on, else a fork's parent's), read by a
     * replay; 0: none (api/slot_name.c) */
    pid_t names_map_pid;
    /* how much of that map to read: its size at the fork when it is a
     * parent's (the parent's later lines may name an address it has
     * reused since), -1: all */
    off_t names_map_bytes;
    off_t names_map_bytes_at_fork; /* PERFTRAMP_ATFORK: taken before each fork, for the child */
    unsigned outputs;              /* opened (their state exists): at open, then perftramp_set_outputs */
    atomic_uint active;            /* outputs still working */
    unsigned names_read_by;        /* the outputs with PT_OUT_READS_NAMES, and */
    unsigned names_source;         /* PT_OUT_NAMES_SOURCE: read once at open, asked every wrap */
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

    struct pt_region **regions;    /* published code, sorted by address (each allocated: the unwinder holds &unwind_handle) */
    size_t n_regions, cap_regions;
    uint64_t jitdump_next_index;   /* code_index across jitdumps enabled again */

    struct pt_signal_slot *signal_slot; /* PERFTRAMP_SIGNAL: the helper's slot */
    unsigned signal_outputs;       /* what the signal turns on */
    /* PERFTRAMP_ELF: the directory the ELF arenas go to (open when
     * elf_open), as asked for (NULL: $PERFTRAMP_ELF_DIR, else the default) */
    struct pt_elf_dir elf;
    bool elf_open;
    char *elf_dir_opt;
};

/* output_state.c: opening, closing and failing one output (one bit),
 * by its row (api/output_table.h).  pt_output_open: 0 (a refused file
 * counts as opened: disabled, its errno recorded), or -1 with errno and
 * nothing changed. */
int pt_output_open(struct perftramp *pt, unsigned bit);
void pt_output_close(struct perftramp *pt, unsigned bit);
void pt_output_fail(struct perftramp *pt, unsigned bit, int e);
/* Closes the outputs in `opened`, in reverse table order (ELF first, the
 * perf map last); the errno of the first output whose close failed and
 * counts (PT_OUT_CLOSE_ERROR: the files) goes to *first_error (0 for
 * none) when first_error is not NULL. */
void pt_outputs_close(struct perftramp *pt, unsigned opened, int *first_error);
/* output_state.c: what happened, told to every working output that takes
 * it; an output whose hook fails is disabled (pt_output_fail). */
void pt_outputs_slot_added(struct perftramp *pt, struct pt_arena *a, size_t i, bool new_arena,
                           const struct pt_tramp *t);
void pt_outputs_slot_removed(struct perftramp *pt, struct pt_arena *a, size_t i);
void pt_outputs_arena_removed(struct perftramp *pt, struct pt_arena *a); /* every opened one */
void pt_outputs_code_added(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t);
void pt_outputs_code_removed(struct perftramp *pt, struct pt_region *r); /* every opened one */
/* In a forked child: the outputs with files of their own reopened; the
 * bits of those that work. */
unsigned pt_outputs_reopen(struct perftramp *pt);
/* The bits of the outputs a fork makes reopen. */
unsigned pt_outputs_with_reopen(void);

/* switch.c: sends every live trampoline and published region, in address
 * order, to the outputs in `bits` (already open).  With `strict`, the
 * first failure stops it and returns -1 with errno; else a failing
 * output is disabled (pt_output_fail) and the others go on.  Lock held. */
int pt_replay(struct perftramp *pt, unsigned bits, bool strict);
/* set_outputs with the lock held. */
int pt_set_outputs_locked(struct perftramp *pt, unsigned outputs);

/* publish.c */
void pt_regions_free(struct perftramp *pt);
void pt_region_tramp(const struct pt_region *r, struct pt_tramp *t);
/* publish.c: registers a region with the GDB output (pt->gdb open; the
 * GDB row, api/output_rows.c) */
int pt_region_gdb_add(struct perftramp *pt, struct pt_region *r);

/* slot_name.c: what a slot keeps for the outputs: its name, and the
 * source position of perftramp_wrap_at, in one allocation
 * (name NUL file NUL line): a->names[i] still reads as the name. */
size_t pt_slot_name_size(size_t name_len, const char *file, unsigned line);
void pt_slot_name_write(char *rec, const char *name, const char *file, unsigned line);
const char *pt_slot_name_file(const char *rec); /* NULL for none */
unsigned pt_slot_name_line(const char *rec);

/* slot_name.c: the perf map works now: from here on it names the slots
 * that keep none (pt->names_map_pid).  After a replay that fed it. */
void pt_names_map_note(struct perftramp *pt);
/* slot_name.c: the bytes of names_map_pid's map that name our slots:
 * names_map_bytes when it is set, else the file's size now; -1: all. */
off_t pt_names_map_size(const struct perftramp *pt);
/* The perf map lines of one process, sorted by address, for the names
 * of slots that keep none (api/switch.c). */
struct pt_map_names {
    struct pt_map_name *e;
    size_t n;
    char *text;
};
/* Loads /tmp/perf-<pid>.map, its first `bytes` (-1: all); a missing or
 * unreadable file loads nothing.  Never fails (names fall back to the
 * placeholder). */
void pt_map_names_load(struct pt_map_names *m, pid_t pid, off_t bytes);
void pt_map_names_free(struct pt_map_names *m);
/* The name a replay gives slot i of a: the kept one, else the name
 * callback's, else the one in m (may be NULL), else the placeholder
 * "[perftramp@0x<address>]".  buf: PT_REPLAY_NAME_SIZE bytes. */
#define PT_REPLAY_NAME_SIZE 4097
const char *pt_slot_replay_name(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_map_names *m,
                                char *buf);
/* Gives every live slot without a kept name one (pt_slot_replay_name),
 * kept from now on (the GDB output reads them from the slots).  0, or -1
 * with errno ENOMEM. */
int pt_names_fill(struct perftramp *pt, const struct pt_map_names *m);

/* signal_switch.c: PERFTRAMP_SIGNAL.  0, or -1 with errno. */
int pt_signal_start(struct perftramp *pt, int signo);
void pt_signal_stop(struct perftramp *pt);
/* In a forked child: starts the helper thread fork did not copy (from an
 * ordinary context, never from fork's child handler).  0, or -1 with
 * errno; 0 at once when there is nothing to do. */
int pt_signal_after_fork(struct perftramp *pt);


/* output_state.c: output bit -> index in output_error, and back. */
int pt_output_index(unsigned bit);
unsigned pt_output_bit(int i);
static inline bool pt_output_on(struct perftramp *pt, unsigned bit)
{
    return (atomic_load_explicit(&pt->active, memory_order_relaxed) & bit) != 0;
}

/* Whether a wrap keeps a copy of its name for later replays (every wrap
 * asks: inline).  Yes when asked for, or when an output reads names from
 * the slots (GDB); else every later replay must name the slot
 * (perftramp.h): a copy, unless the callback will give the name or the
 * perf map, working now, gets its line (pt_names_map_note), or the caller
 * gave the names up.  Lock held. */
static inline bool pt_keep_names(struct perftramp *pt)
{
    if ((pt->flags & PERFTRAMP_KEEP_NAMES) || (pt->outputs & pt->names_read_by))
        return true;
    return !(pt->flags & PERFTRAMP_FORGET_NAMES) && !pt->name_fn && !pt_output_on(pt, pt->names_source);
}

/* near.c: sets pt->near when `flags` ask for near calls and the host
 * table has a variant that can stand in for it; else leaves it false. */
void pt_near_init(struct perftramp *pt, unsigned flags);
/* The layout for a trampoline at x calling target. */
const struct pt_layout *pt_near_choose(const struct perftramp *pt, uintptr_t x, uintptr_t target);

/* tag.c */
void pt_tag_seed(struct perftramp *pt);
uint64_t pt_tag_next(struct perftramp *pt);

/* The options as this library knows them: from `pub` to the end, what a
 * caller's struct may hold (the public struct, plus, in a test build
 * only, a field a future release might add, so that the ABI test can run
 * old programs against a library whose struct has grown); before it, what
 * the library derives and no caller may set. */
struct pt_options {
    unsigned from_all; /* the outputs $PERFTRAMP's "all" named: one this platform lacks stays off (ENOTSUP) */
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
/* $PERFTRAMP -> output bits; -1 with errno EINVAL.  *from_all (may be
 * NULL) gets the bits the word "all" named. */
int pt_parse_outputs(const char *spec, unsigned *out);
int pt_parse_outputs_all(const char *spec, unsigned *out, unsigned *from_all);
extern const size_t pt_options_size_0_1;

#endif
