/* SPDX-License-Identifier: MIT */
/* A growable byte buffer with the encodings DWARF needs, in either byte
 * order.  Allocation failure is sticky: check `failed` once at the end. */
#ifndef PERFTRAMP_BYTEBUF_H
#define PERFTRAMP_BYTEBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct pt_buf {
    uint8_t *data;
    size_t len, cap;
    bool big_endian;
    bool failed;      /* an allocation failed: contents are incomplete */
    bool fixed;       /* data is caller storage of size cap: never grows */
};

void pt_buf_init(struct pt_buf *b, bool big_endian);
/* Writes into caller storage; running out of room sets `failed`. */
void pt_buf_init_fixed(struct pt_buf *b, void *storage, size_t cap, bool big_endian);
void pt_buf_free(struct pt_buf *b);
bool pt_buf_reserve(struct pt_buf *b, size_t more);
void pt_buf_put(struct pt_buf *b, const void *p, size_t n);
void pt_buf_u8(struct pt_buf *b, uint8_t v);
void pt_buf_u16(struct pt_buf *b, uint16_t v);
void pt_buf_u32(struct pt_buf *b, uint32_t v);
void pt_buf_u64(struct pt_buf *b, uint64_t v);
/* An address of `size` bytes (4 or 8, the table's .addr_size): of 4, the
 * low half of v. */
void pt_buf_addr(struct pt_buf *b, uint64_t v, unsigned size);
void pt_buf_uleb(struct pt_buf *b, uint64_t v);
void pt_buf_sleb(struct pt_buf *b, int64_t v);
/* Overwrites 4 bytes at `at` (which must already be written). */
void pt_buf_set_u32(struct pt_buf *b, size_t at, uint32_t v);

/* Stores in a given byte order at p. */
void pt_store_u32(uint8_t *p, uint32_t v, bool big_endian);
void pt_store_u64(uint8_t *p, uint64_t v, bool big_endian);
void pt_store_addr(uint8_t *p, uint64_t v, unsigned size, bool big_endian);
uint32_t pt_load_u32(const uint8_t *p, bool big_endian);

/* LEB128 into a small array; returns the byte count (at most 10). */
size_t pt_uleb_encode(uint8_t out[10], uint64_t v);
size_t pt_sleb_encode(uint8_t out[10], int64_t v);

#endif
