/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_ATFORK: one pthread_atfork registration for every context
 * that asked for it.  Knows nothing of a context but its lock and what to
 * run in the child. */
#ifndef PERFTRAMP_ATFORK_H
#define PERFTRAMP_ATFORK_H

#include <pthread.h>

typedef void (*pt_atfork_fn)(void *ctx);

/* Adds ctx: its lock is held across every fork; before(ctx) runs in the
 * parent once it is taken (NULL: nothing), child(ctx) in the child after
 * it is released there.  -1 with errno. */
int pt_atfork_register(void *ctx, pthread_mutex_t *lock, pt_atfork_fn before, pt_atfork_fn child);
/* Removes ctx (no-op when absent).  Call without its lock held. */
void pt_atfork_unregister(void *ctx);

#endif
