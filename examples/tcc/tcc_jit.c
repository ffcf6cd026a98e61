/* SPDX-License-Identifier: MIT */
/* libtcc + perftramp_publish.
 *
 * Layout.  Each function is compiled in its own TCCState and relocated
 * (tcc_relocate into our buffer) at the next free spot of one RWX arena,
 * followed by TCC_JIT_GAP bytes nothing is placed in.  Why not one state
 * for all: tcc packs the functions of a state back to back, and perf
 * treats each jitdump LOAD as mapping [addr, addr + ALIGN8(size) +
 * mapped_size), where mapped_size is the size of the unwinding data
 * perftramp attaches (.eh_frame + .eh_frame_hdr, about 100 bytes for a
 * tcc function).  Packed functions overlap the next one's mapping, the
 * later mapping wins, and perf's DWARF unwinding fails in all but the
 * last function.  With one image per function and a gap after each image
 * (its data, GOT and PLT come after its code, then the gap) every mapping
 * ends before the next function starts.
 *
 * Size.  tcc_list_symbols lists every symbol of the image, `_etext`
 * included: a function ends where the next symbol of the image (or
 * `_etext`) begins.  Trailing padding is skipped back to the epilogue.
 *
 * Rows.  tcc's x86-64 code generator (x86_64-gen.c, gen_func_prolog /
 * gen_func_epilog) starts every function with the 11 bytes
 *     55                push %rbp
 *     48 89 e5          mov  %rsp,%rbp
 *     48 81 ec imm32    sub  $N,%rsp   (always the imm32 form: patched)
 * and ends it with its only epilogue (`return` jumps there)
 *     c9                leave
 *     c3                ret
 * Nothing else moves the CFA once it is %rbp-based.  So, in DWARF
 * numbers of the System V AMD64 psABI (rbp 6, rsp 7):
 *     +1          CFA = rsp+16, rbp saved at CFA-16
 *     +4          CFA = rbp (+16)
 *     at `ret`    CFA = rsp+8, rbp restored
 * A function that does not start and end so is refused, never published
 * with guessed rows. */
#define _GNU_SOURCE
#include "tcc_jit.h"

#include <libtcc.h>

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* > the ~100 bytes of unwinding data perftramp writes per tcc function */
#define TCC_JIT_GAP 512
#define TCC_JIT_ALIGN 64

struct tcc_jit_sym {
    char *name;
    const void *addr;
};

struct tcc_jit_fn {
    char *name;
    uint8_t *addr;
    size_t size;
};

struct tcc_jit {
    perftramp *pt;
    uint8_t *mem;
    size_t capacity, used;
    struct tcc_jit_sym *syms;
    size_t n_syms;
    struct tcc_jit_fn *fns;
    size_t n_fns;
};

struct tcc_jit *tcc_jit_new(perftramp *pt, size_t capacity)
{
    struct tcc_jit *j = calloc(1, sizeof *j);
    if (!j)
        return NULL;
    j->mem = mmap(NULL, capacity, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (j->mem == MAP_FAILED) {
        free(j);
        return NULL;
    }
    j->pt = pt;
    j->capacity = capacity;

    return j;
}

int tcc_jit_symbol(struct tcc_jit *j, const char *name, const void *addr)
{
    struct tcc_jit_sym *s = realloc(j->syms, (j->n_syms + 1) * sizeof *s);
    if (!s)
        return -1;
    j->syms = s;
    s[j->n_syms].name = strdup(name);
    if (!s[j->n_syms].name)
        return -1;
    s[j->n_syms++].addr = addr;
    return 0;
}

static void report_error(void *opaque, const char *msg)
{
    fprintf(stderr, "tcc (%s): %s\n", (const char *)opaque, msg);
}

/* The lowest symbol address in (addr, end]: where the function at addr ends. */
struct bound {
    uintptr_t addr, end, next;
};
static void bound_cb(void *ctx, const char *name, const void *val)
{
    (void)name;
    struct bound *b = ctx;
    uintptr_t v = (uintptr_t)val;
    if (v > b->addr && v <= b->end && v < b->next)
        b->next = v;
}

static const uint8_t tcc_prologue[] = {0x55, 0x48, 0x89, 0xe5, 0x48, 0x81, 0xec};

/* Finds the size of the function `name` of the image [.., end), checks
 * tcc's prologue and epilogue, and publishes it with the rows. */
static int publish_fn(struct tcc_jit *j, TCCState *s, const char *name, uintptr_t end)
{
    uint8_t *addr = tcc_get_symbol(s, name);
    if (!addr) {
        fprintf(stderr, "tcc_jit: %s not defined by its source\n", name);
        return -1;
    }
    struct bound b = {.addr = (uintptr_t)addr, .end = end, .next = UINTPTR_MAX};
    tcc_list_symbols(s, &b, bound_cb);
    if (b.next == UINTPTR_MAX) {
        fprintf(stderr, "tcc_jit: %s: no symbol after it (no _etext?)\n", name);
        return -1;
    }
    size_t size = b.next - (uintptr_t)addr;
    while (size > 2 && (addr[size - 1] == 0x00 || addr[size - 1] == 0x90) && addr[size - 2] != 0xc9)
        size--; /* alignment padding after `ret` */
    if (size < sizeof tcc_prologue + 2 || memcmp(addr, tcc_prologue, sizeof tcc_prologue) != 0 ||
        addr[size - 2] != 0xc9 || addr[size - 1] != 0xc3) {
        fprintf(stderr, "tcc_jit: %s does not start with tcc's prologue and end with leave; ret: not published\n",
                name);
        return -1;
    }
    const struct perftramp_cfi rows[] = {
        {.offset = 1, .op = PERFTRAMP_CFI_DEF_CFA_OFFSET, .value = 16},
        {.offset = 1, .op = PERFTRAMP_CFI_OFFSET, .reg = 6, .value = -16},
        {.offset = 4, .op = PERFTRAMP_CFI_DEF_CFA_REGISTER, .reg = 6},
        {.offset = (uint32_t)(size - 1), .op = PERFTRAMP_CFI_DEF_CFA, .reg = 7, .value = 8},
        {.offset = (uint32_t)(size - 1), .op = PERFTRAMP_CFI_RESTORE, .reg = 6},
    };
    struct perftramp_code c = {.addr = addr, .size = size, .name = name, .cfi = rows, .n_cfi = 5};
    struct tcc_jit_fn *fns = realloc(j->fns, (j->n_fns + 1) * sizeof *fns);
    char *copy = strdup(name);
    if (fns)
        j->fns = fns;
    if (!fns || !copy) {
        free(copy);
        return -1;
    }
    if (perftramp_publish(j->pt, &c) < 0) {
        fprintf(stderr, "tcc_jit: perftramp_publish(%s): %s\n", name, strerror(errno));
        free(copy);
        return -1;
    }
    fns[j->n_fns++] = (struct tcc_jit_fn){.name = copy, .addr = addr, .size = size};
    return 0;
}

int tcc_jit_compile_group(struct tcc_jit *j, const char *const *names, size_t n, const char *source)
{
    TCCState *s = tcc_new();
    if (!s || n == 0)
        return -1;
    int r = -1;
    tcc_set_error_func(s, (void *)names[0], report_error);
    tcc_set_options(s, "-nostdlib");
    tcc_set_output_type(s, TCC_OUTPUT_MEMORY);
    for (size_t k = 0; k < j->n_syms; k++)
        tcc_add_symbol(s, j->syms[k].name, j->syms[k].addr);
    for (size_t k = 0; k < j->n_fns; k++)
        tcc_add_symbol(s, j->fns[k].name, j->fns[k].addr);
    if (tcc_compile_string(s, source) < 0)
        goto out;
    int need = tcc_relocate(s, NULL);
    size_t at = (j->used + TCC_JIT_ALIGN - 1) & ~(size_t)(TCC_JIT_ALIGN - 1);
    if (need <= 0 || at + (size_t)need + TCC_JIT_GAP > j->capacity) {
        fprintf(stderr, "tcc_jit: %s: no room (%d bytes)\n", names[0], need);
        goto out;
    }
    if (tcc_relocate(s, j->mem + at) < 0)
        goto out;
    j->used = at + (size_t)need + TCC_JIT_GAP; /* placed: never reused, even on a failure below */
    for (size_t k = 0; k < n; k++)
        if (publish_fn(j, s, names[k], (uintptr_t)j->mem + at + (size_t)need) < 0)
            goto out;
    r = 0;
out:
    tcc_delete(s);
    return r;
}

void *tcc_jit_compile(struct tcc_jit *j, const char *name, const char *source)
{
    if (tcc_jit_compile_group(j, &name, 1, source) < 0)
        return NULL;
    return j->fns[j->n_fns - 1].addr;
}

int tcc_jit_range(const struct tcc_jit *j, const char *name, const void **addr, size_t *size)
{
    for (size_t k = 0; k < j->n_fns; k++)
        if (j->fns[k].name && strcmp(j->fns[k].name, name) == 0) {
            *addr = j->fns[k].addr;
            *size = j->fns[k].size;
            return 0;
        }
    return -1;
}

void tcc_jit_free(struct tcc_jit *j)
{
    if (!j)
        return;
    for (size_t k = 0; k < j->n_fns; k++) {
        perftramp_unpublish(j->pt, j->fns[k].addr);
        free(j->fns[k].name);
    }
    for (size_t k = 0; k < j->n_syms; k++)
        free(j->syms[k].name);
    munmap(j->mem, j->capacity);
    free(j->fns);
    free(j->syms);
    free(j);
}
