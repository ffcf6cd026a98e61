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
#include "outputs/outputs.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

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
};

struct pt_gdb_arena {
    size_t n_chunks;
    struct pt_gdb_chunk chunks[];
};

struct pt_gdb_batch;

struct pt_gdb {
    const struct pt_slots *slots; /* geometry: stride, FDE size, layout, arch */
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
    *out = g;
    return 0;
}

static struct pt_gdb_arena *arena_state(struct pt_arena *a)
{
    if (!a->gdb_handle) {
        size_t n = (a->n_slots + PT_GDB_CHUNK_SLOTS - 1) / PT_GDB_CHUNK_SLOTS;
        struct pt_gdb_arena *s = calloc(1, sizeof *s + n * sizeof s->chunks[0]);
        if (!s)
            return NULL;
        s->n_chunks = n;
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
static void chunk_changed(struct pt_gdb_chunk *c)
{
    pthread_mutex_lock(&jit_lock);
    jit_notify(&c->entry, PT_JIT_UNREGISTER);
    jit_notify(&c->entry, PT_JIT_REGISTER);
    pthread_mutex_unlock(&jit_lock);
}

/* (Re)builds chunk k's image from its named slots plus `add` (a slot
 * index in the chunk, or -1) and swaps it in. */
static int chunk_rebuild(struct pt_gdb *g, struct pt_arena *a, struct pt_gdb_chunk *c, size_t k, int add)
{
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
    if (!c->image.data ||
        pt_gdb_image_add(&c->image, j, g->slots->stride, g->slots->layout->size, a->names[index]) < 0)
        return chunk_rebuild(g, a, c, k, (int)j); /* first symbol, or the names are full */
    c->named |= (uint64_t)1 << j;
    chunk_changed(c);
    return 0;
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
    if (c->named == 0) {
        pthread_mutex_lock(&jit_lock);
        chunk_drop(c);
        pthread_mutex_unlock(&jit_lock);
        return 0;
    }
    pt_gdb_image_remove(&c->image, j, g->slots->stride);
    chunk_changed(c);
    return 0;
}

void pt_gdb_arena_removed(struct pt_gdb *g, struct pt_arena *a)
{
    (void)g;
    struct pt_gdb_arena *s = a->gdb_handle;
    if (!s)
        return;
    pthread_mutex_lock(&jit_lock);
    for (size_t k = s->n_chunks; k-- > 0;)
        chunk_drop(&s->chunks[k]);
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
