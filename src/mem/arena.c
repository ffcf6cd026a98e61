/* SPDX-License-Identifier: MIT */
/* Mem layer: code memory: arenas of executable memory (codemem.h: libffi closures or
 * perftramp's own double mapping), cut into fixed-stride slots.  Freed
 * slots go on an intrusive free list (the link lives in the freed slot's
 * tag word, behind a trap instruction). */
#include "mem/arena.h"

#include "emit/eh_frame.h"
#include "mem/elf_arena.h"
#include "mem/icache.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define PT_ARENA_FIRST_BYTES (64u * 1024)
#define PT_ARENA_MAX_BYTES (16u * 1024 * 1024)
#define PT_PREFAULT_CHUNK (64u * 1024) /* slot bytes pre-faulted at a time */

/* Bytes of 0xff after the zero terminator.  LLVM libunwind 14's
 * __unw_add_dynamic_eh_frame_section does not stop at the terminator: it
 * takes it for an empty CIE and steps on by the last CIE's length until an
 * entry fails to parse, reading past the arena when the bytes there are
 * zero (it crashed at the end of a page-aligned arena).  At any 4-aligned
 * landing within the CIE's length, 0xff words parse as neither an FDE of
 * this section nor a CIE, and its walk stops.  libgcc, newer LLVM and
 * nongnu libunwind stop at the terminator and never see them. */
static size_t eh_guard_bytes(size_t cie_size)
{
    return cie_size + 16;
}

/* Builds CIE + one FDE per slot + terminator (+ guard) at the arena's end,
 * with pointers relative to the executable address it will be read at. */
static int build_eh_frame(struct pt_slots *s, struct pt_arena *a)
{
    struct pt_buf prog, eh;
    pt_buf_init(&prog, s->arch->big_endian);
    if (pt_cfi_program(&prog, s->layout) < 0 || prog.failed) {
        pt_buf_free(&prog);
        return -1;
    }
    pt_buf_init_fixed(&eh, a->w + a->eh_off, a->bytes - a->eh_off, s->arch->big_endian);
    size_t cie = pt_eh_cie(&eh, s->arch);
    /* FDEs differ only in their CIE pointer (+4) and pcrel pc_begin (+8),
     * both u32 (see pt_eh_fde): emit slot 0, then copy it and patch those
     * two words.  Same bytes as pt_eh_fde per slot, ~30x faster (bench:
     * a 16 MiB arena took ~12 ms to build, inside one perftramp_wrap). */
    size_t first = eh.len;
    if (a->n_slots)
        pt_eh_fde(&eh, cie, -(int64_t)a->eh_off, s->layout->size, prog.data, prog.len);
    size_t fde_len = eh.len - first;
    if (a->n_slots > 1 && pt_buf_reserve(&eh, (a->n_slots - 1) * fde_len)) {
        for (size_t i = 1; i < a->n_slots; i++) {
            size_t at = first + i * fde_len;
            int64_t code_rel = (int64_t)(i * s->stride) - (int64_t)a->eh_off;
            memcpy(eh.data + at, eh.data + first, fde_len);
            pt_store_u32(eh.data + at + 4, (uint32_t)(at + 4 - cie), eh.big_endian);
            pt_store_u32(eh.data + at + 8, (uint32_t)(code_rel - (int64_t)(at + 8)), eh.big_endian);
        }
        eh.len += (a->n_slots - 1) * fde_len;
    }
    pt_eh_terminator(&eh);
    size_t eh_len = eh.len;
    for (size_t i = 0, n = eh_guard_bytes(first); i < n; i++)
        pt_buf_u8(&eh, 0xff);
    pt_buf_free(&prog);
    if (eh.failed) {
        errno = ENOMEM;
        return -1;
    }
    a->eh_len = eh_len;
    return 0;
}

/* The size of the CIE, one FDE and the terminator (+ guard) for this table. */
static int measure_eh(struct pt_slots *s, size_t *cie_and_term)
{
    struct pt_buf prog, eh;
    pt_buf_init(&prog, s->arch->big_endian);
    pt_buf_init(&eh, s->arch->big_endian);
    int r = pt_cfi_program(&prog, s->layout);
    size_t cie = pt_eh_cie(&eh, s->arch);
    size_t fde = pt_eh_fde(&eh, cie, 0, s->layout->size, prog.data, prog.len);
    pt_eh_terminator(&eh);
    bool failed = prog.failed || eh.failed;
    size_t total = eh.len; /* read before pt_buf_free zeroes it */
    pt_buf_free(&prog);
    pt_buf_free(&eh);
    if (r < 0 || failed) {
        errno = r < 0 ? EINVAL : ENOMEM;
        return -1;
    }
    s->fde_size = total - 4 - fde;
    s->cie_size = fde;
    *cie_and_term = fde + 4 + eh_guard_bytes(fde);
    return 0;
}

static void arena_drop_names(struct pt_arena *a)
{
    if (a->names)
        for (size_t i = 0; i < a->high_water; i++)
            free(a->names[i]);
    free(a->names);
    a->names = NULL;
}

void pt_slots_drop_names(struct pt_slots *s)
{
    s->keep_names = false;
    for (size_t k = 0; k < s->n_arenas; k++)
        arena_drop_names(s->arenas[k]);
}

static void arena_free(struct pt_arena *a)
{
    if (!a)
        return;
    arena_drop_names(a);
    free(a->live_bits);
    pt_code_free(&a->mem);
    free(a);
}


static struct pt_arena *arena_new(struct pt_slots *s)
{
    struct pt_arena *a = calloc(1, sizeof *a);
    if (!a)
        return NULL;
    a->bytes = s->next_arena_bytes;
    size_t per_slot = s->stride, fixed = 0;
    if (s->with_eh_frame) {
        fixed = s->eh_fixed;
        per_slot += s->fde_size;
    }
    a->n_slots = (a->bytes - fixed) / per_slot;
    a->eh_off = s->with_eh_frame ? a->n_slots * s->stride : 0;
    a->live_bits = calloc((a->n_slots + 63) / 64, sizeof *a->live_bits);
    if (!a->live_bits)
        goto fail;
    if (s->keep_names && !(a->names = calloc(a->n_slots, sizeof *a->names)))
        goto fail;
    /* the base aligned as every slot start must be (stride is a multiple of code_align) */
    if (s->elf_on && s->elf_dir && s->with_eh_frame) {
        struct pt_elf_so_geometry g = {.addr_size = s->arch->addr_size, .n_slots = a->n_slots,
                                       .stride = s->stride, .slot_size = s->layout->size,
                                       .block_bytes = a->bytes, .eh_rel = a->eh_off, .cie_size = s->cie_size,
                                       .fde_size = s->fde_size, .code_align = s->arch->code_align};
        if (pt_elf_arena_alloc(&a->mem, s->elf_dir, s->arch, &g) < 0) {
            s->elf_error = errno ? errno : EIO; /* the usual code memory instead */
            s->elf_on = false;
        }
    }
    if (!a->mem.backend && pt_code_alloc(&a->mem, a->bytes, s->arch->code_align) < 0) {
        int e = errno;
        arena_free(a);
        errno = e;
        return NULL;
    }
    /* the FDE area is written whole right below: one call instead of a
     * fault per page (the slots follow a chunk at a time, pt_slot_alloc) */
    a->w = a->mem.w;
    a->x = a->mem.x;
    /* an ELF arena's file holds its .eh_frame always (the file is what
     * perf reads); else it is built now only when an output reads it */
    if ((s->eh_now || a->mem.elf) && pt_arena_eh_build(s, a) < 0)
        goto fail;
    return a;
fail:
    arena_free(a);
    errno = ENOMEM;
    return NULL;
}

int pt_arena_eh_build(struct pt_slots *s, struct pt_arena *a)
{
    if (!s->with_eh_frame || a->eh_len)
        return 0;
    pt_code_prefault(&a->mem, a->eh_off, a->bytes - a->eh_off);
    if (build_eh_frame(s, a) < 0)
        return -1;
    pt_icache_flush(s->arch, a->x + a->eh_off, a->bytes - a->eh_off);
    return 0;
}

int pt_slots_eh_build(struct pt_slots *s)
{
    if (!s->with_eh_frame) {
        errno = ENOTSUP;
        return -1;
    }
    s->eh_now = true;
    for (size_t k = 0; k < s->n_arenas; k++)
        if (pt_arena_eh_build(s, s->arenas[k]) < 0)
            return -1;
    return 0;
}

/* Inserts keeping the array sorted by executable address. */
static int arena_insert(struct pt_slots *s, struct pt_arena *a)
{
    if (s->n_arenas == s->cap_arenas) {
        size_t cap = s->cap_arenas ? s->cap_arenas * 2 : 8;
        struct pt_arena **p = realloc(s->arenas, cap * sizeof *p);
        if (!p) {
            errno = ENOMEM;
            return -1;
        }
        s->arenas = p;
        s->cap_arenas = cap;
    }
    size_t i = s->n_arenas;
    while (i > 0 && s->arenas[i - 1]->x > a->x) {
        s->arenas[i] = s->arenas[i - 1];
        i--;
    }
    s->arenas[i] = a;
    s->n_arenas++;
    return 0;
}

struct pt_arena *pt_arena_of(const struct pt_slots *s, uintptr_t x, size_t *index)
{
    size_t lo = 0, hi = s->n_arenas;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        struct pt_arena *a = s->arenas[mid];
        if (x < a->x)
            hi = mid;
        else if (x >= a->x + a->n_slots * s->stride)
            lo = mid + 1;
        else {
            size_t off = x - a->x;
            if (off % s->stride)
                return NULL;
            *index = off / s->stride;
            return a;
        }
    }
    return NULL;
}

/* The free-list link sits in the tag word of a freed slot. */
static uint8_t *link_word(struct pt_slots *s, struct pt_arena *a, size_t i)
{
    return pt_slot_w(s, a, i) + s->layout->word_off[PT_WORD_TAG];
}

int pt_slot_alloc(struct pt_slots *s, struct pt_arena **arena, size_t *index, bool *new_arena)
{
    *new_arena = false;
    if (s->free_head) {
        size_t i;
        struct pt_arena *a = pt_arena_of(s, s->free_head, &i);
        uintptr_t next;
        memcpy(&next, link_word(s, a, i), sizeof next);
        s->free_head = next;
        *arena = a;
        *index = i;
        return 0;
    }
    /* only the newest arena has never-used slots */
    struct pt_arena *last = s->filling;
    if (!last || last->high_water == last->n_slots) {
        last = arena_new(s);
        if (!last)
            return -1;
        if (arena_insert(s, last) < 0) {
            arena_free(last);
            return -1;
        }
        *new_arena = true;
        s->filling = last;
        if (s->next_arena_bytes < PT_ARENA_MAX_BYTES)
            s->next_arena_bytes *= 2;
    }
    *arena = last;
    *index = last->high_water++;
    /* slots are pre-faulted a chunk ahead of the fill: one system call
     * per chunk instead of a fault per page, while the pages it zeroes
     * are still in the cache when their slots are written */
    size_t end = last->high_water * s->stride;
    if (end > last->prefaulted) {
        size_t limit = last->eh_off ? last->eh_off : last->bytes;
        pt_code_prefault(&last->mem, last->prefaulted, PT_PREFAULT_CHUNK);
        last->prefaulted = last->prefaulted + PT_PREFAULT_CHUNK < limit ? last->prefaulted + PT_PREFAULT_CHUNK : limit;
    }
    return 0;
}

void pt_slot_free(struct pt_slots *s, struct pt_arena *a, size_t i)
{
    uint8_t *w = pt_slot_w(s, a, i);
    memcpy(w, s->arch->trap, s->arch->trap_len);
    pt_icache_flush(s->arch, pt_slot_x(s, a, i), s->arch->trap_len);
    if (a->mem.elf)
        return; /* never recycled: the file names this address for good */
    memcpy(link_word(s, a, i), &s->free_head, sizeof s->free_head);
    s->free_head = pt_slot_x(s, a, i);
}

void pt_arena_retire(struct pt_slots *s, struct pt_arena *a)
{
    size_t k = 0;
    while (k < s->n_arenas && s->arenas[k] != a)
        k++;
    if (k == s->n_arenas)
        return;
    memmove(s->arenas + k, s->arenas + k + 1, (s->n_arenas - k - 1) * sizeof *s->arenas);
    s->n_arenas--;
    if (s->filling == a)
        s->filling = NULL;
    arena_free(a);
}

void pt_slots_destroy(struct pt_slots *s)
{
    /* outputs have already let go of the arenas (their close hooks) */
    for (size_t k = 0; k < s->n_arenas; k++)
        arena_free(s->arenas[k]);
    free(s->arenas);
    s->arenas = NULL;
    s->n_arenas = s->cap_arenas = 0;
    s->free_head = 0;
    s->filling = NULL;
}

int pt_for_each_live(const struct pt_slots *s, pt_live_fn fn, void *arg)
{
    for (size_t k = 0; k < s->n_arenas; k++) {
        struct pt_arena *a = s->arenas[k];
        for (size_t w = 0; w < (a->high_water + 63) / 64; w++) {
            uint64_t bits = a->live_bits[w];
            while (bits) {
                size_t i = w * 64 + (size_t)__builtin_ctzll(bits);
                bits &= bits - 1;
                int r = fn(a, i, arg);
                if (r)
                    return r;
            }
        }
    }
    return 0;
}

int pt_slots_init(struct pt_slots *s, const struct pt_arch *arch, const struct pt_layout *layout, size_t stride,
                  bool with_eh_frame, bool eh_now, bool keep_names)
{
    /* before the context's own fork handler, so that one runs first at a
     * fork and holds the context lock while code memory is copied */
    pt_code_init();
    *s = (struct pt_slots){.arch = arch, .layout = layout, .stride = stride, .with_eh_frame = with_eh_frame,
                           .eh_now = eh_now, .keep_names = keep_names, .next_arena_bytes = PT_ARENA_FIRST_BYTES};
    return with_eh_frame ? measure_eh(s, &s->eh_fixed) : 0;
}
