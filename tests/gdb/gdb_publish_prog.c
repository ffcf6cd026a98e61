/* SPDX-License-Identifier: MIT */
/* tests/gdb/gdb_publish.sh's program: perftramp_publish'ed code seen by gdb.
 *
 * A frameless function (x86-64: sub $8,%rsp; call *%rdi; add $8,%rsp;
 * ret; Intel SDM encodings 48 83 /5 ib, FF /2, 48 83 /0 ib, C3) is copied
 * into memory mmap'ed far from the heap, published as "jit::frameless"
 * after PT_GDB_FILLERS filler regions (so it lands in a later GDB batch
 * than the first), and called with gdb_pub_target as its argument.
 * gdb (break gdb_pub_target; bt) can name the frame only from perftramp's
 * GDB JIT entry, and unwind past it only with the region's rows.
 *
 * Modes (argv[1]):
 *   live     GDB output on from the start, then publish
 *   replay   publish with no outputs, then perftramp_set_outputs(GDB)
 *   unpub    publish, then unpublish: the name must be gone
 *   norows   publish without rows: bt must break (gdb uses the rows)
 *   toggle   replay, then GDB off and on again */
#include <perftramp.h>

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#define PT_GDB_FILLERS 150

/* (what main uses on x86-64 only: unused elsewhere) */
__attribute__((unused)) static const uint8_t frameless_x86[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3};
__attribute__((unused)) static const struct perftramp_cfi frameless_rows[] = {
    {.offset = 4, .op = PERFTRAMP_CFI_DEF_CFA_OFFSET, .value = 16},
    {.offset = 10, .op = PERFTRAMP_CFI_DEF_CFA_OFFSET, .value = 8},
};

static volatile int sink;

void __attribute__((noinline)) gdb_pub_target(void);
void __attribute__((noinline)) gdb_pub_target(void)
{
    sink++;
    __asm__ volatile("" ::: "memory");
}

__attribute__((unused)) static int fail(const char *what)
{
    fprintf(stderr, "gdb_publish_prog: %s: %s\n", what, strerror(errno));
    return 1;
}

int main(int argc, char **argv)
{
#ifndef __x86_64__
    (void)argc;
    (void)argv;
    printf("SKIP: the frameless function here is x86-64's\n");
    return 77;
#else
    const char *mode = argc > 1 ? argv[1] : "live";
    void *heap = malloc(16);
    uintptr_t hint = ((uintptr_t)heap + (64ull << 30)) & ~(uintptr_t)0xfff;
    free(heap);
    uint8_t *mem = mmap((void *)hint, 8192, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (mem == MAP_FAILED)
        return fail("mmap");
    bool live = strcmp(mode, "live") == 0 || strcmp(mode, "unpub") == 0 || strcmp(mode, "norows") == 0;
    struct perftramp_options o = {.outputs = live ? PERFTRAMP_GDB : 0};
    perftramp *pt = perftramp_open(&o);
    if (!pt)
        return fail("perftramp_open");
    /* fillers: 16 bytes each, a `ret` (C3) */
    char names[PT_GDB_FILLERS][32];
    for (int i = 0; i < PT_GDB_FILLERS; i++) {
        mem[16 * i] = 0xc3;
        snprintf(names[i], sizeof names[i], "jit::filler%d", i);
        struct perftramp_code f = {.addr = mem + 16 * i, .size = 16, .name = names[i]};
        if (perftramp_publish(pt, &f) < 0)
            return fail("publish filler");
    }
    /* withdraw a few: their batches are rebuilt */
    for (int i = 0; i < PT_GDB_FILLERS; i += 37)
        if (perftramp_unpublish(pt, mem + 16 * i) < 0)
            return fail("unpublish filler");
    uint8_t *code = mem + 4096;
    memcpy(code, frameless_x86, sizeof frameless_x86);
    bool rows = strcmp(mode, "norows") != 0;
    struct perftramp_code c = {.addr = code, .size = sizeof frameless_x86, .name = "jit::frameless",
                               .cfi = rows ? frameless_rows : NULL, .n_cfi = rows ? 2 : 0};
    if (perftramp_publish(pt, &c) < 0)
        return fail("publish");
    if (strcmp(mode, "unpub") == 0 && perftramp_unpublish(pt, code) < 0)
        return fail("unpublish");
    if (!live && perftramp_set_outputs(pt, PERFTRAMP_GDB) < 0)
        return fail("set_outputs(GDB)");
    if (strcmp(mode, "toggle") == 0 &&
        (perftramp_set_outputs(pt, 0) < 0 || perftramp_set_outputs(pt, PERFTRAMP_GDB) < 0))
        return fail("set_outputs toggle");
    if (perftramp_outputs(pt) != PERFTRAMP_GDB)
        return fail("perftramp_outputs");
    ((void (*)(void (*)(void)))code)(gdb_pub_target);
    printf("called %d\n", sink);
    perftramp_close(pt);
    munmap(mem, 8192);
    return 0;
#endif
}
