/* SPDX-License-Identifier: MIT */
/* Mem layer: which code memory this process uses: libffi's closures when they are
 * code we can write, else perftramp's own double mapping.  Decided once,
 * at the first block, because the answer is a property of the libffi the
 * process loaded: it cannot change while the process runs (nor across
 * fork). */
#include "mem/codemem.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>

static const struct pt_code_backend *const backends[] = {&pt_code_ffi, &pt_code_doublemap, &pt_code_elf};
#define N_BACKENDS (sizeof backends / sizeof backends[0])

static _Atomic(const struct pt_code_backend *) chosen;

/* Threads that race here all probe and store the same answer; a probe
 * that could not decide (ENOMEM) stores nothing, so the next block asks
 * again. */
static const struct pt_code_backend *choose(void)
{
    const struct pt_code_backend *b = atomic_load_explicit(&chosen, memory_order_acquire);
    if (b)
        return b;
    int r = pt_ffi_closures_are_code();
    if (r < 0)
        return NULL;
    b = r ? &pt_code_ffi : &pt_code_doublemap;
    atomic_store_explicit(&chosen, b, memory_order_release);
    return b;
}

static void fork_prepare(void)
{
    for (size_t i = N_BACKENDS; i-- > 0;)
        if (backends[i]->fork_prepare)
            backends[i]->fork_prepare();
}

static void fork_parent(void)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i]->fork_parent)
            backends[i]->fork_parent();
}

static void fork_child(void)
{
    for (size_t i = 0; i < N_BACKENDS; i++)
        if (backends[i]->fork_child)
            backends[i]->fork_child();
}

static void install(void)
{
    /* Fails only for lack of memory; then a fork leaves shared code memory
     * shared, as it would without this (nothing to report to). */
    (void)pthread_atfork(fork_prepare, fork_parent, fork_child);
}

void pt_code_init(void)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, install);
}

int pt_code_alloc(struct pt_code_block *b, size_t bytes, size_t align)
{
    pt_code_init();
    const struct pt_code_backend *backend = choose();
    if (!backend)
        return -1;
    return backend->alloc(b, bytes, align);
}

void pt_code_free(struct pt_code_block *b)
{
    if (b->backend)
        b->backend->free(b);
    b->backend = NULL;
}

const struct pt_code_backend *pt_code_backend_chosen(void)
{
    return atomic_load_explicit(&chosen, memory_order_acquire);
}

void pt_code_choice_reset(void)
{
    atomic_store_explicit(&chosen, NULL, memory_order_release);
}
