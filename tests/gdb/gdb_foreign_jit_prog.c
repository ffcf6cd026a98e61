/* SPDX-License-Identifier: MIT */
/* A host with a JIT of its own beside perftramp (tests/gdb/gdb_foreign_jit.sh).
 * Like LLVM ORC, LuaJIT or CPython's JIT, it defines its own GDB JIT
 * descriptor and __jit_debug_register_code (exported: linked with
 * -export-dynamic, as python is), and registers one in-memory ELF for one
 * function it generated, foreign_jit_answer (x86-64 code: returns 42).
 * It links libperftramp.so and makes several trampolines with
 * PERFTRAMP_GDB, one of them, "pt_calls_foreign", wrapping the foreign
 * function, which main then calls through it.
 * Checked here: neither descriptor's list holds the other's entries, and
 * the host's __jit_debug_register_code ran only for the host's own entry.
 * $PT_JIT_DESCRIPTOR_OFFSET: where libperftramp.so's (local) descriptor
 * sits, from nm.
 * gdb then shows both names in one backtrace (the script).
 * Prints "ok ..." and exits 0, or "FAIL ..." and 1; 77 when the host is
 * not x86-64 (the foreign code is x86-64 bytes). */
#define _GNU_SOURCE
#include "arch/table.h"
#include "emit/elf_image.h"
#include "perftramp.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* ---- the host's GDB JIT interface (GDB manual, "JIT Compilation
 * Interface"): the same names perftramp exports ---------------------- */
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

int host_registrations; /* how often anyone called the host's function */

void __jit_debug_register_code(void) __attribute__((noinline, used));
void __jit_debug_register_code(void)
{
    host_registrations++;
    __asm__ volatile("" ::: "memory");
}

struct jit_descriptor __jit_debug_descriptor __attribute__((used)) = {1, 0, NULL, NULL};

/* what main uses on x86-64 only: unused (not an error) elsewhere */
#define X86_64_ONLY __attribute__((unused))

X86_64_ONLY static struct jit_code_entry host_entry;

/* the host's function: push %rbp; mov %rsp,%rbp; mov $42,%eax; pop %rbp; ret
 * (Intel SDM vol. 2: 55, 48 89 e5, b8 imm32, 5d, c3) */
X86_64_ONLY static const uint8_t answer_code[] = {0x55, 0x48, 0x89, 0xe5, 0xb8, 0x2a, 0x00, 0x00, 0x00, 0x5d, 0xc3};

typedef int (*int_fn)(void);

X86_64_ONLY static int fail(const char *what)
{
    printf("FAIL: %s\n", what);
    return 1;
}

X86_64_ONLY static int plain(void)
{
    return 7;
}

/* Counts a list's entries; *other set when it meets an entry of the
 * other list (by address or by image). */
X86_64_ONLY static int walk(const struct jit_descriptor *d, const struct jit_code_entry *foreign_entry,
                            const char *foreign_image, int *other)
{
    int n = 0;
    for (const struct jit_code_entry *e = d->first_entry; e && n < 100000; e = e->next, n++)
        if (e == foreign_entry || (foreign_image && e->symfile_addr == foreign_image))
            *other = 1;
    return n;
}

/* true when an entry's in-memory ELF holds `name` as a whole string */
X86_64_ONLY static int list_has_name(const struct jit_descriptor *d, const char *name)
{
    size_t n = strlen(name) + 1;
    for (const struct jit_code_entry *e = d->first_entry; e; e = e->next)
        for (uint64_t i = 0; i + n <= e->symfile_size; i++)
            if (e->symfile_addr[i] == name[0] && memcmp(e->symfile_addr + i, name, n) == 0 &&
                (i == 0 || e->symfile_addr[i - 1] == 0))
                return 1;
    return 0;
}

int main(void)
{
#if !defined(__x86_64__)
    printf("SKIP: the foreign function is x86-64 code\n");
    return 77;
#else
    /* the host JITs its function and registers it with ITS descriptor */
    uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (code == MAP_FAILED)
        return fail("mmap");
    memcpy(code, answer_code, sizeof answer_code);
    if (mprotect(code, 4096, PROT_READ | PROT_EXEC) != 0)
        return fail("mprotect");
    const struct pt_elf_out_section text = {.name = ".text", .type = 8 /* SHT_NOBITS */,
                                            .flags = 0x2 | 0x4 /* ALLOC|EXECINSTR */,
                                            .addr = (uintptr_t)code, .size = sizeof answer_code, .align = 16};
    const struct pt_elf_out_symbol sym = {.name = "foreign_jit_answer", .section = 0, .value = 0,
                                          .size = sizeof answer_code};
    size_t image_len;
    /* what pt_elf_build reads of a table: the machine, byte order and class */
    static const struct pt_arch x86_64_elf = {.elf_machine = 62 /* EM_X86_64 */, .big_endian = 0, .addr_size = 8};
    uint8_t *image = pt_elf_build(&x86_64_elf, &text, 1, &sym, 1, &image_len);
    if (!image)
        return fail("pt_elf_build");
    host_entry.symfile_addr = (const char *)image;
    host_entry.symfile_size = image_len;
    __jit_debug_descriptor.first_entry = &host_entry;
    __jit_debug_descriptor.relevant_entry = &host_entry;
    __jit_debug_descriptor.action_flag = 1; /* JIT_REGISTER */
    __jit_debug_register_code();
    __jit_debug_descriptor.action_flag = 0;
    __jit_debug_descriptor.relevant_entry = NULL;

    /* perftramp, with the GDB output, several trampolines */
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = PERFTRAMP_GDB});
    if (!pt)
        return fail(strerror(errno));
    int_fn tramps[5];
    for (int i = 0; i < 4; i++) {
        char name[32];
        snprintf(name, sizeof name, "pt_plain_%d", i);
        tramps[i] = (int_fn)perftramp_wrap(pt, (perftramp_fn)plain, name);
    }
    tramps[4] = (int_fn)perftramp_wrap(pt, (perftramp_fn)(uintptr_t)code, "pt_calls_foreign");
    for (int i = 0; i < 5; i++)
        if (!tramps[i])
            return fail("perftramp_wrap");

    /* perftramp's own descriptor, where gdb finds it: the library's
     * symbol table (a local symbol: the script passes its offset) */
    Dl_info info;
    const char *offset = getenv("PT_JIT_DESCRIPTOR_OFFSET");
    if (!offset || !dladdr((void *)perftramp_wrap, &info))
        return fail("no PT_JIT_DESCRIPTOR_OFFSET, or dladdr failed");
    const struct jit_descriptor *mine =
        (const struct jit_descriptor *)((const char *)info.dli_fbase + strtoull(offset, NULL, 16));
    if (mine == &__jit_debug_descriptor || mine->version != 1)
        return fail("PT_JIT_DESCRIPTOR_OFFSET is not libperftramp's descriptor");

    int host_saw_pt = 0, pt_saw_host = 0;
    int host_n = walk(&__jit_debug_descriptor, NULL, NULL, &host_saw_pt);
    host_saw_pt = list_has_name(&__jit_debug_descriptor, "pt_calls_foreign") ||
                  list_has_name(&__jit_debug_descriptor, "pt_plain_0");
    int pt_n = walk(mine, &host_entry, (const char *)image, &pt_saw_host);
    pt_saw_host |= list_has_name(mine, "foreign_jit_answer");
    char why[200];
    if (host_n != 1 || __jit_debug_descriptor.first_entry != &host_entry || host_entry.next || host_entry.prev ||
        host_saw_pt) {
        snprintf(why, sizeof why, "the host's list was touched: %d entries, perftramp names in it: %d", host_n,
                 host_saw_pt);
        return fail(why);
    }
    if (pt_n < 1 || pt_saw_host || !list_has_name(mine, "pt_calls_foreign")) {
        snprintf(why, sizeof why, "perftramp's list: %d entries, host entry in it: %d", pt_n, pt_saw_host);
        return fail(why);
    }
    if (host_registrations != 1) {
        snprintf(why, sizeof why, "the host's __jit_debug_register_code ran %d times (perftramp's lock, not ours)",
                 host_registrations);
        return fail(why);
    }

    /* the call gdb breaks in: main -> pt_calls_foreign -> foreign_jit_answer */
    int r = tramps[4]();
    if (r != 42 || tramps[0]() != 7)
        return fail("the trampolines do not reach their targets");
    printf("ok: host list 1 entry, perftramp list %d entries, neither holds the other's; host notified once; "
           "result %d\n", pt_n, r);
    perftramp_close(pt);
    return 0;
#endif
}
