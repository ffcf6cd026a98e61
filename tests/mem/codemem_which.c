/* SPDX-License-Identifier: MIT */
/* Which code memory perftramp uses in this process, with this libffi:
 * makes and calls one trampoline, then prints
 *   backend: <libffi|doublemap>
 *   memory: <libffi|shared-anon|memfd|tmpfile>
 *   trampoline: <addr> in <perms> "<path>"   (its /proc/self/maps line)
 * Exit 0 when the trampoline returned the right value. */
#include "config.h"

#include "perftramp.h"
#include "api/context.h"
#include "mem/codemem.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

static long add_5(long x)
{
    return x + 5;
}

int main(void)
{
    perftramp *pt = perftramp_open(&(struct perftramp_options){0});
    if (!pt) {
        perror("perftramp_open");
        return 1;
    }
    long (*t)(long) = (long (*)(long))perftramp_wrap(pt, (perftramp_fn)add_5, "which");
    if (!t) {
        perror("perftramp_wrap");
        return 1;
    }
    long r = t(37);
    printf("backend: %s\n", pt_code_backend_chosen()->name);
    printf("memory: %s\n", pt->slots.arenas[0]->mem.kind);
    FILE *f = fopen("/proc/self/maps", "r");
    char line[1024];
    while (f && fgets(line, sizeof line, f)) {
        unsigned long lo, hi;
        char perms[5];
        int n = 0;
        if (sscanf(line, "%lx-%lx %4s %*x %*s %*u %n", &lo, &hi, perms, &n) >= 3 && (uintptr_t)t >= lo &&
            (uintptr_t)t < hi) {
            line[strcspn(line, "\n")] = 0;
            printf("trampoline: %p in %s \"%s\"\n", (void *)(uintptr_t)t, perms, line + n);
        }
    }
    if (f)
        fclose(f);
    perftramp_close(pt);
    printf("call: %ld (want 42)\n", r);
    return r == 42 ? 0 : 1;
}
