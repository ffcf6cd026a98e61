/* SPDX-License-Identifier: MIT */
/* Mem layer: the live blocks of a code backend whose mappings a fork
 * must part (the double map, ELF arena files), linked through the blocks. */
#include "mem/live_blocks.h"

void pt_live_add(struct pt_live_blocks *l, struct pt_code_block *b)
{
    pthread_mutex_lock(&l->lock);
    b->live_prev = NULL;
    b->live_next = l->head;
    if (l->head)
        l->head->live_prev = b;
    l->head = b;
    pthread_mutex_unlock(&l->lock);
}

void pt_live_remove(struct pt_live_blocks *l, struct pt_code_block *b)
{
    pthread_mutex_lock(&l->lock);
    if (b->live_prev)
        b->live_prev->live_next = b->live_next;
    else
        l->head = b->live_next;
    if (b->live_next)
        b->live_next->live_prev = b->live_prev;
    b->live_prev = b->live_next = NULL;
    pthread_mutex_unlock(&l->lock);
}
