/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: the jitdump validator (and through it the .eh_frame
 * and .eh_frame_hdr decoders) on arbitrary bytes.  It must never crash,
 * never read out of bounds, and agree with itself: the error count it
 * returns equals the errors it reported.  Built by .ci/steps/50-fuzz.sh
 * with clang -fsanitize=fuzzer,address,undefined. */
#include "read/jitdump_reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct counts {
    size_t errors, warnings;
};

static void count(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg)
{
    struct counts *c = arg;
    (void)offset;
    if (!msg || strlen(msg) == 0)
        abort(); /* every issue says something */
    if (sev == PT_JD_ERROR)
        c->errors++;
    else
        c->warnings++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so ASan sees any read past the end */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct counts c = {0, 0};
    struct pt_jd_summary sum;
    size_t errors = pt_jitdump_validate(copy, size, &sum, count, &c);
    if (errors != sum.errors || c.errors > errors || (errors > 0) != (c.errors > 0))
        abort(); /* the verdict and the report agree */
    if (sum.valid_bytes + sum.trailing_bytes > size)
        abort();
    /* the record iterator on its own */
    struct pt_jd_iter it;
    struct pt_jd_record r;
    if (pt_jd_iter_init(&it, copy, size) == 0) {
        int k;
        while ((k = pt_jd_next(&it, &r)) == 1)
            if (r.offset + r.total_size > size)
                abort();
    }
    free(copy);
    return 0;
}
