/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: the trampolines of each arena, told to gdb
 * in chunks.  The GDB JIT interface (GDB manual, "JIT Compilation
 * Interface", gdb_protocol.c) is a process-wide list of in-memory object
 * files that gdb reads when it attaches or starts the program, and again
 * each time the process calls __jit_debug_register_code (gdb keeps a
 * breakpoint there).
 *
 * What we hand gdb: one ELF (src/emit/elf_image.c) per *chunk* of
 * PT_GDB_CHUNK_SLOTS consecutive slots of an arena, holding
 *   .text      SHT_NOBITS at the chunk's executable address (gdb reads the
 *              code from the process),
 *   .eh_frame  the chunk's CIE + FDEs, placed at an address inside the
 *              arena's own .eh_frame area (never over code), pcrel pointers
 *              computed for that address,
 *   .symtab    one STT_FUNC per live trampoline, named as wrapped.
 * Chunks never overlap, so gdb's pc -> section -> symbol lookup is exact.
 *
 * The publication rule: perftramp_wrap() and perftramp_release() rebuild
 * and re-register the chunk that holds the slot BEFORE they return.  So a
 * trampoline is known to gdb before any code can run through it, and a
 * breakpoint anywhere shows every trampoline that exists at that moment.
 * Batching is spatial, not temporal: one entry covers up to
 * PT_GDB_CHUNK_SLOTS trampolines, so the number of entries gdb holds (and
 * re-walks on each registration) is live/PT_GDB_CHUNK_SLOTS, and each
 * registration costs gdb O(PT_GDB_CHUNK_SLOTS), whatever the total: linear
 * overall instead of quadratic.  One entry per trampoline makes gdb
 * quadratic; one per arena makes every wrap rebuild up to ~200,000 symbols.
 *
 * The descriptor is perftramp's own (gdb_protocol.c), shared by every context
 * of the library, and guarded by one process-wide mutex.  Other JITs in
 * the process keep theirs. */
#include "config.h"

#include "emit/eh_frame.h"
#include "outputs/gdb_burst.h"
#include "outputs/gdb_chunk.h"
#include "outputs/gdb_lazy.h"
#include "outputs/gdb_protocol.h"
#include "outputs/gdb_state.h"
#include "outputs/outputs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* ---- chunks ---------------------------------------------------------- */
struct pt_gdb_chunk {
    struct jit_code_entry entry;
    struct pt_gdb_image image; /* image.data: registered, or NULL */
    uint64_t named;            /* bit j: slot first+j has a symbol */
    /* debugger attached (gdb_lazy.h): bit j = slot first+j calls the stub
     * until gdb has re-read the chunk; real[j] is its target */
    uint64_t stubbed;
    uintptr_t real[PT_GDB_CHUNK_SLOTS];
};

struct pt_gdb_arena {
    struct pt_arena *arena;
    const struct pt_slots *slots;
    struct pt_gdb_arena *lazy_prev, *lazy_next; /* on lazy_arenas: may hold stubbed slots */
    bool on_lazy_list;
    size_t n_chunks;
    struct pt_gdb_chunk chunks[];
};

/* Arenas with stubbed slots, and where a stubbed trampoline's target word
 * lies from the return address its call pushed: guarded by jit_lock. */
static struct pt_gdb_arena *lazy_arenas;
static size_t lazy_ret_off, lazy_word_off;
static bool lazy_offsets_set;

int pt_gdb_open(struct pt_gdb **out, const struct pt_slots *slots)
{
    jit_init();
    struct pt_gdb *g = calloc(1, sizeof *g);
    if (!g) {
        errno = ENOMEM;
        return -1;
    }
    g->slots = slots;
    pt_buf_init(&g->program, slots->arch->big_endian);
    if (pt_cfi_program(&g->program, slots->layout) < 0 || g->program.failed) {
        int e = g->program.failed ? ENOMEM : errno;
        pt_buf_free(&g->program);
        free(g);
        errno = e;
        return -1;
    }
    size_t ret_off;
    if (pt_gdb_lazy_stub_addr() && pt_gdb_lazy_layout(slots->layout, &ret_off)) {
        pthread_mutex_lock(&jit_lock);
        if (!lazy_offsets_set) {
            lazy_ret_off = ret_off;
            lazy_word_off = slots->layout->word_off[PT_WORD_TARGET];
            lazy_offsets_set = true;
        }
        /* one stub for the process: only for trampolines shaped alike */
        g->lazy = lazy_ret_off == ret_off && lazy_word_off == slots->layout->word_off[PT_WORD_TARGET];
        pthread_mutex_unlock(&jit_lock);
    }
    *out = g;
    return 0;
}

/* Whether slot `index` was written from the table the stub understands:
 * its call through the target word is where pt_gdb_lazy_layout found it
 * (a context may write some slots from a direct-call variant,
 * PERFTRAMP_NEAR_CALLS, which never reads the word). */
static bool slot_calls_through_word(const struct pt_gdb_arena *s, size_t index)
{
    return pt_gdb_lazy_slot_calls(pt_slot_w(s->slots, s->arena, index), lazy_ret_off);
}

/* The host table's target word: an address of this process's size. */
static uintptr_t *target_word(const struct pt_gdb_arena *s, size_t index)
{
    return (uintptr_t *)(void *)(pt_slot_w(s->slots, s->arena, index) + lazy_word_off);
}

/* With jit_lock held: stubbed slots of chunk k call their real targets
 * again (gdb knows them now, or the chunk goes). */
static void chunk_unstub(struct pt_gdb_arena *s, size_t k)
{
    struct pt_gdb_chunk *c = &s->chunks[k];
    for (uint64_t m = c->stubbed; m; m &= m - 1) {
        size_t j = (size_t)__builtin_ctzll(m);
        __atomic_store_n(target_word(s, k * PT_GDB_CHUNK_SLOTS + j), c->real[j], __ATOMIC_RELEASE);
    }
    c->stubbed = 0;
}

static struct pt_gdb_arena *arena_state(struct pt_arena *a)
{
    if (!a->gdb_handle) {
        size_t n = (a->n_slots + PT_GDB_CHUNK_SLOTS - 1) / PT_GDB_CHUNK_SLOTS;
        struct pt_gdb_arena *s = calloc(1, sizeof *s + n * sizeof s->chunks[0]);
        if (!s)
            return NULL;
        s->n_chunks = n;
        s->arena = a;
        a->gdb_handle = s;
    }
    return a->gdb_handle;
}

/* With jit_lock held. */
static void chunk_drop(struct pt_gdb_chunk *c)
{
    if (!c->image.data)
        return;
    jit_unlink(&c->entry);
    pt_gdb_image_free(&c->image);
    c->named = 0;
}

/* Tells gdb the chunk's image changed: it drops the objfile it made from
 * the entry and reads the entry again.  The entry stays on the list all
 * along (complete at every instruction: gdb_chunk.h), so a debugger that
 * attaches meanwhile reads it whole.  With no debugger this is two calls
 * of an empty function. */
static void chunk_changed_locked(struct pt_gdb_arena *s, size_t k)
{
    struct pt_gdb_chunk *c = &s->chunks[k];
    jit_notify(&c->entry, PT_JIT_UNREGISTER);
    jit_notify(&c->entry, PT_JIT_REGISTER);
    chunk_unstub(s, k);
}

static void chunk_changed(struct pt_gdb_arena *s, size_t k)
{
    pthread_mutex_lock(&jit_lock);
    chunk_changed_locked(s, k);
    pthread_mutex_unlock(&jit_lock);
}

/* Debugger attached: slot `index` (in chunk k, already in its image)
 * calls the stub until gdb re-reads the chunk (gdb_lazy.h). */
static void slot_stub(struct pt_gdb_arena *s, size_t k, size_t index)
{
    struct pt_gdb_chunk *c = &s->chunks[k];
    size_t j = index % PT_GDB_CHUNK_SLOTS;
    pthread_mutex_lock(&jit_lock);
    if (!s->on_lazy_list) {
        s->lazy_prev = NULL;
        s->lazy_next = lazy_arenas;
        if (lazy_arenas)
            lazy_arenas->lazy_prev = s;
        lazy_arenas = s;
        s->on_lazy_list = true;
    }
    uintptr_t *w = target_word(s, index);
    c->real[j] = __atomic_load_n(w, __ATOMIC_ACQUIRE);
    c->stubbed |= (uint64_t)1 << j;
    __atomic_store_n(w, pt_gdb_lazy_stub_addr(), __ATOMIC_RELEASE);
    pthread_mutex_unlock(&jit_lock);
}

uintptr_t pt_gdb_first_call(uintptr_t ret)
{
    pthread_mutex_lock(&jit_lock);
    uintptr_t slot_x = ret - lazy_ret_off;
    for (struct pt_gdb_arena *s = lazy_arenas; s; s = s->lazy_next) {
        struct pt_arena *a = s->arena;
        if (slot_x < a->x || slot_x >= a->x + a->n_slots * s->slots->stride)
            continue;
        size_t index = (slot_x - a->x) / s->slots->stride;
        size_t k = index / PT_GDB_CHUNK_SLOTS;
        if (s->chunks[k].stubbed >> (index % PT_GDB_CHUNK_SLOTS) & 1)
            chunk_changed_locked(s, k); /* gdb re-reads the chunk: it stops here twice */
        break;
    }
    /* the real target is back in the word: put back above, or by another
     * thread's first call, a later wrap's re-read or the chunk's removal */
    uintptr_t target = __atomic_load_n((const uintptr_t *)(slot_x + lazy_word_off), __ATOMIC_ACQUIRE);
    pthread_mutex_unlock(&jit_lock);
    return target;
}

/* (Re)builds chunk k's image from its named slots plus `add` (a slot
 * index in the chunk, or -1) and swaps it in. */
static int chunk_rebuild(struct pt_gdb *g, struct pt_arena *a, struct pt_gdb_arena *s, size_t k, int add)
{
    struct pt_gdb_chunk *c = &s->chunks[k];
    size_t first = k * PT_GDB_CHUNK_SLOTS;
    uint64_t named = c->named | (add >= 0 ? (uint64_t)1 << add : 0);
    struct pt_gdb_image im;
    if (pt_gdb_image_build(&im, g->slots, a, first, named, g->program.data, g->program.len,
                           add >= 0 ? c->image.str_used + strlen(a->names[first + (size_t)add]) + 1 : 0) < 0)
        return -1;
    pthread_mutex_lock(&jit_lock);
    chunk_drop(c);
    c->image = im;
    c->named = named;
    c->entry.symfile_addr = (const char *)im.data;
    c->entry.symfile_size = im.len;
    jit_link(&c->entry);
    chunk_unstub(s, k);
    pthread_mutex_unlock(&jit_lock);
    return 0;
}

int pt_gdb_add(struct pt_gdb *g, struct pt_arena *a, size_t index)
{
    struct pt_gdb_arena *s = arena_state(a);
    if (!s) {
        errno = ENOMEM;
        return -1;
    }
    if (!a->names || !a->names[index])
        return 0;
    size_t k = index / PT_GDB_CHUNK_SLOTS, j = index % PT_GDB_CHUNK_SLOTS;
    struct pt_gdb_chunk *c = &s->chunks[k];
    if (c->named >> j & 1)
        return 0; /* already there (switching the output on again) */
    s->slots = g->slots;
    bool watched = g->lazy && debugger_attached();
    int r = 0;
    if (!c->image.data ||
        pt_gdb_image_add(&c->image, j, g->slots->stride, g->slots->layout->size, a->names[index]) < 0) {
        r = chunk_rebuild(g, a, s, k, (int)j); /* first symbol, or the names are full */
    } else {
        c->named |= (uint64_t)1 << j;
        if (watched && slot_calls_through_word(s, index) && wrap_goes_lazy())
            slot_stub(s, k, index); /* gdb re-reads the chunk at the first call (gdb_lazy.h) */
        else
            chunk_changed(s, k);
    }
    if (watched)
        burst_touch();
    return r;
}

int pt_gdb_remove(struct pt_gdb *g, struct pt_arena *a, size_t index)
{
    struct pt_gdb_arena *s = a->gdb_handle;
    if (!s)
        return 0;
    size_t k = index / PT_GDB_CHUNK_SLOTS, j = index % PT_GDB_CHUNK_SLOTS;
    struct pt_gdb_chunk *c = &s->chunks[k];
    if (!(c->named >> j & 1))
        return 0;
    c->named &= ~((uint64_t)1 << j);
    pthread_mutex_lock(&jit_lock);
    c->stubbed &= ~((uint64_t)1 << j); /* its slot gets a trap, then maybe a new trampoline */
    pthread_mutex_unlock(&jit_lock);
    if (c->named == 0) {
        pthread_mutex_lock(&jit_lock);
        chunk_unstub(s, k);
        chunk_drop(c);
        pthread_mutex_unlock(&jit_lock);
        return 0;
    }
    pt_gdb_image_remove(&c->image, j, g->slots->stride, c->named);
    chunk_changed(s, k);
    return 0;
}

void pt_gdb_arena_removed(struct pt_gdb *g, struct pt_arena *a)
{
    (void)g;
    struct pt_gdb_arena *s = a->gdb_handle;
    if (!s)
        return;
    pthread_mutex_lock(&jit_lock);
    for (size_t k = s->n_chunks; k-- > 0;) {
        chunk_unstub(s, k);
        chunk_drop(&s->chunks[k]);
    }
    if (s->on_lazy_list) {
        if (s->lazy_prev)
            s->lazy_prev->lazy_next = s->lazy_next;
        else
            lazy_arenas = s->lazy_next;
        if (s->lazy_next)
            s->lazy_next->lazy_prev = s->lazy_prev;
    }
    pthread_mutex_unlock(&jit_lock);
    free(s);
    a->gdb_handle = NULL;
}

void pt_gdb_close(struct pt_gdb *g)
{
    if (!g)
        return;
    pt_gdb_batches_free(g);
    pt_buf_free(&g->program);
    free(g);
}
