/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: the GDB JIT interface itself (GDB manual,
 * "JIT Compilation Interface"), the list gdb reads and the call it watches.
 * Shared by the chunks (gdb_jit.c), the burst policy (gdb_burst.c) and the
 * published-code batches (gdb_batch.c).  The names are the ones gdb_jit.c
 * had when these were static there. */
#ifndef PERFTRAMP_OUTPUTS_GDB_PROTOCOL_H
#define PERFTRAMP_OUTPUTS_GDB_PROTOCOL_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

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

/* The process-wide lock of the descriptor and of every entry on it. */
extern pthread_mutex_t jit_lock;
/* Once per process: keeps jit_lock usable in a forked child. */
void jit_init(void);
/* Tells gdb about entry e (PT_JIT_REGISTER / PT_JIT_UNREGISTER). */
void jit_notify(struct jit_code_entry *e, uint32_t action);
/* Both called with jit_lock held: put e on the list, take it off. */
void jit_link(struct jit_code_entry *e);
void jit_unlink(struct jit_code_entry *e);
/* A debugger has its breakpoint in __jit_debug_register_code (x86-64 only;
 * false elsewhere). */
bool debugger_attached(void);

#endif
