/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_GDB: the GDB JIT interface (GDB manual, "JIT Compilation
 * Interface"): a process-wide list of in-memory object files that gdb reads
 * when it attaches or starts the program, and again each time the process
 * calls __jit_debug_register_code (gdb keeps a breakpoint there).
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
 * The descriptor is perftramp's own (see below), shared by every context
 * of the library, and guarded by one process-wide mutex.  Other JITs in
 * the process keep theirs. */
#include "config.h"

#include "emit/elf_image.h"
#include "emit/eh_frame.h"
#include "outputs/gdb_chunk.h"
#include "outputs/gdb_lazy.h"
#include "outputs/outputs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- the interface gdb knows (gdb/jit.h, GDB manual) ---------------- */
enum { PT_JIT_NOACTION = 0, PT_JIT_REGISTER = 1, PT_JIT_UNREGISTER = 2 };

struct jit_code_entry {
    struct jit_code_entry *next;
    struct jit_code_entry *prev;
    const char *symfile_addr;
    uint64_t symfile_size;
};

struct jit_descriptor {
    uint32_t version;
    uint32_t action_flag;
    struct jit_code_entry *relevant_entry;
    struct jit_code_entry *first_entry;
};

/* gdb breaks here; the asm keeps the call and the function alive.
 *
 * Both symbols are hidden: local to libperftramp.so (and, prelinked, to
 * libperftramp.a), never exported.  So perftramp's references bind to its
 * own copies (pc-relative, never through the GOT), and a host that defines
 * these names itself (CPython's JIT, LLVM ORC, LuaJIT) neither gets
 * perftramp's entries linked into its list, under perftramp's lock, nor
 * lends perftramp its own.  gdb finds a JIT by these names in each object
 * file's symbol table, locals included, so both JITs stay visible.  An
 * exported descriptor would not do: gdb takes a global data symbol of a
 * shared library for a possible copy relocation and reads the main
 * executable's symbol of the same name instead (gdb 13, checked by
 * tests/gdb_foreign_jit.sh), so a host defining its own descriptor hid
 * perftramp's from gdb.  The price: gdb needs libperftramp.so's symbol
 * table (an unstripped library, or its debug symbols; docs/unwinding.md). */
void __jit_debug_register_code(void) __attribute__((noinline, used, visibility("hidden")));
void __jit_debug_register_code(void)
{
    __asm__ volatile("" ::: "memory");
}

extern struct jit_descriptor __jit_debug_descriptor __attribute__((visibility("hidden")));
struct jit_descriptor __jit_debug_descriptor __attribute__((used)) = {1, 0, NULL, NULL};

static pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_once_t jit_atfork_once = PTHREAD_ONCE_INIT;

/* A fork while another thread holds jit_lock must not leave the child's
 * copy locked forever. */
static void jit_prepare(void)
{
    pthread_mutex_lock(&jit_lock);
}

static void jit_release(void)
{
    pthread_mutex_unlock(&jit_lock);
}

static void jit_install_atfork(void)
{
    pthread_atfork(jit_prepare, jit_release, jit_release);
}

static void jit_notify(struct jit_code_entry *e, uint32_t action)
{
    __jit_debug_descriptor.relevant_entry = e;
    __jit_debug_descriptor.action_flag = action;
    __jit_debug_register_code();
    __jit_debug_descriptor.relevant_entry = NULL;
    __jit_debug_descriptor.action_flag = PT_JIT_NOACTION;
}

/* Both called with jit_lock held. */
static void jit_link(struct jit_code_entry *e)
{
    e->prev = NULL;
    e->next = __jit_debug_descriptor.first_entry;
    if (e->next)
        e->next->prev = e;
    __jit_debug_descriptor.first_entry = e;
    jit_notify(e, PT_JIT_REGISTER);
}

static void jit_unlink(struct jit_code_entry *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else
        __jit_debug_descriptor.first_entry = e->next;
    if (e->next)
        e->next->prev = e->prev;
    jit_notify(e, PT_JIT_UNREGISTER);
    e->next = e->prev = NULL;
}

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

struct pt_gdb_batch;

struct pt_gdb {
    const struct pt_slots *slots; /* geometry: stride, FDE size, layout, arch */
    bool lazy; /* the stub understands these trampolines (gdb_lazy.h) */
    struct pt_buf program; /* the FDE program, shared by every slot */
    struct pt_gdb_batch *first, *last; /* published code, oldest batch first */
};

int pt_gdb_open(struct pt_gdb **out, const struct pt_slots *slots)
{
    pthread_once(&jit_atfork_once, jit_install_atfork);
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

/* A debugger keeps a software breakpoint inserted at
 * __jit_debug_register_code while the process runs (gdb inserts its
 * breakpoints at each resume, at the symbol's own address: checked with
 * gdb 13, -fcf-protection too); on x86-64 it is int3, 0xCC (Intel SDM
 * vol. 2, INT3).  Reading our own first code byte costs one load. */
static bool debugger_attached(void)
{
#if defined(__x86_64__)
    return *(const volatile uint8_t *)(uintptr_t)__jit_debug_register_code == 0xcc;
#else
    return false;
#endif
}

/* Debugger attached: the first PT_GDB_EAGER_PER_BURST wraps of a burst
 * are told to gdb at once, the rest at their first call (gdb_lazy.h).  A
 * burst ends when the program spends PT_GDB_BURST_GAP_NS between two
 * wraps, counted from the end of the first one's gdb work (gdb's own
 * stops take ~0.5 ms each, tens of ms on a loaded machine).  So a program
 * that makes a few trampolines and steps into them sees every instruction
 * named, and one that makes thousands under gdb is not slowed down 1 ms
 * per wrap. */
#define PT_GDB_EAGER_PER_BURST 128
#define PT_GDB_BURST_GAP_NS 100000000ull /* 100 ms */

static uint64_t burst_last_ns; /* end of the last wrap under a debugger, 0: none */
static unsigned burst_eager;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static bool wrap_goes_lazy(void)
{
    uint64_t now = monotonic_ns();
    pthread_mutex_lock(&jit_lock);
    if (burst_last_ns == 0 || now - burst_last_ns > PT_GDB_BURST_GAP_NS)
        burst_eager = 0;
    bool lazy = burst_eager >= PT_GDB_EAGER_PER_BURST;
    if (!lazy)
        burst_eager++;
    pthread_mutex_unlock(&jit_lock);
    return lazy;
}

static void burst_touch(void)
{
    uint64_t now = monotonic_ns();
    pthread_mutex_lock(&jit_lock);
    burst_last_ns = now;
    pthread_mutex_unlock(&jit_lock);
}

/* Whether slot `index` was written from the table the stub understands:
 * its call through the target word is where pt_gdb_lazy_layout found it
 * (a context may write some slots from a direct-call variant,
 * PERFTRAMP_NEAR_CALLS, which never reads the word). */
static bool slot_calls_through_word(const struct pt_gdb_arena *s, size_t index)
{
    const uint8_t *call = pt_slot_w(s->slots, s->arena, index) + lazy_ret_off - 6;
    return call[0] == 0xff && call[1] == 0x15;
}

static uint64_t *target_word(const struct pt_gdb_arena *s, size_t index)
{
    return (uint64_t *)(void *)(pt_slot_w(s->slots, s->arena, index) + lazy_word_off);
}

/* With jit_lock held: stubbed slots of chunk k call their real targets
 * again (gdb knows them now, or the chunk goes). */
static void chunk_unstub(struct pt_gdb_arena *s, size_t k)
{
    struct pt_gdb_chunk *c = &s->chunks[k];
    for (uint64_t m = c->stubbed; m; m &= m - 1) {
        size_t j = (size_t)__builtin_ctzll(m);
        __atomic_store_n(target_word(s, k * PT_GDB_CHUNK_SLOTS + j), (uint64_t)c->real[j], __ATOMIC_RELEASE);
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
    uint64_t *w = target_word(s, index);
    c->real[j] = (uintptr_t)__atomic_load_n(w, __ATOMIC_ACQUIRE);
    c->stubbed |= (uint64_t)1 << j;
    __atomic_store_n(w, (uint64_t)pt_gdb_lazy_stub_addr(), __ATOMIC_RELEASE);
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
    uintptr_t target = (uintptr_t)__atomic_load_n((const uint64_t *)(slot_x + lazy_word_off), __ATOMIC_ACQUIRE);
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
    pt_gdb_image_remove(&c->image, j, g->slots->stride);
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
    uint8_t *image = pt_elf_build(arch->elf_machine, arch->big_endian, secs, b->n + 1, syms, b->n, &len);
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

void pt_gdb_close(struct pt_gdb *g)
{
    if (!g)
        return;
    while (g->first) {
        struct pt_gdb_batch *b = g->first;
        for (size_t i = 0; i < b->n; i++) {
            *b->m[i]->owner = NULL;
            free(b->m[i]);
        }
        b->n = 0;
        batch_unlink_free(g, b);
    }
    pt_buf_free(&g->program);
    free(g);
}
