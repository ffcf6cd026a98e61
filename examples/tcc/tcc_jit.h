/* SPDX-License-Identifier: MIT */
/* A tiny JIT on top of libtcc that publishes every function it compiles
 * with perftramp_publish (examples/tcc/README.md, docs/jit-guide.md). */
#ifndef TCC_JIT_H
#define TCC_JIT_H

#include <perftramp.h>

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

struct tcc_jit;

/* An executable arena of `capacity` bytes whose functions are published
 * to pt (which must outlive the JIT). NULL with errno on failure. */
struct tcc_jit *tcc_jit_new(perftramp *pt, size_t capacity);

/* A host function or object the compiled code may use, by name. */
int tcc_jit_symbol(struct tcc_jit *j, const char *name, const void *addr);

/* Compiles `source`, which defines the function `name` (and declares what
 * it calls: host symbols and functions compiled earlier), places it in the
 * arena, publishes it and returns its address; NULL with a message on
 * stderr on failure.  Later sources may call it by name. */
void *tcc_jit_compile(struct tcc_jit *j, const char *name, const char *source);

/* The trap tcc_jit_compile avoids, for showing it (tests/clients/tcc.sh): the
 * functions `names` of one source compiled in ONE state, so tcc packs them
 * back to back, each published.  0, or -1. */
int tcc_jit_compile_group(struct tcc_jit *j, const char *const *names, size_t n, const char *source);

/* The published range of a compiled function: 0, or -1 if unknown. */
int tcc_jit_range(const struct tcc_jit *j, const char *name, const void **addr, size_t *size);

void tcc_jit_free(struct tcc_jit *j); /* unpublishes and unmaps */

#ifdef __cplusplus
}
#endif

#endif
