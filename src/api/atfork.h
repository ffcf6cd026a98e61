/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_ATFORK: one pthread_atfork registration for every context
 * that asked for it.  Knows nothing of a context but its lock and what to
 * run in the child. */
#ifndef PERFTRAMP_ATFORK_H
#define PERFTRAMP_ATFORK_H

#include <pthread.h>

typedef void (*pt_atfork_child_fn)(void *ctx);

/* Adds ctx: its lock is held across every fork, and child(ctx) runs in
 * the child after the lock is released there.  -1 with errno. */
int pt_atfork_register(void *ctx, pthread_mutex_t *lock, pt_atfork_child_fn child);
/* Removes ctx (no-op when absent).  Call without its lock held. */
void pt_atfork_unregister(void *ctx);

#endif
