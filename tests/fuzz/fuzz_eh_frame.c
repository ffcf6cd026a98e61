/* SPDX-License-Identifier: MIT */
/* libFuzzer harness: the .eh_frame / .eh_frame_hdr decoder on arbitrary
 * bytes.  The first byte picks the byte order, address size and whether the
 * rest is .eh_frame (walked, every FDE's rows computed) or .eh_frame_hdr.
 * Built by .ci/steps/50-fuzz.sh with clang -fsanitize=fuzzer,address,undefined. */
#include "read/eh_decode.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 64

struct walk {
    struct pt_eh_ctx *ctx;
    struct pt_row rows[MAX_ROWS];
};

static int on_fde(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct walk *w = arg;
    const uint8_t *lo = w->ctx->data, *hi = w->ctx->data + w->ctx->len;
    /* the decoder hands out pointers into the input only */
    if (cie->insns < lo || cie->insns + cie->insns_len > hi || fde->insns < lo || fde->insns + fde->insns_len > hi)
        abort();
    int n = pt_eh_rows(w->ctx, cie, fde, w->rows, MAX_ROWS);
    for (int i = 0; i < n; i++) {
        if (w->rows[i].n_rules > PT_ROW_MAX_RULES)
            abort();
        if (i && w->rows[i].loc <= w->rows[i - 1].loc)
            abort(); /* rows come sorted, one per location */
        for (size_t k = 0; k < w->rows[i].n_rules; k++)
            (void)pt_row_rule(&w->rows[i], w->rows[i].rules[k].reg);
    }
    return 0;
}

static void on_hdr_row(void *arg, uint64_t pc, uint64_t fde)
{
    (void)arg;
    (void)pc;
    (void)fde;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 1)
        return 0;
    uint8_t mode = data[0];
    size_t len = size - 1;
    uint8_t *copy = malloc(len ? len : 1); /* exact size: ASan sees overreads */
    if (!copy)
        return 0;
    memcpy(copy, data + 1, len);
    struct pt_eh_ctx ctx = {
        .data = copy,
        .len = len,
        .address = (mode & 4) ? 0xffffffffffff0000ull : 0x1000, /* wraparound on purpose */
        .big_endian = mode & 1,
        .addr_size = (mode & 2) ? 4 : 8,
    };
    if (mode & 8) {
        struct pt_eh_hdr_info info;
        (void)pt_eh_hdr_decode(&ctx, &info, on_hdr_row, NULL);
    } else {
        struct walk *w = malloc(sizeof *w);
        if (w) {
            w->ctx = &ctx;
            size_t n_cies = 0, n_fdes = 0;
            (void)pt_eh_walk(&ctx, on_fde, w, &n_cies, &n_fdes);
            free(w);
        }
    }
    if (strlen(ctx.error) >= sizeof ctx.error)
        abort();
    free(copy);
    return 0;
}
