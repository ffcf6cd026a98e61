/* SPDX-License-Identifier: MIT */
/* An interposed allocator for fault injection.  The test binary links
 * with -Wl,--wrap=malloc,... so every allocation the library (a static
 * convenience library in the test) makes goes through these wrappers: the
 * Nth call after fa_arm(N) fails with ENOMEM, and every block the wrappers
 * hand out is tracked so a leak shows up as a non-zero fa_live(). */
#ifndef PERFTRAMP_FAULT_ALLOC_H
#define PERFTRAMP_FAULT_ALLOC_H

#include <stdbool.h>
#include <stddef.h>

/* Fail the nth allocation call from now on (1-based); 0 disarms. */
void fa_arm(unsigned long nth);
void fa_disarm(void);
/* Allocation calls seen since the last fa_arm. */
unsigned long fa_calls(void);
/* Whether the armed failure was delivered. */
bool fa_fired(void);
/* Blocks handed out by the wrappers and not freed yet. */
size_t fa_live(void);

#endif
