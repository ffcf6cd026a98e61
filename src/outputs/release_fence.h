/* SPDX-License-Identifier: MIT */
/* The stores before it reach the file before the stores after it: for a
 * reader of a shared mapping in another process (perf, perftramp check)
 * and for a kill between them.  ThreadSanitizer models no fence (gcc
 * refuses one under -fsanitize=thread: -Wtsan), so its builds get a
 * compiler barrier, all a kill needs (a dying process's executed stores
 * are not lost; only their order as compiled matters). */
#ifndef PERFTRAMP_RELEASE_FENCE_H
#define PERFTRAMP_RELEASE_FENCE_H

#include <stdatomic.h>

static inline void pt_release_fence(void)
{
#ifdef __SANITIZE_THREAD__
    atomic_signal_fence(memory_order_release);
#else
    atomic_thread_fence(memory_order_release);
#endif
}

#endif
