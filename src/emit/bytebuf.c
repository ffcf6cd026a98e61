/* SPDX-License-Identifier: MIT */
/* Emit layer: a growable or fixed byte buffer in either byte order, with
 * the LEB128 and DWARF pointer writers the emitters share. */
#include "emit/bytebuf.h"

#include <stdlib.h>
#include <string.h>

void pt_buf_init(struct pt_buf *b, bool big_endian)
{
    *b = (struct pt_buf){.big_endian = big_endian};
}

void pt_buf_init_fixed(struct pt_buf *b, void *storage, size_t cap, bool big_endian)
{
    *b = (struct pt_buf){.data = storage, .cap = cap, .big_endian = big_endian, .fixed = true};
}

void pt_buf_free(struct pt_buf *b)
{
    if (!b->fixed)
        free(b->data);
    b->data = NULL;
    b->len = b->cap = 0;
}

bool pt_buf_reserve(struct pt_buf *b, size_t more)
{
    if (b->failed)
        return false;
    if (more <= b->cap - b->len)
        return true;
    if (b->fixed || more > SIZE_MAX / 2 - b->len) {
        b->failed = true;
        return false;
    }
    size_t cap = b->cap ? b->cap : 64;
    while (cap - b->len < more)
        cap *= 2;
    uint8_t *p = realloc(b->data, cap);
    if (!p) {
        b->failed = true;
        return false;
    }
    b->data = p;
    b->cap = cap;
    return true;
}

void pt_buf_put(struct pt_buf *b, const void *p, size_t n)
{
    if (n == 0 || !pt_buf_reserve(b, n))
        return;
    memcpy(b->data + b->len, p, n);
    b->len += n;
}

/* The fixed-size stores below are one load/store (plus a byte swap when
 * the requested order is not the host's) instead of byte loops and a
 * memcpy call: they are the inner loop of every .eh_frame and ELF image
 * (bench: ~half the instructions of a PERFTRAMP_GDB wrap). */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
#define PT_HOST_BIG_ENDIAN true
#else
#define PT_HOST_BIG_ENDIAN false
#endif

void pt_buf_u8(struct pt_buf *b, uint8_t v)
{
    if (!pt_buf_reserve(b, 1))
        return;
    b->data[b->len++] = v;
}

void pt_buf_u16(struct pt_buf *b, uint16_t v)
{
    if (!pt_buf_reserve(b, 2))
        return;
    if (b->big_endian != PT_HOST_BIG_ENDIAN)
        v = __builtin_bswap16(v);
    memcpy(b->data + b->len, &v, 2);
    b->len += 2;
}

void pt_store_u32(uint8_t *p, uint32_t v, bool big_endian)
{
    if (big_endian != PT_HOST_BIG_ENDIAN)
        v = __builtin_bswap32(v);
    memcpy(p, &v, 4);
}

void pt_store_u64(uint8_t *p, uint64_t v, bool big_endian)
{
    if (big_endian != PT_HOST_BIG_ENDIAN)
        v = __builtin_bswap64(v);
    memcpy(p, &v, 8);
}

void pt_store_addr(uint8_t *p, uint64_t v, unsigned size, bool big_endian)
{
    if (size == 8)
        pt_store_u64(p, v, big_endian);
    else
        pt_store_u32(p, (uint32_t)v, big_endian);
}

uint32_t pt_load_u32(const uint8_t *p, bool big_endian)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return big_endian != PT_HOST_BIG_ENDIAN ? __builtin_bswap32(v) : v;
}

void pt_buf_u32(struct pt_buf *b, uint32_t v)
{
    if (!pt_buf_reserve(b, 4))
        return;
    pt_store_u32(b->data + b->len, v, b->big_endian);
    b->len += 4;
}

void pt_buf_u64(struct pt_buf *b, uint64_t v)
{
    if (!pt_buf_reserve(b, 8))
        return;
    pt_store_u64(b->data + b->len, v, b->big_endian);
    b->len += 8;
}

void pt_buf_addr(struct pt_buf *b, uint64_t v, unsigned size)
{
    if (size == 8)
        pt_buf_u64(b, v);
    else
        pt_buf_u32(b, (uint32_t)v);
}

size_t pt_uleb_encode(uint8_t out[10], uint64_t v)
{
    size_t n = 0;
    do {
        uint8_t byte = v & 0x7f;
        v >>= 7;
        out[n++] = (uint8_t)(byte | (v ? 0x80 : 0));
    } while (v);
    return n;
}

size_t pt_sleb_encode(uint8_t out[10], int64_t v)
{
    size_t n = 0;
    for (;;) {
        uint8_t byte = (uint8_t)(v & 0x7f);
        /* arithmetic shift, written portably */
        v = v < 0 ? ~(~v >> 7) : v >> 7;
        bool done = (v == 0 && !(byte & 0x40)) || (v == -1 && (byte & 0x40));
        out[n++] = (uint8_t)(byte | (done ? 0 : 0x80));
        if (done)
            return n;
    }
}

void pt_buf_uleb(struct pt_buf *b, uint64_t v)
{
    uint8_t p[10];
    pt_buf_put(b, p, pt_uleb_encode(p, v));
}

void pt_buf_sleb(struct pt_buf *b, int64_t v)
{
    uint8_t p[10];
    pt_buf_put(b, p, pt_sleb_encode(p, v));
}

void pt_buf_set_u32(struct pt_buf *b, size_t at, uint32_t v)
{
    if (!b->failed && at + 4 <= b->len)
        pt_store_u32(b->data + at, v, b->big_endian);
}
