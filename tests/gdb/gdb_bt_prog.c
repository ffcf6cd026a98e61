/* SPDX-License-Identifier: MIT */
/* The program tests/gdb/gdb_bt.sh and bench/gdb_bt_time.sh debug: makes N
 * trampolines (argv[1], default 0), then one more named "py::chosen" that
 * calls gdb_target, and calls it from gdb_caller.  gdb breaks in
 * gdb_target; `bt` must show gdb_target <- py::chosen <- gdb_caller <- main.
 * argv[2] = "release": release the others first (the chunk is rebuilt).
 * argv[2] = "wait": print "ready <pid>" and wait inside gdb_target until
 * a debugger attaches and sets gdb_go (bench/gdb_bt_time.sh).
 *
 * argv[1] = "hidden" [EDIT] (x86-64; tests/perf/hidden_rbp.S): garbage in %rbp.
 *   main -> hidden_main -> gdb_hidden_caller -> py::outer -> pt_hidden_loop
 *        -> py::chosen -> gdb_target
 * py::outer wraps pt_hidden_loop, which keeps garbage in %rbp while it calls
 * py::chosen, so py::chosen is entered (and left) with garbage in %rbp.
 * EDIT changes the JIT ELF images perftramp registered, the way a broken
 * producer would have written them, and re-registers them before the call:
 *   strip   .eh_frame renamed (gdb finds no CFI for the trampolines)
 *   cfa24   every DW_CFA_def_cfa_offset 16 in .eh_frame becomes 24
 * The library offers no such switch: the program edits its own registered
 * images through the GDB JIT interface's descriptor list. */
#include "perftramp.h"

#include <elf.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef int (*int_fn)(int);

__attribute__((noinline)) int gdb_target(int x);
__attribute__((noinline)) int gdb_caller(int_fn fn, int x);
__attribute__((noinline)) int gdb_other(int x);

volatile int gdb_wait, gdb_go;

int gdb_target(int x)
{
    if (gdb_wait) {
        printf("ready %d\n", (int)getpid());
        fflush(stdout);
        while (!gdb_go)
            usleep(1000);
    }
    __asm__ volatile("" ::: "memory");
    return x * 2;
}

int gdb_other(int x)
{
    return x;
}

int gdb_caller(int_fn fn, int x)
{
    int r = fn(x);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

#if defined(__x86_64__)
long pt_hidden_loop(long (*fn)(long), long arg, long n); /* tests/perf/hidden_rbp.S */
#define HAVE_HIDDEN_RBP 1
#endif

/* The GDB JIT interface (GDB manual, "JIT Compilation Interface"), as
 * the library defines it (hidden symbols: linked in statically). */
struct jit_code_entry {
    struct jit_code_entry *next, *prev;
    const char *symfile_addr;
    uint64_t symfile_size;
};
struct jit_descriptor {
    uint32_t version, action_flag;
    struct jit_code_entry *relevant_entry, *first_entry;
};
extern struct jit_descriptor __jit_debug_descriptor;
void __jit_debug_register_code(void);
enum { JIT_NOACTION = 0, JIT_REGISTER = 1, JIT_UNREGISTER = 2 };

static void jit_notify(struct jit_code_entry *e, uint32_t action)
{
    __jit_debug_descriptor.relevant_entry = e;
    __jit_debug_descriptor.action_flag = action;
    __jit_debug_register_code();
    __jit_debug_descriptor.relevant_entry = NULL;
    __jit_debug_descriptor.action_flag = JIT_NOACTION;
}

/* Applies EDIT to one in-memory ELF64 image; returns the bytes changed. */
static int edit_image(uint8_t *img, size_t len, const char *edit)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)img;
    if (len < sizeof *eh || memcmp(img, ELFMAG, SELFMAG) || eh->e_shoff > len ||
        eh->e_shnum > (len - eh->e_shoff) / sizeof(Elf64_Shdr) || eh->e_shstrndx >= eh->e_shnum)
        return -1;
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(img + eh->e_shoff);
    const Elf64_Shdr *strs = &sh[eh->e_shstrndx];
    int changed = 0;
    for (unsigned i = 0; i < eh->e_shnum; i++) {
        if (strs->sh_offset + sh[i].sh_name + sizeof ".eh_frame" > len)
            return -1;
        char *name = (char *)img + strs->sh_offset + sh[i].sh_name;
        if (strcmp(name, ".eh_frame") != 0)
            continue;
        if (strcmp(edit, "strip") == 0) {
            memcpy(name, ".no_frame", sizeof ".no_frame"); /* gdb looks for .eh_frame by name */
            changed++;
            continue;
        }
        if (sh[i].sh_offset > len || sh[i].sh_size > len - sh[i].sh_offset)
            return -1;
        /* DW_CFA_def_cfa_offset (0x0e) 16, then DW_CFA_offset rbp (0x86): the
         * x86-64 trampoline's "after push %rbp" row (DWARF 4, 7.23) */
        uint8_t *p = img + sh[i].sh_offset;
        for (uint64_t k = 0; k + 2 < sh[i].sh_size; k++)
            if (p[k] == 0x0e && p[k + 1] == 16 && p[k + 2] == 0x86) {
                p[k + 1] = 24;
                changed++;
            }
    }
    return changed;
}

/* Unregisters every image perftramp handed gdb, edits it, registers it
 * again: what gdb then reads is what a broken producer would have written. */
__attribute__((unused)) static int edit_registered_images(const char *edit) /* HAVE_HIDDEN_RBP only */
{
    int total = 0;
    for (struct jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next) {
        jit_notify(e, JIT_UNREGISTER);
        int n = edit_image((uint8_t *)(uintptr_t)e->symfile_addr, (size_t)e->symfile_size, edit);
        jit_notify(e, JIT_REGISTER);
        if (n < 0)
            return -1;
        total += n;
    }
    return total;
}

typedef long (*loop_fn)(int_fn fn, long arg, long n);

__attribute__((noinline)) int gdb_hidden_caller(loop_fn outer, int_fn chosen);
int gdb_hidden_caller(loop_fn outer, int_fn chosen)
{
    long r = outer(chosen, 20, 1);
    __asm__ volatile("" ::: "memory");
    return (int)r + 1;
}

__attribute__((noinline)) static int hidden_main(int argc, char **argv)
{
    const char *edit = argc > 2 ? argv[2] : NULL;
    if (edit && strcmp(edit, "strip") && strcmp(edit, "cfa24")) {
        fprintf(stderr, "usage: %s hidden [strip|cfa24]\n", argv[0]);
        return 2;
    }
#ifdef HAVE_HIDDEN_RBP
    struct perftramp_options o = {.outputs = PERFTRAMP_GDB};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    int_fn chosen = (int_fn)perftramp_wrap(pt, (perftramp_fn)gdb_target, "py::chosen");
    perftramp_fn outer = perftramp_wrap(pt, (perftramp_fn)pt_hidden_loop, "py::outer");
    if (!chosen || !outer) {
        fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
        return 1;
    }
    if (edit) {
        int n = edit_registered_images(edit);
        printf("edited %d place%s in the registered images (%s)\n", n, n == 1 ? "" : "s", edit);
        if (n <= 0)
            return 1;
    }
    int r = gdb_hidden_caller((loop_fn)outer, chosen);
    printf("result %d\n", r);
    fflush(stdout);
    return perftramp_close(pt) == 0 && r == 41 ? 0 : 1;
#else
    printf("SKIP: hidden needs tests/perf/hidden_rbp.S, written for x86-64 only\n");
    return 77;
#endif
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "hidden") == 0) {
        int r = hidden_main(argc, argv);
        __asm__ volatile("" ::: "memory"); /* no tail call: main stays in the bt */
        return r;
    }
    long n = argc > 1 ? strtol(argv[1], NULL, 10) : 0;
    int release = argc > 2 && strcmp(argv[2], "release") == 0;
    gdb_wait = argc > 2 && strcmp(argv[2], "wait") == 0;
    struct perftramp_options o = {.outputs = PERFTRAMP_GDB};
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    perftramp_fn *others = calloc((size_t)n + 1, sizeof *others);
    char name[64];
    for (long i = 0; i < n; i++) {
        snprintf(name, sizeof name, "py::other_%ld", i);
        if (!(others[i] = perftramp_wrap(pt, (perftramp_fn)gdb_other, name))) {
            fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
            return 1;
        }
    }
    if (release)
        for (long i = 0; i < n; i++)
            perftramp_release(pt, others[i]);
    int_fn chosen = (int_fn)perftramp_wrap(pt, (perftramp_fn)gdb_target, "py::chosen");
    if (!chosen) {
        fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
        return 1;
    }
    int r = gdb_caller(chosen, 20);
    printf("result %d\n", r);
    fflush(stdout);
    free(others);
    return perftramp_close(pt) == 0 && r == 41 ? 0 : 1;
}
