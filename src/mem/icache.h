/* SPDX-License-Identifier: MIT */
/* Cache maintenance after writing code: the one place that makes freshly
 * written bytes visible to instruction fetch. */
#ifndef PERFTRAMP_MEM_ICACHE_H
#define PERFTRAMP_MEM_ICACHE_H

#include "arch/table.h"

#include <stddef.h>
#include <stdint.h>

/* Makes the len bytes at executable address x, just written (through any
 * alias), safe to execute, when the table says its architecture needs it
 * (.icache = PT_ICACHE_FLUSH).  Pass the executable address: with double-mapped
 * memory that is the RX view, the one instruction fetch uses.  The table
 * must be the host's. */
void pt_icache_flush(const struct pt_arch *arch, uintptr_t x, size_t len);

#endif
