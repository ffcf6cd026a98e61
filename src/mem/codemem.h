/* SPDX-License-Identifier: MIT */
/* Code memory: blocks of bytes written through one address and executed
 * at another (or the same).  Each kind of memory is a backend in its own
 * file (code_ffi.c, code_doublemap.c); codemem.c picks one per process.
 * A new kind of memory is one new file with a struct pt_code_backend and
 * one line in codemem.c's choice. */
#ifndef PERFTRAMP_MEM_CODEMEM_H
#define PERFTRAMP_MEM_CODEMEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One block.  w and x name the same bytes: w may be written, x may be
 * executed (w == (uint8_t *)x where the memory is mapped writable and
 * executable at once).  x is aligned to the `align` asked for. */
struct pt_code_block {
    uint8_t *w;
    uintptr_t x;
    size_t bytes;                          /* usable from w / x: at least what was asked */
    const struct pt_code_backend *backend; /* who frees it */
    const char *kind;                      /* which memory: "libffi", "shared-anon", "memfd", "tmpfile", "elf" */
    /* the backend's own bookkeeping */
    void *base, *xbase;
    size_t map_bytes;
    struct pt_code_block *live_prev, *live_next; /* blocks a fork must part (double map) */
    void *fork_w, *fork_x;                       /* the parent's copy while a fork runs */
    const char *fork_kind;
    struct pt_elf_file *elf;                     /* a file-backed ELF arena (elf_arena.h), else NULL */
};

struct pt_code_backend {
    const char *name;
    /* Fills b with at least `bytes` bytes whose executable address is
     * aligned to `align` (a power of two).  0, or -1 with errno.  b must
     * stay at its address until it is freed. */
    int (*alloc)(struct pt_code_block *b, size_t bytes, size_t align);
    void (*free)(struct pt_code_block *b);
    /* pthread_atfork handlers, or NULL: memory that fork would leave
     * shared between parent and child (MAP_SHARED) must be parted here. */
    void (*fork_prepare)(void);
    void (*fork_parent)(void);
    void (*fork_child)(void);
};

/* libffi closures (code_ffi.c): the first choice. */
extern const struct pt_code_backend pt_code_ffi;
/* perftramp's own double mapping (code_doublemap.c). */
extern const struct pt_code_backend pt_code_doublemap;
/* File-backed ELF arenas (elf_arena.c): not chosen here but asked for by
 * the arenas of a context with PERFTRAMP_ELF; listed for its fork handlers. */
extern const struct pt_code_backend pt_code_elf;

/* Whether this libffi's closures are code we can write: 1 yes, 0 no
 * (static trampolines: the code pointer is a shared trampoline, not our
 * bytes), -1 with errno when it could not tell (ENOMEM).  Never writes
 * into the closure's header, so the closure it frees is intact. */
int pt_ffi_closures_are_code(void);

/* Installs the backends' fork handlers, once per process.  Call it before
 * any other pthread_atfork registration that must run first in the parent
 * (handlers registered later run earlier in prepare: the context locks
 * are then held while the backends copy). */
void pt_code_init(void);

/* A block from this process's backend: libffi when its closures are
 * writable code, else the double mapping.  The choice is made at the
 * first call that can make it and kept for the life of the process.
 * 0, or -1 with errno (see the backends). */
int pt_code_alloc(struct pt_code_block *b, size_t bytes, size_t align);
void pt_code_free(struct pt_code_block *b);

/* Faults the whole pages of [off, off + len) of the block in, writable,
 * in one system call (MADV_POPULATE_WRITE) rather than one fault per page
 * at first write.  Best effort: kernels before 5.14 refuse it, and the
 * pages then fault as usual.  Skips file-backed ELF arenas.  (prefault.c) */
void pt_code_prefault(const struct pt_code_block *b, size_t off, size_t len);
/* On by default; benchmarks turn it off to measure what it saves. */
void pt_code_prefault_enable(bool on);

/* The backend this process settled on, NULL before the first block. */
const struct pt_code_backend *pt_code_backend_chosen(void);
/* Forgets the choice: the next block probes libffi again.  For tests
 * that change what libffi returns within one process. */
void pt_code_choice_reset(void);

#endif
