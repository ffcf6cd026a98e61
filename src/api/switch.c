/* SPDX-License-Identifier: MIT */
/* perftramp_set_outputs: the outputs of a running context.
 *
 * Everything happens under the context's lock, the lock wrap, release,
 * publish and unpublish take: a trampoline wrapped concurrently is either
 * live when the switch replays (and replayed) or wrapped after it (and
 * written by its own wrap): exactly once.  Enabling first opens every new
 * output, then replays to them; any failure closes what this call opened
 * and restores the errors it cleared, so the caller sees nothing changed.
 * Disabling cannot fail: each output closes as at perftramp_close. */
#include "api/context.h"
#include "api/output_table.h"
#include "outputs/outputs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct replay {
    struct perftramp *pt;
    unsigned bits;      /* the outputs fed */
    unsigned slot_bits; /* those of them that take slots one by one */
    bool strict;
    size_t next_region; /* regions below the current slot go first */
    int error;
    const struct pt_map_names *m; /* names of slots that keep none */
    char *buf;                    /* PT_REPLAY_NAME_SIZE */
};

#define FED(r, row) (((r)->bits & (row)->bit) && pt_output_on((r)->pt, (row)->bit))

/* A hook failed (errno): strict, the replay stops (-1); else that output
 * is disabled and the others go on (0). */
static int failed(struct replay *r, unsigned bit)
{
    if (r->strict)
        return r->error = errno ? errno : EIO, -1;
    pt_output_fail(r->pt, bit, errno);
    return 0;
}

static int regions_below(struct replay *r, uintptr_t limit)
{
    struct perftramp *pt = r->pt;
    while (r->next_region < pt->n_regions && pt->regions[r->next_region]->addr < limit) {
        struct pt_region *g = pt->regions[r->next_region++];
        struct pt_tramp t;
        pt_region_tramp(g, &t);
        EACH_ROW(row)
        if (row->code_added && FED(r, row) && row->code_added(pt, g, &t) < 0 && failed(r, row->bit) < 0)
            return -1;
    }
    return 0;
}

static int replay_slot(struct pt_arena *a, size_t i, void *arg)
{
    struct replay *r = arg;
    struct perftramp *pt = r->pt;
    uintptr_t x = pt_slot_x(&pt->slots, a, i);
    if (regions_below(r, x) < 0)
        return -1;
    if (!(r->slot_bits & atomic_load(&pt->active)))
        return 0;
    const char *rec = a->names ? a->names[i] : NULL;
    struct pt_tramp t = {.addr = x, .code = pt_slot_w(&pt->slots, a, i), .size = pt->layout.size,
                         .name = pt_slot_replay_name(pt, a, i, r->m, r->buf), .file = pt_slot_name_file(rec),
                         .line = pt_slot_name_line(rec)};
    EACH_ROW(row)
    if (row->slot_added && FED(r, row) && row->slot_added(pt, a, i, &t) < 0 && failed(r, row->bit) < 0)
        return -1;
    return 0;
}

/* Arenas first (an output that takes them whole), then the names an
 * output reads from the slots, then every slot and region in address
 * order. */
static int replay(struct replay *r)
{
    struct perftramp *pt = r->pt;
    for (size_t k = 0; k < pt->slots.n_arenas; k++)
        EACH_ROW(row)
        if (row->arena_added && FED(r, row) && row->arena_added(pt, pt->slots.arenas[k]) < 0 && failed(r, row->bit) < 0)
            return -1;
    if (r->bits & pt_output_bits_with(PT_OUT_READS_NAMES) && pt_names_fill(pt, r->m) < 0)
        EACH_ROW(row)
        if ((row->traits & PT_OUT_READS_NAMES) && FED(r, row) && failed(r, row->bit) < 0)
            return -1;
    /* every region above the last slot: no region ends at UINTPTR_MAX */
    if (pt_for_each_live(&pt->slots, replay_slot, r) != 0 || regions_below(r, UINTPTR_MAX) < 0)
        return -1;
    return 0;
}

int pt_replay(struct perftramp *pt, unsigned bits, bool strict)
{
    struct replay r = {.pt = pt, .bits = bits & pt_output_bits_with(PT_OUT_REPLAYED), .strict = strict};
    if (!r.bits)
        return 0;
    EACH_ROW(row)
    if (row->slot_added && (r.bits & row->bit))
        r.slot_bits |= row->bit;
    struct pt_map_names m = {0};
    if (pt->names_map_pid > 0 && !(pt->flags & PERFTRAMP_KEEP_NAMES))
        pt_map_names_load(&m, pt->names_map_pid, pt->names_map_bytes);
    r.m = &m;
    r.buf = malloc(PT_REPLAY_NAME_SIZE);
    int ret = r.buf ? replay(&r) : (r.error = ENOMEM, -1);
    free(r.buf);
    pt_map_names_free(&m);
    if (ret < 0)
        errno = r.error ? r.error : EIO;
    return ret;
}

/* An open GDB output keeps every slot's name (api/output_state.c); once
 * nothing needs them (pt_keep_names), they go, as at a failed switch that
 * opened GDB: memory is back at the slots' code. */
static void drop_unneeded_names(struct perftramp *pt)
{
    if (pt->slots.keep_names && !pt_keep_names(pt))
        pt_slots_drop_names(&pt->slots);
}

int pt_set_outputs_locked(struct perftramp *pt, unsigned want)
{
    unsigned active = atomic_load(&pt->active);
    unsigned enable = want & ~active;
    int saved[PT_N_OUTPUTS];
    for (int i = 0; i < PT_N_OUTPUTS; i++)
        saved[i] = atomic_load(&pt->output_error[i]);
    /* a failed output's state is closed before it is opened afresh */
    pt_outputs_close(pt, enable & pt->outputs, NULL);
    unsigned opened = 0;
    int e = 0;
    for (size_t k = 0; k < pt_n_output_rows && !e; k++) {
        unsigned bit = pt_output_rows[k].bit;
        if (!(enable & bit))
            continue;
        if (pt_output_open(pt, bit) < 0)
            e = errno ? errno : EIO;
        else
            opened |= bit;
    }
    if (!e && opened && pt_replay(pt, opened, true) < 0)
        e = errno ? errno : EIO;
    if (e) {
        pt_outputs_close(pt, opened, NULL);
        for (int i = 0; i < PT_N_OUTPUTS; i++)
            atomic_store(&pt->output_error[i], saved[i]);
        drop_unneeded_names(pt);
        errno = e;
        return -1;
    }
    pt_outputs_close(pt, pt->outputs & ~want, NULL);
    pt_names_map_note(pt);
    drop_unneeded_names(pt);
    return 0;
}

int perftramp_set_outputs(perftramp *pt, unsigned outputs)
{
    if (!pt || (outputs & ~(PERFTRAMP_ALL | PERFTRAMP_ELF))) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&pt->lock);
    int r = pt_set_outputs_locked(pt, outputs);
    int e = errno;
    pthread_mutex_unlock(&pt->lock);
    errno = e;
    return r;
}

unsigned perftramp_outputs(perftramp *pt)
{
    return pt ? atomic_load(&pt->active) : 0;
}
