/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: code a JIT published (perftramp_publish),
 * told to gdb in batches of up to PT_GDB_BATCH_CODES regions per entry. */
#include "config.h"

#include "emit/elf_image.h"
#include "outputs/gdb_protocol.h"
#include "outputs/gdb_state.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* ---- published code -------------------------------------------------
 * Regions may lie anywhere (a JIT's own memory), so they cannot be
 * chunked by slot.  Batching is by publication instead: a region joins
 * the newest batch while it holds fewer than PT_GDB_BATCH_CODES, and each
 * batch is one entry: an ELF with a SHT_NOBITS .text per region (exactly
 * its range: gdb's pc -> section lookup never meets a gap or a
 * neighbour), one STT_FUNC per region, and one .eh_frame made of the
 * regions' own CIE+FDE pairs.  Those FDEs use absolute pointers, so the
 * .eh_frame is right at any address; its sh_addr is the batch's own copy
 * of the bytes (heap: no code there).  As for trampolines, publishing
 * costs gdb O(PT_GDB_BATCH_CODES) and gdb holds n/PT_GDB_BATCH_CODES
 * entries (plus batches thinned by unpublish): linear, not quadratic. */
#define PT_GDB_BATCH_CODES 64

struct pt_gdb_member {
    struct pt_gdb_batch *batch;
    void **owner; /* the caller's handle, cleared when the member goes */
    struct pt_gdb_code code;
};

struct pt_gdb_batch {
    struct pt_gdb_batch *prev, *next;
    struct jit_code_entry entry;
    uint8_t *image; /* the registered ELF, or NULL */
    uint8_t *eh;    /* its .eh_frame bytes, at their own address */
    size_t n;
    struct pt_gdb_member *m[PT_GDB_BATCH_CODES];
};

static void batch_drop_image(struct pt_gdb_batch *b)
{
    if (b->image) {
        pthread_mutex_lock(&jit_lock);
        jit_unlink(&b->entry);
        pthread_mutex_unlock(&jit_lock);
    }
    free(b->image);
    free(b->eh);
    b->image = b->eh = NULL;
}

/* Rebuilds batch b's image from its members and swaps it in: 0, or -1
 * with errno (the old image stays registered). */
static int batch_publish(struct pt_gdb *g, struct pt_gdb_batch *b)
{
    if (b->n == 0) {
        batch_drop_image(b);
        return 0;
    }
    const struct pt_arch *arch = g->slots->arch;
    struct pt_elf_out_section secs[PT_GDB_BATCH_CODES + 1];
    struct pt_elf_out_symbol syms[PT_GDB_BATCH_CODES];
    size_t eh_len = 4; /* the terminator */
    for (size_t i = 0; i < b->n; i++)
        eh_len += b->m[i]->code.eh_len - 4;
    uint8_t *eh = calloc(1, eh_len);
    if (!eh) {
        errno = ENOMEM;
        return -1;
    }
    size_t at = 0;
    for (size_t i = 0; i < b->n; i++) {
        const struct pt_gdb_code *c = &b->m[i]->code;
        memcpy(eh + at, c->eh, c->eh_len - 4); /* CIE + FDE; the CIE pointer is relative: stays right */
        at += c->eh_len - 4;
        secs[i] = (struct pt_elf_out_section){.name = ".text", .type = 8 /* SHT_NOBITS */,
                                              .flags = 0x2 | 0x4 /* ALLOC|EXECINSTR */, .addr = c->addr,
                                              .size = c->size, .align = 1};
        syms[i] = (struct pt_elf_out_symbol){.name = c->name, .section = (uint16_t)i, .value = 0, .size = c->size};
    }
    secs[b->n] = (struct pt_elf_out_section){.name = ".eh_frame", .type = 1 /* SHT_PROGBITS */, .flags = 0x2,
                                             .addr = (uintptr_t)eh, .data = eh, .size = eh_len, .align = 8};
    size_t len = 0;
    uint8_t *image = pt_elf_build(arch, secs, b->n + 1, syms, b->n, &len);
    if (!image) {
        free(eh);
        return -1;
    }
    batch_drop_image(b);
    b->image = image;
    b->eh = eh;
    b->entry.symfile_addr = (const char *)image;
    b->entry.symfile_size = len;
    pthread_mutex_lock(&jit_lock);
    jit_link(&b->entry);
    pthread_mutex_unlock(&jit_lock);
    return 0;
}

static void batch_unlink_free(struct pt_gdb *g, struct pt_gdb_batch *b)
{
    batch_drop_image(b);
    if (b->prev)
        b->prev->next = b->next;
    else
        g->first = b->next;
    if (b->next)
        b->next->prev = b->prev;
    else
        g->last = b->prev;
    free(b);
}

int pt_gdb_code_add(struct pt_gdb *g, const struct pt_gdb_code *c, void **handle)
{
    if (c->eh_len < 4) {
        errno = EINVAL;
        return -1;
    }
    struct pt_gdb_member *m = calloc(1, sizeof *m);
    struct pt_gdb_batch *b = g->last;
    bool fresh = !b || b->n == PT_GDB_BATCH_CODES;
    if (fresh)
        b = calloc(1, sizeof *b);
    if (!m || !b) {
        free(m);
        if (fresh)
            free(b);
        errno = ENOMEM;
        return -1;
    }
    if (fresh) {
        b->prev = g->last;
        if (g->last)
            g->last->next = b;
        else
            g->first = b;
        g->last = b;
    }
    *m = (struct pt_gdb_member){.batch = b, .owner = handle, .code = *c};
    b->m[b->n++] = m;
    if (batch_publish(g, b) < 0) {
        int e = errno;
        b->n--;
        free(m);
        if (b->n == 0)
            batch_unlink_free(g, b);
        errno = e;
        return -1;
    }
    *handle = m;
    return 0;
}

void pt_gdb_code_removed(struct pt_gdb *g, void **handle)
{
    struct pt_gdb_member *m = handle ? *handle : NULL;
    if (!g || !m)
        return;
    struct pt_gdb_batch *b = m->batch;
    for (size_t i = 0; i < b->n; i++)
        if (b->m[i] == m) {
            b->m[i] = b->m[--b->n];
            break;
        }
    *handle = NULL;
    free(m);
    if (b->n == 0)
        batch_unlink_free(g, b);
    else if (batch_publish(g, b) < 0)
        batch_drop_image(b); /* never leave gdb a name for withdrawn code */
}

void pt_gdb_batches_free(struct pt_gdb *g)
{
    while (g->first) {
        struct pt_gdb_batch *b = g->first;
        for (size_t i = 0; i < b->n; i++) {
            *b->m[i]->owner = NULL;
            free(b->m[i]);
        }
        b->n = 0;
        batch_unlink_free(g, b);
    }
}
