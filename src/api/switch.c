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
#include "outputs/outputs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct replay {
    struct perftramp *pt;
    unsigned bits;    /* file outputs to feed (perf map, jitdump) */
    bool strict;
    size_t next_region; /* regions below the current slot go first */
    int error;
    const struct pt_map_names *m; /* names of slots that keep none */
    char *buf;                    /* PT_REPLAY_NAME_SIZE */
};

/* Sends one trampoline or region to the file outputs.  -1 (strict) or 0. */
static int feed(struct replay *r, const struct pt_tramp *t)
{
    struct perftramp *pt = r->pt;
    if ((r->bits & PERFTRAMP_PERF_MAP) && pt_output_on(pt, PERFTRAMP_PERF_MAP) && pt_perfmap_add(pt->perfmap, t) < 0) {
        if (r->strict)
            return r->error = errno, -1;
        pt_output_fail(pt, PERFTRAMP_PERF_MAP, errno);
    }
    if ((r->bits & PERFTRAMP_JITDUMP) && pt_output_on(pt, PERFTRAMP_JITDUMP) && pt_jitdump_add(pt->jitdump, t) < 0) {
        if (r->strict)
            return r->error = errno, -1;
        pt_output_fail(pt, PERFTRAMP_JITDUMP, errno);
    }
    return 0;
}

static int regions_below(struct replay *r, uintptr_t limit)
{
    struct perftramp *pt = r->pt;
    while (r->next_region < pt->n_regions && pt->regions[r->next_region]->addr < limit) {
        struct pt_tramp t;
        pt_region_tramp(pt->regions[r->next_region++], &t);
        if (feed(r, &t) < 0)
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
    const char *rec = a->names ? a->names[i] : NULL;
    struct pt_tramp t = {.addr = x, .code = pt_slot_w(&pt->slots, a, i), .size = pt->layout.size,
                         .name = pt_slot_replay_name(pt, a, i, r->m, r->buf), .file = pt_slot_name_file(rec),
                         .line = pt_slot_name_line(rec)};
    return feed(r, &t);
}

static int replay_unwind(struct perftramp *pt, bool strict)
{
    for (size_t k = 0; k < pt->slots.n_arenas; k++) {
        struct pt_arena *a = pt->slots.arenas[k];
        if (!a->unwind_handle && pt_unwind_arena_added(pt->unwind, &pt->slots, a) < 0)
            return -1;
    }
    for (size_t k = 0; k < pt->n_regions; k++) {
        struct pt_region *g = pt->regions[k];
        if (!g->unwind_handle && pt_unwind_code_add(pt->unwind, g->eh, g->eh_len, &g->unwind_handle) < 0)
            return -1;
    }
    (void)strict;
    return 0;
}

static int replay(struct perftramp *pt, unsigned bits, bool strict, const struct pt_map_names *m, char *buf);

static int gdb_slot(struct pt_arena *a, size_t i, void *arg)
{
    struct perftramp *pt = arg;
    return pt_gdb_add(pt->gdb, a, i) < 0 ? -1 : 0;
}

static int gdb_regions(struct perftramp *pt)
{
    for (size_t k = 0; k < pt->n_regions; k++)
        if (!pt->regions[k]->gdb_handle && pt_region_gdb_add(pt, pt->regions[k]) < 0)
            return -1;
    return 0;
}

int pt_replay(struct perftramp *pt, unsigned bits, bool strict)
{
    struct pt_map_names m = {0};
    if (pt->names_map_pid > 0 && !(pt->flags & PERFTRAMP_KEEP_NAMES))
        pt_map_names_load(&m, pt->names_map_pid);
    char *buf = malloc(PT_REPLAY_NAME_SIZE);
    int r = buf ? replay(pt, bits, strict, &m, buf) : (errno = ENOMEM, -1);
    int e = errno;
    free(buf);
    pt_map_names_free(&m);
    errno = e;
    return r;
}

static int replay(struct perftramp *pt, unsigned bits, bool strict, const struct pt_map_names *m, char *buf)
{
    if ((bits & PERFTRAMP_UNWIND) && pt_output_on(pt, PERFTRAMP_UNWIND) && replay_unwind(pt, strict) < 0) {
        if (strict)
            return -1;
        pt_output_fail(pt, PERFTRAMP_UNWIND, errno);
    }
    if ((bits & PERFTRAMP_GDB) && pt_output_on(pt, PERFTRAMP_GDB) &&
        (pt_names_fill(pt, m) < 0 || pt_for_each_live(&pt->slots, gdb_slot, pt) != 0 || gdb_regions(pt) < 0)) {
        if (strict)
            return -1;
        pt_output_fail(pt, PERFTRAMP_GDB, errno);
    }
    unsigned files = bits & (PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP);
    if (!files)
        return 0;
    struct replay r = {.pt = pt, .bits = files, .strict = strict, .m = m, .buf = buf};
    /* every region above the last slot: no region ends at UINTPTR_MAX */
    if (pt_for_each_live(&pt->slots, replay_slot, &r) != 0 || regions_below(&r, UINTPTR_MAX) < 0) {
        errno = r.error ? r.error : EIO;
        return -1;
    }
    return 0;
}

/* PERFTRAMP_ELF has nothing to replay: code cannot move, so only arenas
 * made after it is enabled are files (perftramp.h, perftramp_set_outputs) */
static const unsigned pt_close_order[] = {PERFTRAMP_ELF, PERFTRAMP_GDB, PERFTRAMP_UNWIND, PERFTRAMP_JITDUMP,
                                          PERFTRAMP_PERF_MAP};
static const unsigned pt_open_order[] = {PERFTRAMP_PERF_MAP, PERFTRAMP_JITDUMP, PERFTRAMP_UNWIND, PERFTRAMP_GDB,
                                         PERFTRAMP_ELF};
#define PT_N_ORDER (sizeof pt_open_order / sizeof pt_open_order[0])

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
    for (size_t k = 0; k < PT_N_ORDER; k++)
        if ((enable & pt_close_order[k]) && (pt->outputs & pt_close_order[k]))
            pt_output_close(pt, pt_close_order[k]);
    unsigned opened = 0;
    int e = 0;
    for (size_t k = 0; k < PT_N_ORDER && !e; k++) {
        unsigned bit = pt_open_order[k];
        if (!(enable & bit))
            continue;
        if (pt_output_open(pt, bit) < 0)
            e = errno ? errno : EIO;
        else
            opened |= bit;
    }
    /* slots that keep no name: our perf map, when it was on before this
     * call, names those wrapped while it was */
    pid_t map_pid = pt->names_map_pid;
    if (active & PERFTRAMP_PERF_MAP)
        pt->names_map_pid = pt->pid;
    if (!e && opened && pt_replay(pt, opened, true) < 0)
        e = errno ? errno : EIO;
    pt->names_map_pid = map_pid;
    if (e) {
        for (size_t k = 0; k < PT_N_ORDER; k++)
            if (opened & pt_close_order[k])
                pt_output_close(pt, pt_close_order[k]);
        for (int i = 0; i < PT_N_OUTPUTS; i++)
            atomic_store(&pt->output_error[i], saved[i]);
        drop_unneeded_names(pt);
        errno = e;
        return -1;
    }
    for (size_t k = 0; k < PT_N_ORDER; k++)
        if ((pt->outputs & ~want) & pt_close_order[k])
            pt_output_close(pt, pt_close_order[k]);
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
