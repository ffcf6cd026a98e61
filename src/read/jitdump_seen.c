/* SPDX-License-Identifier: MIT */
/* Read layer: bounded key sets for the jitdump validator (jitdump_seen.h): open
 * addressing, linear probing, grown by doubling up to the bound. */
#include "read/jitdump_seen.h"

#include <stdlib.h>
#include <string.h>

void pt_jd_seen_init(struct pt_jd_seen *s, size_t max)
{
    memset(s, 0, sizeof *s);
    s->max = max;
}

void pt_jd_seen_free(struct pt_jd_seen *s)
{
    free(s->keys);
    free(s->a);
    free(s->b);
    free(s->used);
    memset(s, 0, sizeof *s);
}

static size_t slot_of(uint64_t key, size_t cap)
{
    key ^= key >> 33;
    key *= 0xff51afd7ed558ccdull;
    key ^= key >> 33;
    return (size_t)key & (cap - 1);
}

static void put(struct pt_jd_seen *s, uint64_t key, uint64_t a, uint64_t b)
{
    size_t i = slot_of(key, s->cap);
    while (s->used[i])
        i = (i + 1) & (s->cap - 1);
    s->used[i] = 1;
    s->keys[i] = key;
    s->a[i] = a;
    s->b[i] = b;
    s->n++;
}

static bool grow(struct pt_jd_seen *s)
{
    size_t cap = s->cap ? s->cap * 2 : 1024;
    struct pt_jd_seen n = {.cap = cap, .max = s->max};
    n.keys = malloc(cap * sizeof *n.keys);
    n.a = malloc(cap * sizeof *n.a);
    n.b = malloc(cap * sizeof *n.b);
    n.used = calloc(cap, 1);
    if (!n.keys || !n.a || !n.b || !n.used) {
        pt_jd_seen_free(&n);
        return false;
    }
    for (size_t i = 0; i < s->cap; i++)
        if (s->used[i])
            put(&n, s->keys[i], s->a[i], s->b[i]);
    pt_jd_seen_free(s);
    *s = n;
    return true;
}

bool pt_jd_seen_check(struct pt_jd_seen *s, uint64_t key, uint64_t a_new, uint64_t b_new, uint64_t *a, uint64_t *b)
{
    if (s->cap) {
        for (size_t i = slot_of(key, s->cap); s->used[i]; i = (i + 1) & (s->cap - 1)) {
            if (s->keys[i] == key) {
                *a = s->a[i];
                *b = s->b[i];
                return true;
            }
        }
    }
    if (s->n >= s->max) {
        s->full = true;
        return false;
    }
    /* keep the load under 3/4 */
    if ((s->n + 1) * 4 > s->cap * 3 && !grow(s)) {
        s->full = true;
        return false;
    }
    put(s, key, a_new, b_new);
    return false;
}
