/* SPDX-License-Identifier: MIT */
/* Shared bits of the torture suites: call targets whose results tell
 * which target a trampoline reached, and small helpers. */
#ifndef PERFTRAMP_TORTURE_H
#define PERFTRAMP_TORTURE_H

#include "perftramp.h"

#include <stddef.h>
#include <sys/types.h>

/* Four distinct targets: tt_target(k)(a, b) == tt_expect(k, a, b). */
typedef long (*tt_fn)(long a, long b);
tt_fn tt_target(unsigned k);
long tt_expect(unsigned k, long a, long b);

/* Calls a trampoline as target k's type. */
static inline long tt_call(perftramp_fn f, long a, long b)
{
    return ((tt_fn)f)(a, b);
}

#define TT_FN(k) ((perftramp_fn)tt_target(k))

/* A fresh scratch directory under $TMPDIR or /tmp; aborts on failure.
 * tt_rmtree removes it again (best effort). */
char *tt_mkdtemp(void);
void tt_rmtree(const char *dir);

/* Reads a whole file; NULL with errno on failure.  *len gets its size. */
unsigned char *tt_slurp(const char *path, size_t *len);

/* A forked child's report to its parent, through a pipe: the child sends
 * its n bytes and exits (0, or 3 when the write failed); the parent reads
 * them and asserts (Check) that the child exited 0 having sent them all. */
_Noreturn void tt_send_report(int fd, const void *r, size_t n);
void tt_read_report(int fd, pid_t child, void *r, size_t n);

#endif
