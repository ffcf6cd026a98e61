/* SPDX-License-Identifier: MIT */
/* Outputs layer: a trampoline's name as the perf outputs write it
 * (control bytes as \xNN, long names cut on a UTF-8 boundary). */
#include "outputs/perf_name.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

/* 1 for a byte written as itself; 0 for NUL and the bytes written as
 * \xNN (C0 controls and DEL): one load a byte decides both. */
#define ROW(v) v, v, v, v, v, v, v, v, v, v, v, v, v, v, v, v
static const unsigned char plain[256] = {
    ROW(0), ROW(0),                                        /* 0x00-0x1f */
    ROW(1), ROW(1), ROW(1), ROW(1), ROW(1),                /* 0x20-0x6f */
    1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0,        /* 0x70-0x7f: DEL */
    ROW(1), ROW(1), ROW(1), ROW(1), ROW(1), ROW(1), ROW(1), ROW(1), /* UTF-8 */
};
#undef ROW

static size_t unit_len(unsigned char c)
{
    return plain[c] ? 1 : 4; /* "\xNN" or the byte itself */
}

static size_t put_unit(char *dst, unsigned char c)
{
    static const char hex[] = "0123456789abcdef";
    if (unit_len(c) == 1) {
        dst[0] = (char)c;
        return 1;
    }
    dst[0] = '\\';
    dst[1] = 'x';
    dst[2] = hex[c >> 4];
    dst[3] = hex[c & 15];
    return 4;
}

size_t pt_perf_name(char *dst, const char *name)
{
    const unsigned char *s = (const unsigned char *)name;
    /* the usual name, short with nothing to escape: one pass and a copy
     * (the two passes below cost ~2% of a CPython wrap, bench/python_create;
     * a table load a byte halved the loop's instructions again) */
    size_t len = 0;
    while (plain[s[len]])
        len++;
    if (len <= PT_PERF_NAME_MAX && !s[len]) {
        memcpy(dst, s, len);
        dst[len] = 0;
        return len;
    }
    size_t total = 0;
    for (const unsigned char *p = s; *p && total <= PT_PERF_NAME_MAX; p++)
        total += unit_len(*p);
    size_t limit = total <= PT_PERF_NAME_MAX ? PT_PERF_NAME_MAX : PT_PERF_NAME_MAX - (sizeof PT_PERF_NAME_CUT - 1);
    size_t n = 0;
    const unsigned char *p = s;
    /* whole units only: an escape is never split */
    for (; *p && n + unit_len(*p) <= limit; p++)
        n += put_unit(dst + n, *p);
    if (*p) {
        /* cut: never inside a UTF-8 sequence (continuation bytes are
         * 10xxxxxx; the lead byte is 11xxxxxx) */
        if ((*p & 0xc0) == 0x80) {
            while (n > 0 && ((unsigned char)dst[n - 1] & 0xc0) == 0x80)
                n--;
            if (n > 0 && ((unsigned char)dst[n - 1] & 0xc0) == 0xc0)
                n--;
        }
        memcpy(dst + n, PT_PERF_NAME_CUT, sizeof PT_PERF_NAME_CUT - 1);
        n += sizeof PT_PERF_NAME_CUT - 1;
    }
    dst[n] = 0;
    return n;
}

char *pt_anon_name(char *dst, uintptr_t addr)
{
    snprintf(dst, PT_ANON_NAME_SIZE, "[anonymous@0x%" PRIxPTR "]", addr);
    return dst;
}
