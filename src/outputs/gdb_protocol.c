/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: the GDB JIT interface's descriptor, the
 * function gdb breaks in, and the lock and list operations around them. */
#include "config.h"

#include "outputs/gdb_protocol.h"

#include <stdbool.h>
#include <stddef.h>

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
 * tests/gdb/gdb_foreign_jit.sh), so a host defining its own descriptor hid
 * perftramp's from gdb.  The price: gdb needs libperftramp.so's symbol
 * table (an unstripped library, or its debug symbols; docs/unwinding.md). */
void __jit_debug_register_code(void) __attribute__((noinline, used, visibility("hidden")));
void __jit_debug_register_code(void)
{
    __asm__ volatile("" ::: "memory");
}

extern struct jit_descriptor __jit_debug_descriptor __attribute__((visibility("hidden")));
struct jit_descriptor __jit_debug_descriptor __attribute__((used)) = {1, 0, NULL, NULL};

pthread_mutex_t jit_lock = PTHREAD_MUTEX_INITIALIZER;
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

void jit_init(void)
{
    pthread_once(&jit_atfork_once, jit_install_atfork);
}

void jit_notify(struct jit_code_entry *e, uint32_t action)
{
    __jit_debug_descriptor.relevant_entry = e;
    __jit_debug_descriptor.action_flag = action;
    __jit_debug_register_code();
    __jit_debug_descriptor.relevant_entry = NULL;
    __jit_debug_descriptor.action_flag = PT_JIT_NOACTION;
}

void jit_link(struct jit_code_entry *e)
{
    e->prev = NULL;
    e->next = __jit_debug_descriptor.first_entry;
    if (e->next)
        e->next->prev = e;
    __jit_debug_descriptor.first_entry = e;
    jit_notify(e, PT_JIT_REGISTER);
}

void jit_unlink(struct jit_code_entry *e)
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

/* A debugger keeps a software breakpoint inserted at
 * __jit_debug_register_code while the process runs (gdb inserts its
 * breakpoints at each resume, at the symbol's own address: checked with
 * gdb 13, -fcf-protection too); on x86-64 it is int3, 0xCC (Intel SDM
 * vol. 2, INT3).  Reading our own first code byte costs one load. */
bool debugger_attached(void)
{
#if defined(__x86_64__)
    return *(const volatile uint8_t *)(uintptr_t)__jit_debug_register_code == 0xcc;
#else
    return false;
#endif
}
