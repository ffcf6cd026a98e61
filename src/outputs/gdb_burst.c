/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_GDB: the debugger-burst policy, how many wraps
 * of a burst under gdb are told at once before the rest go lazy. */
#include "config.h"

#include "outputs/gdb_burst.h"
#include "outputs/gdb_protocol.h"

#include <stdint.h>
#include <time.h>

/* Debugger attached: the first PT_GDB_EAGER_PER_BURST wraps of a burst
 * are told to gdb at once, the rest at their first call (gdb_lazy.h).  A
 * burst ends when the program spends PT_GDB_BURST_GAP_NS between two
 * wraps, counted from the end of the first one's gdb work (gdb's own
 * stops take ~0.5 ms each, tens of ms on a loaded machine).  So a program
 * that makes a few trampolines and steps into them sees every instruction
 * named, and one that makes thousands under gdb is not slowed down 1 ms
 * per wrap. */
#define PT_GDB_EAGER_PER_BURST 128
#define PT_GDB_BURST_GAP_NS 100000000ull /* 100 ms */

static uint64_t burst_last_ns; /* end of the last wrap under a debugger, 0: none */
static unsigned burst_eager;

static uint64_t monotonic_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

bool wrap_goes_lazy(void)
{
    uint64_t now = monotonic_ns();
    pthread_mutex_lock(&jit_lock);
    if (burst_last_ns == 0 || now - burst_last_ns > PT_GDB_BURST_GAP_NS)
        burst_eager = 0;
    bool lazy = burst_eager >= PT_GDB_EAGER_PER_BURST;
    if (!lazy)
        burst_eager++;
    pthread_mutex_unlock(&jit_lock);
    return lazy;
}

void burst_touch(void)
{
    uint64_t now = monotonic_ns();
    pthread_mutex_lock(&jit_lock);
    burst_last_ns = now;
    pthread_mutex_unlock(&jit_lock);
}
