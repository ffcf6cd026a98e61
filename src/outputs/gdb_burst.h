/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: when a wrap under a debugger is told to gdb
 * at once and when at its first call (gdb_lazy.h); gdb_burst.c. */
#ifndef PERFTRAMP_OUTPUTS_GDB_BURST_H
#define PERFTRAMP_OUTPUTS_GDB_BURST_H

#include <stdbool.h>

/* Under a debugger: whether this wrap goes lazy (past the burst's eager ones). */
bool wrap_goes_lazy(void);
/* Under a debugger: the end of a wrap's gdb work, from which the next gap counts. */
void burst_touch(void);

#endif
