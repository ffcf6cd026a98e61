/* SPDX-License-Identifier: MIT */
/* The public API: open, wrap, release, output errors, after-fork, close. */
#include "config.h"

#include "atfork.h"
#include "context.h"
#include "eh_frame.h"
#include "outputs.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const unsigned pt_output_bits[4] = {PERFTRAMP_PERF_MAP, PERFTRAMP_JITDUMP, PERFTRAMP_UNWIND,
                                           PERFTRAMP_GDB};

int pt_output_index(unsigned bit)
{
    for (int i = 0; i < 4; i++)
        if (pt_output_bits[i] == bit)
            return i;
    return -1;
}

void pt_output_fail(struct perftramp *pt, unsigned bit, int e)
{
    int i = pt_output_index(bit);
    int expected = 0;
    if (i < 0)
        return;
    atomic_compare_exchange_strong(&pt->output_error[i], &expected, e ? e : EIO);
    atomic_fetch_and(&pt->active, ~bit);
}

static size_t round_up(size_t v, size_t to)
{
    return (v + to - 1) / to * to;
}

/* Slot spacing: in jitdump mode perf maps [code, ALIGN8(code_size) +
 * mapped_size) per trampoline, and those ranges must not overlap. */
static int compute_stride(struct perftramp *pt)
{
    pt->stride = round_up(pt->layout.size, pt->arch->code_align);
    if (pt->outputs & PERFTRAMP_JITDUMP) {
        struct pt_buf blob;
        size_t eh_size;
        pt_buf_init(&blob, pt->arch->big_endian);
        int r = pt_eh_jitdump_blob(&blob, &pt->layout, &eh_size);
        size_t span = round_up(pt->layout.size, 8) + blob.len;
        pt_buf_free(&blob);
        if (r < 0)
            return -1;
        if (span > pt->stride)
            pt->stride = round_up(span, pt->arch->code_align);
    }
    return 0;
}

static void close_outputs(struct perftramp *pt, unsigned opened, int *first_error)
{
    int e = 0;
    if ((opened & PERFTRAMP_GDB))
        pt_gdb_close(pt);
    if ((opened & PERFTRAMP_UNWIND))
        pt_unwind_close(pt);
    if ((opened & PERFTRAMP_JITDUMP) && pt_jitdump_close(pt) < 0 && !e)
        e = errno;
    if ((opened & PERFTRAMP_PERF_MAP) && pt_perfmap_close(pt) < 0 && !e)
        e = errno;
    if (first_error)
        *first_error = e;
}

static void destroy(struct perftramp *pt)
{
    pt_arenas_destroy(pt);
    free(pt->jitdump_dir);
    pthread_mutex_destroy(&pt->lock);
    free(pt);
}

perftramp *perftramp_open(const struct perftramp_options *opts)
{
    struct perftramp_options o = {0};
    if (opts) {
        o = *opts;
    } else if (pt_parse_outputs(getenv("PERFTRAMP"), &o.outputs) < 0) {
        return NULL;
    }
    if ((o.outputs & ~PERFTRAMP_ALL) || (o.flags & ~PERFTRAMP_ATFORK)) {
        errno = EINVAL;
        return NULL;
    }
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
    pt->keep_names = o.outputs & (PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP | PERFTRAMP_GDB);
    pt->pid = getpid();
    pt_arenas_init(pt);
    pt_tag_seed(pt);
    int e = 0;
    if (pt_layout_build(&pt->layout, arch, NULL) < 0 || compute_stride(pt) < 0) {
        e = errno;
        goto fail;
    }
    const char *dir = o.jitdump_dir ? o.jitdump_dir : getenv("JITDUMPDIR");
    if (dir && *dir && !(pt->jitdump_dir = strdup(dir))) {
        e = ENOMEM;
        goto fail;
    }

    static int (*const open_hook[4])(struct perftramp *) = {pt_perfmap_open, pt_jitdump_open, pt_unwind_open,
                                                             pt_gdb_open};
    unsigned opened = 0;
    for (int i = 0; i < 4; i++) {
        unsigned bit = pt_output_bits[i];
        if (!(o.outputs & bit))
            continue;
        if (open_hook[i](pt) < 0) {
            e = errno ? errno : EIO;
            close_outputs(pt, opened, NULL);
            goto fail;
        }
        opened |= bit;
        /* a hook that refused its file disabled itself (errno recorded) */
        if (!atomic_load(&pt->output_error[i]))
            atomic_fetch_or(&pt->active, bit);
    }
    if ((o.flags & PERFTRAMP_ATFORK) && pt_atfork_register(pt) < 0) {
        e = errno;
        close_outputs(pt, opened, NULL);
        goto fail;
    }
    return pt;
fail:
    destroy(pt);
    errno = e;
    return NULL;
}

perftramp_fn perftramp_wrap(perftramp *pt, perftramp_fn target, const char *name)
{
    if (!pt || !target || !name) {
        errno = EINVAL;
        return NULL;
    }
    char *copy = NULL;
    if (pt->keep_names && !(copy = strdup(name))) {
        errno = ENOMEM;
        return NULL;
    }
    pthread_mutex_lock(&pt->lock);
    struct pt_arena *a;
    size_t i;
    if (pt_slot_alloc(pt, &a, &i) < 0) {
        int e = errno;
        pthread_mutex_unlock(&pt->lock);
        free(copy);
        errno = e;
        return NULL;
    }
    uint8_t *w = pt_slot_w(pt, a, i);
    uintptr_t x = pt_slot_x(pt, a, i);
    pt_layout_write(&pt->layout, w, (uint64_t)(uintptr_t)target, pt_tag_next(pt));
    __builtin___clear_cache((char *)x, (char *)x + pt->layout.size);
    a->live_bits[i / 64] |= 1ull << (i % 64);
    a->live++;
    if (a->names)
        a->names[i] = copy;

    struct pt_tramp t = {.addr = x, .code = w, .size = pt->layout.size, .name = name};
    if (pt_output_on(pt, PERFTRAMP_PERF_MAP) && pt_perfmap_add(pt, &t) < 0)
        pt_output_fail(pt, PERFTRAMP_PERF_MAP, errno);
    if (pt_output_on(pt, PERFTRAMP_JITDUMP) && pt_jitdump_add(pt, &t) < 0)
        pt_output_fail(pt, PERFTRAMP_JITDUMP, errno);
    if (pt_output_on(pt, PERFTRAMP_GDB) && pt_gdb_add(pt, a, i) < 0)
        pt_output_fail(pt, PERFTRAMP_GDB, errno);
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
    struct pt_arena *a = pt_arena_of(pt, (uintptr_t)tramp, &i);
    if (!a || i >= a->high_water || !pt_slot_live(a, i)) {
        pthread_mutex_unlock(&pt->lock);
        errno = EINVAL;
        return -1;
    }
    a->live_bits[i / 64] &= ~(1ull << (i % 64));
    a->live--;
    if (pt_output_on(pt, PERFTRAMP_GDB) && pt_gdb_remove(pt, a, i) < 0)
        pt_output_fail(pt, PERFTRAMP_GDB, errno);
    if (a->names) {
        free(a->names[i]);
        a->names[i] = NULL;
    }
    pt_slot_free(pt, a, i);
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

int perftramp_after_fork_child(perftramp *pt)
{
    if (!pt) {
        errno = EINVAL;
        return -1;
    }
    /* The child is single-threaded: a lock held by a vanished thread at
     * fork time must not deadlock it. */
    pthread_mutex_init(&pt->lock, NULL);
    pt->pid = getpid();
    if (pt_output_on(pt, PERFTRAMP_PERF_MAP) && pt_perfmap_after_fork(pt) < 0)
        pt_output_fail(pt, PERFTRAMP_PERF_MAP, errno);
    if (pt_output_on(pt, PERFTRAMP_JITDUMP) && pt_jitdump_after_fork(pt) < 0)
        pt_output_fail(pt, PERFTRAMP_JITDUMP, errno);
    return 0;
}

int perftramp_close(perftramp *pt)
{
    if (!pt) {
        errno = EINVAL;
        return -1;
    }
    if (pt->flags & PERFTRAMP_ATFORK)
        pt_atfork_unregister(pt);
    int e = 0;
    pthread_mutex_lock(&pt->lock);
    close_outputs(pt, pt->outputs, &e);
    pthread_mutex_unlock(&pt->lock);
    destroy(pt);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

const char *perftramp_version(void)
{
    return PACKAGE_VERSION;
}
