/* SPDX-License-Identifier: MIT */
/* Outputs layer: a trampoline's name as the perf outputs write it
 * (control bytes as \xNN, long names cut on a UTF-8 boundary). */
#include "outputs/perf_name.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static size_t unit_len(unsigned char c)
{
    return (c < 0x20 || c == 0x7f) ? 4 : 1; /* "\xNN" or the byte itself */
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
     * (the two passes below cost ~2% of a CPython wrap, bench/python_create) */
    size_t len = 0;
    while (len <= PT_PERF_NAME_MAX && s[len] && unit_len(s[len]) == 1)
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
