/* SPDX-License-Identifier: MIT */
/* API layer: reading a caller's struct of an older or newer size (the
 * options and published code), so the ABI can grow (docs/abi.md). */
#include "api/sized.h"

#include <errno.h>
#include <stdint.h>
#include <string.h>

int pt_sized_read(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size)
{
    if (!src || src_size < min_size) {
        errno = EINVAL;
        return -1;
    }
    const uint8_t *s = src;
    /* fields this library does not know must be zero */
    for (size_t i = dst_size; i < src_size; i++) {
        if (s[i]) {
            errno = EINVAL;
            return -1;
        }
    }
    size_t n = src_size < dst_size ? src_size : dst_size;
    memcpy(dst, src, n);
    memset((uint8_t *)dst + n, 0, dst_size - n);
    return 0;
}
