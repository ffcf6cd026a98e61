/* SPDX-License-Identifier: MIT */
/* A bounded set of 64-bit keys, each with two 64-bit values: what the
 * jitdump validator remembers across records (code_index values, code
 * hashes) without growing with the file.  Once `max` keys are held it
 * stops remembering new ones and says so (pt_jd_seen_full). */
#ifndef PERFTRAMP_JITDUMP_SEEN_H
#define PERFTRAMP_JITDUMP_SEEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_jd_seen {
    uint64_t *keys, *a, *b;
    uint8_t *used;
    size_t cap, n, max;
    bool full;
};

void pt_jd_seen_init(struct pt_jd_seen *s, size_t max);
void pt_jd_seen_free(struct pt_jd_seen *s);
/* Looks `key` up: returns true with its values in *a, *b when present;
 * otherwise inserts it with (a_new, b_new) when there is room and returns
 * false. */
bool pt_jd_seen_check(struct pt_jd_seen *s, uint64_t key, uint64_t a_new, uint64_t b_new, uint64_t *a, uint64_t *b);

#endif
