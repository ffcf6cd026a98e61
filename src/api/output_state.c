/* SPDX-License-Identifier: MIT */
/* One output of a context, opened, closed or failed: the state behind
 * pt->outputs (what exists), pt->active (what is written) and
 * pt->output_error (why an output stopped).  perftramp_open and _close,
 * perftramp_set_outputs and the replay and publish paths all go through
 * here, so an output is opened and torn down one way. */
#include "config.h"

#include "api/context.h"
#include "outputs/outputs.h"

#include <errno.h>

static const unsigned pt_output_bits[PT_N_OUTPUTS] = {PERFTRAMP_PERF_MAP, PERFTRAMP_JITDUMP, PERFTRAMP_UNWIND,
                                           PERFTRAMP_GDB, PERFTRAMP_ELF};

unsigned pt_output_bit(int i)
{
    return pt_output_bits[i];
}

int pt_output_index(unsigned bit)
{
    for (int i = 0; i < PT_N_OUTPUTS; i++)
        if (pt_output_bits[i] == bit)
            return i;
    return -1;
}

/* Disables an output after a failure, recording errno `e`. */
void pt_output_fail(struct perftramp *pt, unsigned bit, int e)
{
    int i = pt_output_index(bit);
    int expected = 0;
    if (i < 0)
        return;
    atomic_compare_exchange_strong(&pt->output_error[i], &expected, e ? e : EIO);
    atomic_fetch_and(&pt->active, ~bit);
}

void pt_output_close(struct perftramp *pt, unsigned bit)
{
    switch (bit) {
    case PERFTRAMP_GDB:
        for (size_t k = pt->slots.n_arenas; k-- > 0;)
            pt_gdb_arena_removed(pt->gdb, pt->slots.arenas[k]);
        pt_gdb_close(pt->gdb);
        pt->gdb = NULL;
        break;
    case PERFTRAMP_UNWIND:
        pt_unwind_close(pt->unwind); /* clears every arena's and region's handle */
        pt->unwind = NULL;
        break;
    case PERFTRAMP_JITDUMP: {
        /* a forked child that never wrote its own dump still holds the
         * parent's: no CLOSE record into that one */
        bool write_close = pt_output_on(pt, PERFTRAMP_JITDUMP) && !pt->fork_pending;
        pt->jitdump_next_index = pt_jitdump_next_index(pt->jitdump);
        if (pt_jitdump_close(pt->jitdump, write_close) < 0)
            pt_output_fail(pt, PERFTRAMP_JITDUMP, errno);
        pt->jitdump = NULL;
        break;
    }
    case PERFTRAMP_PERF_MAP:
        if (pt_perfmap_close(pt->perfmap) < 0)
            pt_output_fail(pt, PERFTRAMP_PERF_MAP, errno);
        pt->perfmap = NULL;
        break;
    case PERFTRAMP_ELF:
        /* Code cannot move: the ELF arenas that exist stay files (their
         * trampolines keep running there, and the other outputs still see
         * them).  New trampolines go to ordinary memory from now on: the
         * filling ELF arena takes no more (as after fork).  The directory
         * stays open for a later enable, and is closed with the context. */
        pt->slots.elf_on = false;
        if (pt->slots.filling && pt->slots.filling->mem.elf)
            pt->slots.filling = NULL;
        break;
    }
    atomic_fetch_and(&pt->active, ~bit);
    pt->outputs &= ~bit;
}

void pt_outputs_close(struct perftramp *pt, unsigned opened, int *first_error)
{
    int before[PT_N_OUTPUTS];
    for (int i = 0; i < PT_N_OUTPUTS; i++)
        before[i] = atomic_load(&pt->output_error[i]);
    static const unsigned order[] = {PERFTRAMP_ELF, PERFTRAMP_GDB, PERFTRAMP_UNWIND, PERFTRAMP_JITDUMP, PERFTRAMP_PERF_MAP};
    for (size_t k = 0; k < sizeof order / sizeof order[0]; k++)
        if (opened & order[k])
            pt_output_close(pt, order[k]);
    int e = 0;
    for (int i = 0; i < PT_N_OUTPUTS && !e; i++)
        if (!before[i] && atomic_load(&pt->output_error[i]) && (pt_output_bits[i] & (PERFTRAMP_JITDUMP | PERFTRAMP_PERF_MAP)))
            e = atomic_load(&pt->output_error[i]);
    if (first_error)
        *first_error = e;
}

/* PERFTRAMP_ELF: the directory, checked, and cleaned of the files of
 * processes that are gone.  A directory that cannot be used (someone
 * else's, a symlink, noexec, missing) disables the output: the arenas come
 * from the usual code memory.  The first arena file is made at the first
 * wrap (pt_elf_arena_alloc). */
static int open_elf(struct perftramp *pt)
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
    /* enabled on a running context (perftramp_set_outputs): the next
     * never-used slot comes from a new arena, an ELF file, rather than
     * from the rest of an ordinary one */
    if (pt->slots.filling && !pt->slots.filling->mem.elf)
        pt->slots.filling = NULL;
    return 0;
}

/* Opens one output: 0, PT_OUT_REFUSED (errno says why) or -1. */
static int open_output(struct perftramp *pt, unsigned bit)
{
    int r;
    switch (bit) {
    case PERFTRAMP_PERF_MAP:
        return pt_perfmap_open(&pt->perfmap, pt->pid);
    case PERFTRAMP_JITDUMP:
        r = pt_jitdump_open(&pt->jitdump, &pt->layout, pt->jitdump_dir, pt->pid, pt->wide);
        if (r >= 0)
            pt_jitdump_set_next_index(pt->jitdump, pt->jitdump_next_index);
        return r;
    case PERFTRAMP_UNWIND:
        /* the arenas' .eh_frame, built now where it is not yet */
        if (pt_slots_eh_build(&pt->slots) < 0)
            return -1;
        return pt_unwind_open(&pt->unwind);
    case PERFTRAMP_GDB:
        /* GDB reads the arenas' .eh_frame and a name per slot: kept from
         * now on (the live ones get theirs at the replay, api/slot_name.c) */
        if (pt_slots_eh_build(&pt->slots) < 0)
            return -1;
        pt->slots.keep_names = true;
        return pt_gdb_open(&pt->gdb, &pt->slots);
    case PERFTRAMP_ELF:
        return open_elf(pt);
    }
    errno = EINVAL;
    return -1;
}

/* Opens one output for perftramp_set_outputs: the state exists (bit in
 * pt->outputs) and, unless refused, the output is active.  0, or -1. */
int pt_output_open(struct perftramp *pt, unsigned bit)
{
    int r = open_output(pt, bit);
    if (r < 0)
        return -1;
    pt->outputs |= bit;
    int i = pt_output_index(bit);
    if (r == PT_OUT_REFUSED) {
        pt_output_fail(pt, bit, errno);
        return 0;
    }
    atomic_store(&pt->output_error[i], 0);
    atomic_fetch_or(&pt->active, bit);
    return 0;
}
