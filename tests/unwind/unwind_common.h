/* SPDX-License-Identifier: MIT */
/* Shared by the in-process unwinding tests: a target and a caller that
 * never inline, so the stack is recorder <- target <- [trampoline] <-
 * caller <- test ... <- bottom. */
#ifndef PT_TEST_UNWIND_COMMON_H
#define PT_TEST_UNWIND_COMMON_H

#include <stddef.h>
#include <stdint.h>

#define PT_MAX_FRAMES 128

struct pt_trace {
    uintptr_t ip[PT_MAX_FRAMES];
    int n;
};

/* The trace `with` (through a trampoline at [lo, hi)) against `direct`
 * (the same caller calling the target itself).  NULL when `with` has
 * exactly one extra frame, that frame is inside the trampoline, and every
 * other frame equals the direct call's, down to the same bottom.
 * Otherwise a short reason. */
static inline const char *pt_trace_compare(const struct pt_trace *direct, const struct pt_trace *with,
                                           uintptr_t lo, uintptr_t hi)
{
    if (direct->n < 3)
        return "the direct call's trace is too short";
    if (direct->n >= PT_MAX_FRAMES || with->n >= PT_MAX_FRAMES)
        return "trace truncated";
    if (with->n != direct->n + 1)
        return "not exactly one extra frame";
    int t = -1;
    for (int k = 0; k < with->n; k++)
        if (with->ip[k] >= lo && with->ip[k] < hi) {
            if (t >= 0)
                return "two frames inside the trampoline";
            t = k;
        }
    if (t < 1)
        return "no frame inside the trampoline";
    /* above it: the same frames (recorder, target); below: the same
     * frames as the direct call, down to the same bottom */
    for (int k = 0; k < t; k++)
        if (with->ip[k] != direct->ip[k])
            return "frames above the trampoline differ from the direct call";
    for (int k = t; k < direct->n; k++)
        if (with->ip[k + 1] != direct->ip[k])
            return "frames below the trampoline differ from the direct call";
    return NULL;
}

#endif
