/* SPDX-License-Identifier: MIT */
/* The live blocks of a code backend whose mappings a fork must part (the
 * double map, ELF arena files), linked through the blocks themselves so
 * that adding one allocates nothing.  The backend's fork handlers hold
 * `lock` from prepare to parent/child and walk `head`. */
#ifndef PERFTRAMP_LIVE_BLOCKS_H
#define PERFTRAMP_LIVE_BLOCKS_H

#include "mem/codemem.h"

#include <pthread.h>

struct pt_live_blocks {
    pthread_mutex_t lock;
    struct pt_code_block *head;
};
#define PT_LIVE_BLOCKS_INIT {PTHREAD_MUTEX_INITIALIZER, NULL}

void pt_live_add(struct pt_live_blocks *l, struct pt_code_block *b);
void pt_live_remove(struct pt_live_blocks *l, struct pt_code_block *b);

#endif
