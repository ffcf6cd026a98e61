/* SPDX-License-Identifier: MIT */
/* API layer: the public calls open, wrap, release, output errors,
 * after-fork and close; the outputs are reached through api/output_state.c. */
#include "config.h"

#include "api/atfork.h"
#include "api/context.h"
#include "api/output_table.h"
#include "emit/eh_frame.h"
#include "mem/icache.h"
#include "outputs/outputs.h"
#include "outputs/perf_name.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

/* Slot spacing.  Dense: the code's size, rounded to the table's
 * code_align (32 B on x86-64): slots packed in page arenas.  Wide: in
 * jitdump mode perf maps [code, ALIGN8(code_size) + mapped_size) per
 * trampoline, and those ranges must not overlap; the slots cannot move
 * later, so a context that may want a jitdump with unwind info is spaced
 * so from the start (pt->wide).  A dense context's jitdump, switched on
 * later, has no UNWINDING_INFO for its trampolines (perftramp.h). */
static int compute_stride(struct perftramp *pt, size_t *stride)
{
    *stride = round_up(pt->layout.size, pt->arch->code_align);
    if (pt->wide) {
        struct pt_buf blob;
        size_t eh_size;
        pt_buf_init(&blob, pt->arch->big_endian);
        int r = pt_eh_jitdump_blob(&blob, &pt->layout, &eh_size);
        size_t span = round_up(pt->layout.size, 8) + blob.len;
        pt_buf_free(&blob);
        if (r < 0)
            return -1;
        if (span > *stride)
            *stride = round_up(span, pt->arch->code_align);
    }
    return 0;
}

static void destroy(struct perftramp *pt)
{
    pt_regions_free(pt);
    pt_slots_destroy(&pt->slots);
    if (pt->elf_open)
        pt_elf_dir_close(&pt->elf);
    free(pt->elf_dir_opt);
    free(pt->jitdump_dir);
    pthread_mutex_destroy(&pt->lock);
    free(pt);
}

static void before_fork(void *ctx);
static void child_after_fork(void *ctx);

perftramp *perftramp_open_sized(const struct perftramp_options *opts, size_t opts_size)
{
    struct pt_options read;
    if (pt_options_read(&read, opts, opts_size) < 0)
        return NULL;
    const struct perftramp_options o = read.pub;
    const struct pt_arch *arch = pt_arch_host();
    if (!arch) {
        errno = ENOTSUP;
        return NULL;
    }
    struct perftramp *pt = calloc(1, sizeof *pt);
    if (!pt) {
        errno = ENOMEM;
        return NULL;
    }
    if (pthread_mutex_init(&pt->lock, NULL) != 0) {
        free(pt);
        errno = ENOMEM;
        return NULL;
    }
    pt->arch = arch;
    pt->outputs = o.outputs;
    pt->flags = o.flags;
    pt->pid = getpid();
    pt_tag_seed(pt);
    int e = 0;
    size_t stride;
    pt->wide = (o.outputs & pt_output_bits_with(PT_OUT_WIDE_SLOTS)) || (o.flags & (PERFTRAMP_WIDE_SLOTS | PERFTRAMP_SIGNAL));
    /* room for the in-arena .eh_frame always, built at once only for an
     * output that reads it (else when one is switched on: untouched, the
     * room costs address space, no memory); a name copy where nothing
     * else gives a later replay the name (pt_keep_names) */
    bool eh_now = (o.outputs & pt_output_bits_with(PT_OUT_READS_EH)) != 0;
    pt->names_read_by = pt_output_bits_with(PT_OUT_READS_NAMES);
    pt->names_source = pt_output_bits_with(PT_OUT_NAMES_SOURCE);
    pt->names_map_bytes = -1;
    if (pt_layout_build(&pt->layout, arch, NULL) < 0 || compute_stride(pt, &stride) < 0 ||
        pt_slots_init(&pt->slots, arch, &pt->layout, stride, true, eh_now, false) < 0) {
        e = errno;
        goto fail;
    }
    pt_near_init(pt, o.flags);
    const char *dir = o.jitdump_dir;
    if (dir && *dir && !(pt->jitdump_dir = strdup(dir))) {
        e = ENOMEM;
        goto fail;
    }
    if (o.elf_dir && *o.elf_dir && !(pt->elf_dir_opt = strdup(o.elf_dir))) {
        e = ENOMEM;
        goto fail;
    }

    unsigned opened = 0;
    for (size_t k = 0; k < pt_n_output_rows; k++) {
        unsigned bit = pt_output_rows[k].bit;
        if (!(o.outputs & bit))
            continue;
        if (pt_output_open(pt, bit) < 0) {
            e = errno ? errno : EIO;
            if (e == ENOTSUP && (read.from_all & bit)) { /* "all": what the platform has */
                pt->outputs |= bit;
                pt_output_fail(pt, bit, ENOTSUP);
                opened |= bit;
                e = 0;
                continue;
            }
            pt_outputs_close(pt, opened, NULL);
            goto fail;
        }
        opened |= bit; /* a refused file is opened too: disabled, its errno recorded */
    }
    pt_names_map_note(pt);
    if ((o.flags & PERFTRAMP_ATFORK) && pt_atfork_register(pt, &pt->lock, before_fork, child_after_fork) < 0) {
        e = errno;
        pt_outputs_close(pt, opened, NULL);
        goto fail;
    }
    if ((o.flags & PERFTRAMP_SIGNAL) && pt_signal_start(pt, o.signal) < 0) {
        e = errno;
        if (o.flags & PERFTRAMP_ATFORK)
            pt_atfork_unregister(pt);
        pt_outputs_close(pt, opened, NULL);
        goto fail;
    }
    return pt;
fail:
    destroy(pt);
    errno = e;
    return NULL;
}

/* The function behind the perftramp_open macro's name, for callers that
 * cannot pass a size: it reads the struct as 0.1 defined it. */
perftramp *(perftramp_open)(const struct perftramp_options *opts)
{
    return perftramp_open_sized(opts, pt_options_size_0_1);
}

static void write_child_files(struct perftramp *pt);

/* Slot i of a keeps the name record rec (pt_slot_name_size bytes; NULL:
 * none): false when there is none, or no table to hold it (rec freed; an
 * output that wanted it shows the placeholder). */
static bool keep_name(struct pt_arena *a, size_t i, char *rec, const char *name, const char *file, unsigned line)
{
    if (!rec)
        return false;
    if (!a->names && !(a->names = calloc(a->n_slots, sizeof *a->names))) {
        free(rec);
        return false;
    }
    pt_slot_name_write(rec, name, file, line);
    a->names[i] = rec;
    return true;
}

perftramp_fn perftramp_wrap(perftramp *pt, perftramp_fn target, const char *name)
{
    return perftramp_wrap_at(pt, target, name, NULL, 0);
}

perftramp_fn perftramp_wrap_at(perftramp *pt, perftramp_fn target, const char *name, const char *file,
                               unsigned line)
{
    if (!pt || !target || !name) {
        errno = EINVAL;
        return NULL;
    }
    if (!file || !line)
        file = NULL, line = 0;
    /* "" is shown as [anonymous@0x<address>], known once the slot is */
    bool anonymous = *name == 0;
    /* PERFTRAMP_ATFORK: a forked child's first wrap resumes the switch
     * (without it the child's outputs would still be the parent's files
     * until perftramp_after_fork_child); a failure leaves the switch off */
    if (pt->signal_slot && (pt->flags & PERFTRAMP_ATFORK))
        (void)pt_signal_after_fork(pt);
    pthread_mutex_lock(&pt->lock);
    if (pt->fork_pending)
        write_child_files(pt); /* PERFTRAMP_ATFORK: the child's first wrap */
    /* a name kept for later replays (pt_keep_names), allocated before
     * anything changes: a failed wrap leaves nothing */
    char *rec = NULL;
    if (pt_keep_names(pt) &&
        !(rec = malloc(pt_slot_name_size(anonymous ? PT_ANON_NAME_SIZE : strlen(name), file, line)))) {
        pthread_mutex_unlock(&pt->lock);
        errno = ENOMEM;
        return NULL;
    }
    struct pt_arena *a;
    size_t i;
    bool new_arena;
    if (pt_slot_alloc(&pt->slots, &a, &i, &new_arena) < 0) {
        int e = errno;
        pthread_mutex_unlock(&pt->lock);
        free(rec);
        errno = e;
        return NULL;
    }
    uintptr_t x = pt_slot_x(&pt->slots, a, i);
    char anon[PT_ANON_NAME_SIZE];
    if (anonymous)
        name = pt_anon_name(anon, x);
    bool kept = keep_name(a, i, rec, name, file, line);
    uint8_t *w = pt_slot_w(&pt->slots, a, i);
    /* the layout chosen reaches the target: this write cannot fail */
    (void)pt_layout_write_at(pt_near_choose(pt, x, (uintptr_t)target), w, x, (uint64_t)(uintptr_t)target,
                             pt_tag_next(pt));
    pt_icache_flush(pt->arch, x, pt->layout.size);
    a->live_bits[i / 64] |= 1ull << (i % 64);
    a->live++;

    struct pt_tramp t = {.addr = x, .code = w, .size = pt->layout.size, .name = name, .file = file, .line = line};
    pt_outputs_slot_added(pt, a, i, new_arena, &t);
    /* the perf map that was to name it at a later replay failed on its
     * line: a copy after all, as memory allows (the wrap has succeeded) */
    if (!kept && pt_keep_names(pt))
        (void)keep_name(a, i, malloc(pt_slot_name_size(strlen(name), file, line)), name, file, line);
    pthread_mutex_unlock(&pt->lock);
    return (perftramp_fn)x;
}

int perftramp_release(perftramp *pt, perftramp_fn tramp)
{
    if (!pt || !tramp) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&pt->lock);
    size_t i;
    struct pt_arena *a = pt_arena_of(&pt->slots, (uintptr_t)tramp, &i);
    if (!a || i >= a->high_water || !pt_slot_live(a, i)) {
        pthread_mutex_unlock(&pt->lock);
        errno = EINVAL;
        return -1;
    }
    a->live_bits[i / 64] &= ~(1ull << (i % 64));
    a->live--;
    pt_outputs_slot_removed(pt, a, i);
    if (a->names) {
        free(a->names[i]);
        a->names[i] = NULL;
    }
    pt_slot_free(&pt->slots, a, i);
    if (pt_arena_spent(a)) {
        /* an ELF arena nothing will run again: unmapped, its file stays */
        pt_outputs_arena_removed(pt, a);
        pt_arena_retire(&pt->slots, a);
    }
    pthread_mutex_unlock(&pt->lock);
    return 0;
}

int perftramp_output_error(perftramp *pt, unsigned output)
{
    int i = pt_output_index(output);
    if (!pt || i < 0) {
        errno = EINVAL;
        return -1;
    }
    return atomic_load(&pt->output_error[i]);
}

/* The child's own map and dump: opened, then fed every trampoline live in
 * the child.  Called single-threaded or with the lock held. */
static void write_child_files(struct perftramp *pt)
{
    pt->fork_pending = false;
    /* slots that keep no name: the parent's perf map still names them
     * (pt->names_map_pid) until the child's own holds them all */
    unsigned reopened = pt_outputs_reopen(pt);
    /* the child's files hold every trampoline and region live in the child */
    if (reopened)
        pt_replay(pt, reopened, false);
    pt_names_map_note(pt);
}

/* The child is single-threaded: a lock held by a vanished thread at fork
 * time must not deadlock it. */
static void child_starts(struct perftramp *pt)
{
    pthread_mutex_init(&pt->lock, NULL);
    pt->pid = getpid();
    /* slots that keep no name: the parent's map names them as it was at
     * the fork (PERFTRAMP_ATFORK), else as it is now; not once the child's
     * own map has them (a second call) */
    if (pt->names_map_pid != pt->pid)
        pt->names_map_bytes = (pt->flags & PERFTRAMP_ATFORK) ? pt->names_map_bytes_at_fork : pt_names_map_size(pt);
    if (pt->elf_open) {
        /* the parent's ELF arenas are the child's private copies now
         * (elf_arena.c's fork handlers): the child's names go to files of
         * its own, from a new arena */
        pt_elf_dir_set_pid(&pt->elf, pt->pid);
        if (pt->slots.filling && pt->slots.filling->mem.elf)
            pt->slots.filling = NULL;
    }
}

int perftramp_after_fork_child(perftramp *pt)
{
    if (!pt) {
        errno = EINVAL;
        return -1;
    }
    child_starts(pt);
    write_child_files(pt);
    if (pt->signal_slot && pt_signal_after_fork(pt) < 0)
        return -1;
    return 0;
}

/* PERFTRAMP_ATFORK, in the parent with the lock held, at each fork */
static void before_fork(void *ctx)
{
    struct perftramp *pt = ctx;
    pt->names_map_bytes_at_fork = pt_names_map_size(pt);
}

/* PERFTRAMP_ATFORK, in the child: nothing is written until the child
 * wraps (or calls perftramp_after_fork_child), so a child that only
 * execs or exits costs no I/O, however many trampolines are live. */
static void child_after_fork(void *ctx)
{
    struct perftramp *pt = ctx;
    child_starts(pt);
    pt->fork_pending = pt_output_on(pt, pt_outputs_with_reopen());
}

int perftramp_close(perftramp *pt)
{
    if (!pt) {
        errno = EINVAL;
        return -1;
    }
    if (pt->flags & PERFTRAMP_SIGNAL)
        pt_signal_stop(pt);
    if (pt->flags & PERFTRAMP_ATFORK)
        pt_atfork_unregister(pt);
    int e = 0;
    pthread_mutex_lock(&pt->lock);
    pt_outputs_close(pt, pt->outputs, &e);
    pthread_mutex_unlock(&pt->lock);
    destroy(pt);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

int perftramp_set_name_callback(perftramp *pt, perftramp_name_fn fn, void *user_data)
{
    if (!pt) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&pt->lock);
    pt->name_fn = fn;
    pt->name_data = user_data;
    pthread_mutex_unlock(&pt->lock);
    return 0;
}

const char *perftramp_version(void)
{
    return PACKAGE_VERSION;
}
