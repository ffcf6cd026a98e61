/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_ATFORK: contexts that want perftramp_after_fork_child() run
 * for them in every child, via one pthread_atfork registration. */
#ifndef PERFTRAMP_ATFORK_H
#define PERFTRAMP_ATFORK_H

struct perftramp;

/* Adds pt to the list; -1 with errno (ENOMEM) on failure. */
int pt_atfork_register(struct perftramp *pt);
/* Removes pt (no-op when absent).  Call without pt->lock held. */
void pt_atfork_unregister(struct perftramp *pt);

#endif
