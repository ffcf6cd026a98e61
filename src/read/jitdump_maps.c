/* SPDX-License-Identifier: MIT */
/* Read layer: live code mappings in time order (jitdump_maps.h): a treap of live LOADs
 * keyed by code address (their code ranges never overlap: a LOAD whose code
 * lands on live code replaces it), fed from a min-heap that restores time
 * order within a window. */
#include "read/jitdump_maps.h"

#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX
#define WALK_BACK 256 /* predecessors examined for a long mapped tail */

struct node {
    struct pt_jd_map_load l;
    uint32_t left, right, prio;
    /* the first LOAD that shadowed this one, and how many did */
    uint64_t sh_off, sh_rec, sh_lo, sh_hi;
    uint32_t sh_count;
    uint8_t sh_kind;
};

struct pt_jd_maps {
    struct node *nodes;   /* pool; free list threaded through .left */
    uint32_t cap, used, free_head, root;
    size_t live;
    uint64_t max_tail;    /* longest map_end - code_end among mappings ever live */
    uint64_t seq, last_ts;
    bool any_applied;
    uint32_t rng;
    struct pt_jd_map_load *heap; /* the window, grown up to PT_JD_MAPS_WINDOW */
    size_t n_heap, cap_heap;
    struct pt_jd_maps_stats stats;
};

struct pt_jd_maps *pt_jd_maps_new(void)
{
    struct pt_jd_maps *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->root = m->free_head = NIL;
    m->rng = 2463534242u;
    return m;
}

void pt_jd_maps_free(struct pt_jd_maps *m)
{
    if (!m)
        return;
    free(m->nodes);
    free(m->heap);
    free(m);
}

void pt_jd_maps_get_stats(const struct pt_jd_maps *m, struct pt_jd_maps_stats *out)
{
    *out = m->stats;
}

/* ---- the treap ---------------------------------------------------------- */

static uint32_t next_prio(struct pt_jd_maps *m)
{
    m->rng ^= m->rng << 13;
    m->rng ^= m->rng >> 17;
    m->rng ^= m->rng << 5;
    return m->rng;
}

/* (code_addr, seq) order */
static bool before(const struct pt_jd_map_load *a, const struct pt_jd_map_load *b)
{
    return a->code_addr < b->code_addr || (a->code_addr == b->code_addr && a->seq < b->seq);
}

static uint32_t alloc_node(struct pt_jd_maps *m)
{
    if (m->free_head != NIL) {
        uint32_t i = m->free_head;
        m->free_head = m->nodes[i].left;
        return i;
    }
    if (m->used == m->cap) {
        if (m->cap >= PT_JD_MAPS_MAX_LIVE)
            return NIL;
        uint32_t cap = m->cap ? m->cap * 2 : 1024;
        if (cap > PT_JD_MAPS_MAX_LIVE)
            cap = PT_JD_MAPS_MAX_LIVE;
        struct node *n = realloc(m->nodes, cap * sizeof *n);
        if (!n)
            return NIL;
        m->nodes = n;
        m->cap = cap;
    }
    return m->used++;
}

/* split t into (< key) and (>= key) */
static void split(struct pt_jd_maps *m, uint32_t t, const struct pt_jd_map_load *key, uint32_t *l, uint32_t *r)
{
    if (t == NIL) {
        *l = *r = NIL;
        return;
    }
    if (before(&m->nodes[t].l, key)) {
        split(m, m->nodes[t].right, key, &m->nodes[t].right, r);
        *l = t;
    } else {
        split(m, m->nodes[t].left, key, l, &m->nodes[t].left);
        *r = t;
    }
}

static uint32_t merge(struct pt_jd_maps *m, uint32_t a, uint32_t b)
{
    if (a == NIL)
        return b;
    if (b == NIL)
        return a;
    if (m->nodes[a].prio > m->nodes[b].prio) {
        m->nodes[a].right = merge(m, m->nodes[a].right, b);
        return a;
    }
    m->nodes[b].left = merge(m, a, m->nodes[b].left);
    return b;
}

static void insert(struct pt_jd_maps *m, uint32_t i)
{
    uint32_t l, r;
    split(m, m->root, &m->nodes[i].l, &l, &r);
    m->root = merge(m, merge(m, l, i), r);
    m->live++;
}

static void report(const struct pt_jd_maps *m, uint32_t i, bool freed, pt_jd_overlap_fn fn, void *arg)
{
    const struct node *n = &m->nodes[i];
    if (!n->sh_count || !fn)
        return;
    struct pt_jd_shadow sh = {.kind = (enum pt_jd_overlap)n->sh_kind, .earlier = &n->l, .later_offset = n->sh_off,
                              .later_record = n->sh_rec, .lo = n->sh_lo, .hi = n->sh_hi, .count = n->sh_count,
                              .freed = freed};
    fn(arg, &sh);
}

static void shadow(struct node *n, enum pt_jd_overlap kind, const struct pt_jd_map_load *later, uint64_t lo,
                   uint64_t hi)
{
    if (n->sh_count++ == 0) {
        n->sh_kind = (uint8_t)kind;
        n->sh_off = later->offset;
        n->sh_rec = later->record;
        n->sh_lo = lo;
        n->sh_hi = hi;
    }
}

static void erase(struct pt_jd_maps *m, uint32_t i)
{
    uint32_t *link = &m->root;
    while (*link != i && *link != NIL)
        link = before(&m->nodes[i].l, &m->nodes[*link].l) ? &m->nodes[*link].left : &m->nodes[*link].right;
    if (*link == NIL)
        return;
    *link = merge(m, m->nodes[i].left, m->nodes[i].right);
    m->nodes[i].left = m->free_head;
    m->free_head = i;
    m->live--;
}

/* The last node at or before address a (any seq), or NIL. */
static uint32_t last_at_or_before(const struct pt_jd_maps *m, uint64_t a)
{
    uint32_t t = m->root, best = NIL;
    while (t != NIL) {
        if (m->nodes[t].l.code_addr <= a) {
            best = t;
            t = m->nodes[t].right;
        } else {
            t = m->nodes[t].left;
        }
    }
    return best;
}

/* The first node strictly after node i in key order, or NIL. */
static uint32_t successor(const struct pt_jd_maps *m, uint32_t i)
{
    uint32_t t = m->root, best = NIL;
    while (t != NIL) {
        if (before(&m->nodes[i].l, &m->nodes[t].l)) {
            best = t;
            t = m->nodes[t].left;
        } else {
            t = m->nodes[t].right;
        }
    }
    return best;
}

static uint32_t predecessor(const struct pt_jd_maps *m, uint32_t i)
{
    uint32_t t = m->root, best = NIL;
    while (t != NIL) {
        if (before(&m->nodes[t].l, &m->nodes[i].l)) {
            best = t;
            t = m->nodes[t].right;
        } else {
            t = m->nodes[t].left;
        }
    }
    return best;
}

/* The first live node whose code overlaps [lo, hi), or NIL. */
static uint32_t first_code_overlap(const struct pt_jd_maps *m, uint64_t lo, uint64_t hi)
{
    uint32_t t = last_at_or_before(m, lo);
    if (t != NIL && m->nodes[t].l.code_end > lo)
        return t;
    if (t != NIL) {
        t = successor(m, t);
    } else if ((t = m->root) != NIL) { /* nothing at or before lo: start at the smallest */
        while (m->nodes[t].left != NIL)
            t = m->nodes[t].left;
    }
    /* skip empty code ranges sitting at lo */
    while (t != NIL && m->nodes[t].l.code_addr < hi) {
        if (m->nodes[t].l.code_end > lo && m->nodes[t].l.code_end > m->nodes[t].l.code_addr)
            return t;
        t = successor(m, t);
    }
    return NIL;
}

/* ---- applying one LOAD -------------------------------------------------- */

static void apply(struct pt_jd_maps *m, const struct pt_jd_map_load *l, pt_jd_overlap_fn fn, void *arg)
{
    m->stats.applied++;
    if (m->any_applied && l->timestamp < m->last_ts)
        m->stats.out_of_order++;
    else
        m->last_ts = l->timestamp;
    m->any_applied = true;
    if (m->stats.full)
        return;

    /* 1. live code under the new code: freed and reused, replaced */
    bool replaced = false;
    if (l->code_end > l->code_addr) {
        uint32_t t;
        while ((t = first_code_overlap(m, l->code_addr, l->code_end)) != NIL) {
            report(m, t, true, fn, arg);
            erase(m, t);
            replaced = true;
        }
    }
    if (replaced)
        m->stats.replaced++;

    /* 2. live code under the new mapped tail: shadowed, mis-named */
    if (l->map_end > l->code_end) {
        uint32_t t = first_code_overlap(m, l->code_end, l->map_end);
        while (t != NIL && m->nodes[t].l.code_addr < l->map_end) {
            const struct pt_jd_map_load *e = &m->nodes[t].l;
            if (e->code_end > e->code_addr && e->code_end > l->code_end) {
                uint64_t lo = e->code_addr > l->code_end ? e->code_addr : l->code_end;
                uint64_t hi = e->code_end < l->map_end ? e->code_end : l->map_end;
                shadow(&m->nodes[t], PT_JD_OVERLAP_TAIL_ON_CODE, l, lo, hi);
            }
            t = successor(m, t);
        }
    }

    /* 3. the new code inside an older mapping's tail (the older code
     * itself untouched): its .eh_frame is shadowed */
    if (l->code_end > l->code_addr && m->max_tail > 0) {
        uint32_t t = last_at_or_before(m, l->code_end - 1);
        for (int steps = 0; t != NIL && steps < WALK_BACK; steps++) {
            const struct pt_jd_map_load *e = &m->nodes[t].l;
            if (e->code_end + m->max_tail <= l->code_addr || e->code_end < e->code_addr)
                break; /* no tail reaches this far back */
            if (e->map_end > e->code_end && e->code_end <= l->code_addr && e->map_end > l->code_addr) {
                uint64_t hi = e->map_end < l->code_end ? e->map_end : l->code_end;
                shadow(&m->nodes[t], PT_JD_OVERLAP_CODE_ON_TAIL, l, l->code_addr, hi);
            }
            t = predecessor(m, t);
        }
    }

    uint32_t i = alloc_node(m);
    if (i == NIL) {
        m->stats.full = true;
        return;
    }
    memset(&m->nodes[i], 0, sizeof m->nodes[i]);
    m->nodes[i].l = *l;
    m->nodes[i].left = m->nodes[i].right = NIL;
    m->nodes[i].prio = next_prio(m);
    insert(m, i);
    if (l->map_end - l->code_end > m->max_tail)
        m->max_tail = l->map_end - l->code_end;
}

/* ---- the window: a min-heap on (timestamp, seq) ------------------------- */

static bool earlier(const struct pt_jd_map_load *a, const struct pt_jd_map_load *b)
{
    return a->timestamp < b->timestamp || (a->timestamp == b->timestamp && a->seq < b->seq);
}

static void heap_push(struct pt_jd_maps *m, const struct pt_jd_map_load *l)
{
    size_t i = m->n_heap++;
    m->heap[i] = *l;
    while (i > 0 && earlier(&m->heap[i], &m->heap[(i - 1) / 2])) {
        struct pt_jd_map_load t = m->heap[i];
        m->heap[i] = m->heap[(i - 1) / 2];
        m->heap[(i - 1) / 2] = t;
        i = (i - 1) / 2;
    }
}

static struct pt_jd_map_load heap_pop(struct pt_jd_maps *m)
{
    struct pt_jd_map_load top = m->heap[0];
    m->heap[0] = m->heap[--m->n_heap];
    size_t i = 0;
    for (;;) {
        size_t l = 2 * i + 1, r = l + 1, s = i;
        if (l < m->n_heap && earlier(&m->heap[l], &m->heap[s]))
            s = l;
        if (r < m->n_heap && earlier(&m->heap[r], &m->heap[s]))
            s = r;
        if (s == i)
            break;
        struct pt_jd_map_load t = m->heap[i];
        m->heap[i] = m->heap[s];
        m->heap[s] = t;
        i = s;
    }
    return top;
}

void pt_jd_maps_add(struct pt_jd_maps *m, const struct pt_jd_map_load *l, pt_jd_overlap_fn fn, void *arg)
{
    struct pt_jd_map_load c = *l;
    c.seq = m->seq++;
    if (c.map_end < c.code_end)
        c.map_end = c.code_end;
    if (m->n_heap == m->cap_heap) {
        size_t cap = m->cap_heap ? m->cap_heap * 2 : 64;
        struct pt_jd_map_load *h = cap <= PT_JD_MAPS_WINDOW ? realloc(m->heap, cap * sizeof *h) : NULL;
        if (!h) { /* no room to reorder: apply in file order */
            apply(m, &c, fn, arg);
            return;
        }
        m->heap = h;
        m->cap_heap = cap;
    }
    heap_push(m, &c);
    if (m->n_heap == PT_JD_MAPS_WINDOW) {
        struct pt_jd_map_load first = heap_pop(m);
        apply(m, &first, fn, arg);
    }
}

static void report_live(const struct pt_jd_maps *m, uint32_t t, pt_jd_overlap_fn fn, void *arg)
{
    if (t == NIL)
        return;
    report_live(m, m->nodes[t].left, fn, arg);
    report(m, t, false, fn, arg);
    report_live(m, m->nodes[t].right, fn, arg);
}

void pt_jd_maps_flush(struct pt_jd_maps *m, pt_jd_overlap_fn fn, void *arg)
{
    while (m->n_heap > 0) {
        struct pt_jd_map_load first = heap_pop(m);
        apply(m, &first, fn, arg);
    }
    report_live(m, m->root, fn, arg); /* in address order */
}
