/* SPDX-License-Identifier: MIT */
/* API layer: the outputs of a context, opened, fed, closed or failed, by
 * the rows of api/output_table.h.  The state behind pt->outputs (what
 * exists), pt->active (what is written) and pt->output_error (why an
 * output stopped).  Every path that reaches the outputs (open and close,
 * wrap and release, publish, set_outputs, fork) goes through here, so an
 * output is fed and torn down one way, and a failing hook is handled once. */
#include "config.h"

#include "api/context.h"
#include "api/output_table.h"
#include "outputs/outputs.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

unsigned pt_output_bit(int i)
{
    return pt_output_rows[i].bit;
}

int pt_output_index(unsigned bit)
{
    for (size_t k = 0; k < pt_n_output_rows; k++)
        if (pt_output_rows[k].bit == bit)
            return (int)k;
    return -1;
}

/* The one line an output that stops says on stderr: one write(2), no
 * stdio (its lock), errno kept. */
static void say_stopped(const char *word, int e)
{
    int saved = errno;
    char msg[256];
    int n = snprintf(msg, sizeof msg,
                     "perftramp: the %s output stopped: %s (errno %d); trampolines keep working, and what it "
                     "wrote before stays valid (perftramp_output_error)\n",
                     word, strerror(e), e);
    if (n > 0) {
        ssize_t w = write(STDERR_FILENO, msg, (size_t)n < sizeof msg ? (size_t)n : sizeof msg - 1);
        (void)w;
    }
    errno = saved;
}

/* Disables an output after a failure, recording errno `e` and saying so
 * once on stderr. */
void pt_output_fail(struct perftramp *pt, unsigned bit, int e)
{
    int i = pt_output_index(bit);
    int expected = 0;
    if (i < 0)
        return;
    if (atomic_compare_exchange_strong(&pt->output_error[i], &expected, e ? e : EIO))
        say_stopped(pt_output_rows[i].word, e ? e : EIO);
    atomic_fetch_and(&pt->active, ~bit);
    if (pt_output_rows[i].disabled)
        pt_output_rows[i].disabled(pt);
}

void pt_output_close(struct perftramp *pt, unsigned bit)
{
    int i = pt_output_index(bit);
    if (i < 0)
        return;
    if (pt_output_rows[i].close(pt) < 0)
        pt_output_fail(pt, bit, errno);
    atomic_fetch_and(&pt->active, ~bit);
    pt->outputs &= ~bit;
}

void pt_outputs_close(struct perftramp *pt, unsigned opened, int *first_error)
{
    int before[PT_N_OUTPUTS];
    for (int i = 0; i < PT_N_OUTPUTS; i++)
        before[i] = atomic_load(&pt->output_error[i]);
    for (size_t k = pt_n_output_rows; k-- > 0;)
        if (opened & pt_output_rows[k].bit)
            pt_output_close(pt, pt_output_rows[k].bit);
    int e = 0;
    for (int i = 0; i < PT_N_OUTPUTS && !e; i++)
        if (!before[i] && (pt_output_rows[i].traits & PT_OUT_CLOSE_ERROR))
            e = atomic_load(&pt->output_error[i]);
    if (first_error)
        *first_error = e;
}

/* Opens one output: 0, PT_OUT_REFUSED (errno says why) or -1. */
static int open_output(struct perftramp *pt, const struct pt_output_row *row)
{
    /* the arenas' .eh_frame, built now where it is not yet */
    if ((row->traits & PT_OUT_READS_EH) && pt_slots_eh_build(&pt->slots) < 0)
        return -1;
    /* names kept from now on (the live ones get theirs at the replay,
     * api/slot_name.c) */
    if (row->traits & PT_OUT_READS_NAMES)
        pt->slots.keep_names = true;
    return row->open(pt);
}

int pt_output_open(struct perftramp *pt, unsigned bit)
{
    int i = pt_output_index(bit);
    if (i < 0) {
        errno = EINVAL;
        return -1;
    }
    int r = open_output(pt, &pt_output_rows[i]);
    if (r < 0)
        return -1;
    pt->outputs |= bit;
    if (r == PT_OUT_REFUSED) {
        pt_output_fail(pt, bit, errno);
        return 0;
    }
    atomic_store(&pt->output_error[i], 0);
    atomic_fetch_or(&pt->active, bit);
    return 0;
}

/* ---- feeding them: each hook that fails disables its output ---- */


void pt_outputs_slot_added(struct perftramp *pt, struct pt_arena *a, size_t i, bool new_arena,
                           const struct pt_tramp *t)
{
    if (!atomic_load_explicit(&pt->active, memory_order_relaxed))
        return; /* no output working: the usual case of a wrap, kept to one load */
    if (new_arena)
        EACH_ROW(row)
        if (row->arena_added && pt_output_on(pt, row->bit) && row->arena_added(pt, a) < 0)
            pt_output_fail(pt, row->bit, errno);
    EACH_ROW(row)
    if (row->slot_added && pt_output_on(pt, row->bit) && row->slot_added(pt, a, i, t) < 0)
        pt_output_fail(pt, row->bit, errno);
}

void pt_outputs_slot_removed(struct perftramp *pt, struct pt_arena *a, size_t i)
{
    EACH_ROW(row)
    if (row->slot_removed && pt_output_on(pt, row->bit) && row->slot_removed(pt, a, i) < 0)
        pt_output_fail(pt, row->bit, errno);
}

/* Every output whose state exists forgets the arena, working or not. */
void pt_outputs_arena_removed(struct perftramp *pt, struct pt_arena *a)
{
    EACH_ROW(row)
    if (row->arena_removed && (pt->outputs & row->bit))
        row->arena_removed(pt, a);
}

void pt_outputs_code_added(struct perftramp *pt, struct pt_region *r, const struct pt_tramp *t)
{
    EACH_ROW(row)
    if (row->code_added && pt_output_on(pt, row->bit) && row->code_added(pt, r, t) < 0)
        pt_output_fail(pt, row->bit, errno);
}

void pt_outputs_code_removed(struct perftramp *pt, struct pt_region *r)
{
    EACH_ROW(row)
    if (row->code_removed && (pt->outputs & row->bit))
        row->code_removed(pt, r);
}

unsigned pt_outputs_reopen(struct perftramp *pt)
{
    unsigned reopened = 0;
    EACH_ROW(row)
    if (row->reopen && pt_output_on(pt, row->bit)) {
        if (row->reopen(pt) != 0) /* -1, or PT_OUT_REFUSED: errno says why */
            pt_output_fail(pt, row->bit, errno);
        else
            reopened |= row->bit;
    }
    return reopened;
}

unsigned pt_outputs_with_reopen(void)
{
    unsigned bits = 0;
    EACH_ROW(row)
    if (row->reopen)
        bits |= row->bit;
    return bits;
}
