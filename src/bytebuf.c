#include "bytebuf.h"

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

void pt_buf_u8(struct pt_buf *b, uint8_t v)
{
    pt_buf_put(b, &v, 1);
}

void pt_buf_u16(struct pt_buf *b, uint16_t v)
{
    uint8_t p[2];
    if (b->big_endian) {
        p[0] = (uint8_t)(v >> 8);
        p[1] = (uint8_t)v;
    } else {
        p[0] = (uint8_t)v;
        p[1] = (uint8_t)(v >> 8);
    }
    pt_buf_put(b, p, 2);
}

void pt_store_u32(uint8_t *p, uint32_t v, bool big_endian)
{
    for (int i = 0; i < 4; i++)
        p[big_endian ? 3 - i : i] = (uint8_t)(v >> (8 * i));
}

void pt_store_u64(uint8_t *p, uint64_t v, bool big_endian)
{
    for (int i = 0; i < 8; i++)
        p[big_endian ? 7 - i : i] = (uint8_t)(v >> (8 * i));
}

uint32_t pt_load_u32(const uint8_t *p, bool big_endian)
{
    uint32_t v = 0;
    for (int i = 0; i < 4; i++)
        v |= (uint32_t)p[big_endian ? 3 - i : i] << (8 * i);
    return v;
}

void pt_buf_u32(struct pt_buf *b, uint32_t v)
{
    uint8_t p[4];
    pt_store_u32(p, v, b->big_endian);
    pt_buf_put(b, p, 4);
}

void pt_buf_u64(struct pt_buf *b, uint64_t v)
{
    uint8_t p[8];
    pt_store_u64(p, v, b->big_endian);
    pt_buf_put(b, p, 8);
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
