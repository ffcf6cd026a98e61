/* SPDX-License-Identifier: MIT */
/* The size-safe growth rule for public structs (docs/abi.md, "Growing a
 * struct"): a caller passes a struct together with its size as the
 * caller's header defined it; the library reads only those bytes.
 * struct perftramp_options follows it, and so must every public struct
 * the library reads from a caller (struct perftramp_code, ...). */
#ifndef PERFTRAMP_SIZED_H
#define PERFTRAMP_SIZED_H

#include <stddef.h>

/* Reads a caller's struct of src_size bytes into the library's dst of
 * dst_size bytes:
 *   - src_size < min_size (smaller than the first released struct: no
 *     header ever had it): EINVAL;
 *   - an older, smaller struct: its bytes are copied, the fields it did
 *     not have are zero (their defaults);
 *   - a newer, larger struct: accepted only when every byte past dst_size
 *     is zero (a program asking for a feature this library does not have
 *     must fail, never be silently ignored): else EINVAL.
 * Never reads past src + src_size.  Returns 0, or -1 with errno. */
int pt_sized_read(void *dst, size_t dst_size, const void *src, size_t src_size, size_t min_size);

/* Where a struct ends if `member` is its last member. */
#define PT_SIZED_END(type, member) (offsetof(type, member) + sizeof(((type *)0)->member))

/* A public struct must have no tail padding: a field added later would
 * sit in it without changing sizeof, and an older library would ignore
 * it.  Check with _Static_assert(PT_SIZED_NO_TAIL(type, last), ...). */
#define PT_SIZED_NO_TAIL(type, last) (sizeof(type) == PT_SIZED_END(type, last))

#endif
