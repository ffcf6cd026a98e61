/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_GDB with a debugger attached: tell gdb about a new trampoline
 * at its first call instead of at its creation (outputs/gdb_jit.c).
 *
 * A stop of the process for gdb's JIT breakpoint costs ~0.5 ms of gdb
 * (ptrace stop, stopping the other threads, stepping over the breakpoint,
 * resuming: bench/PERFORMANCE.md); telling gdb at every wrap made 10,000
 * wraps take 14 s under gdb.  So while a debugger is attached, a wrap
 * only patches its chunk's image and points the trampoline's target word
 * at pt_gdb_lazy_stub.  The first call through it lands in the stub, which
 * saves the argument registers, has gdb re-read the chunk (every
 * trampoline wrapped since the last read at once), puts the real targets
 * back, restores the registers and jumps to the real target: the
 * trampoline's own frame is on the stack, named, before its target runs.
 *
 * Only where the trampoline calls through its target word in a way we
 * check byte by byte (x86-64 `call *disp32(%rip)`); elsewhere every wrap
 * tells gdb at once, as with no debugger. */
#ifndef PERFTRAMP_OUTPUTS_GDB_LAZY_H
#define PERFTRAMP_OUTPUTS_GDB_LAZY_H

#include "emit/layout.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether trampolines of layout l call through their target word with
 * the one instruction the stub understands; *ret_off is then the offset
 * of the return address that call pushes, from the slot's start. */
bool pt_gdb_lazy_layout(const struct pt_layout *l, size_t *ret_off);

/* Whether the bytes of one written slot hold that call, ending at
 * ret_off (pt_gdb_lazy_layout's): a slot written from a direct-call
 * variant does not. */
bool pt_gdb_lazy_slot_calls(const uint8_t *slot, size_t ret_off);

/* The stub's address, 0 where there is none. */
uintptr_t pt_gdb_lazy_stub_addr(void);

/* Called by the stub with the return address into the trampoline;
 * returns the real target (defined in outputs/gdb_jit.c). */
uintptr_t pt_gdb_first_call(uintptr_t ret) __attribute__((visibility("hidden")));

#endif
