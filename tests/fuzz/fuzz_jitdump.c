/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: the streaming jitdump validator (and through it the
 * .eh_frame and .eh_frame_hdr decoders) on arbitrary bytes.  It must never
 * crash, never read out of bounds, and agree with itself: the error count
 * it returns equals the errors it reported, and feeding the same bytes in
 * small uneven chunks (as a pipe delivers them) gives the same verdict as
 * feeding them whole.  Built by .ci/steps/50-fuzz.sh with
 * clang -fsanitize=fuzzer,address,undefined. */
#include "read/jitdump_reader.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

struct counts {
    size_t errors, warnings, notes;
};

static void count(void *arg, const struct pt_jd_finding *f)
{
    struct counts *c = arg;
    if (!f->msg || strlen(f->msg) == 0 || !f->kind || !f->advice)
        abort(); /* every finding says something */
    if (f->sev == PT_JD_ERROR)
        c->errors++;
    else if (f->sev == PT_JD_WARNING)
        c->warnings++;
    else
        c->notes++;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    /* an exact-size copy, so ASan sees any read past the end */
    uint8_t *copy = malloc(size ? size : 1);
    if (!copy)
        return 0;
    memcpy(copy, data, size);
    struct counts c = {0, 0, 0};
    struct pt_jd_summary sum;
    size_t errors = pt_jitdump_validate_ex(copy, size, NULL, &sum, count, &c);
    if (errors != sum.errors || c.errors != errors || c.warnings != sum.warnings)
        abort(); /* the verdict and the report agree */
    if (sum.valid_bytes + sum.trailing_bytes > size)
        abort();

    /* streamed in uneven chunks, size unknown (a pipe): the same verdict */
    struct counts s = {0, 0, 0};
    struct pt_jd_validator *v = pt_jd_validator_new(NULL, UINT64_MAX, count, &s);
    if (v) {
        size_t off = 0, step = 1;
        while (off < size) {
            size_t k = size - off < step ? size - off : step;
            int r = pt_jd_validator_feed(v, copy + off, k);
            off += k;
            if (r != 0)
                break;
            step = step * 3 % 61 + 1;
        }
        struct pt_jd_summary ss;
        size_t e2 = pt_jd_validator_finish(v, &ss);
        pt_jd_validator_free(v);
        if (e2 != errors || ss.warnings != sum.warnings || ss.records != sum.records)
            abort();
    }

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
