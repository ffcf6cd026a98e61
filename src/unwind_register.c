/* PERFTRAMP_UNWIND: not built yet. */
#include "outputs.h"

#include <errno.h>

int pt_unwind_open(struct perftramp *pt)
{
    (void)pt;
    errno = ENOTSUP;
    return -1;
}

int pt_unwind_arena_added(struct perftramp *pt, struct pt_arena *a)
{
    (void)pt;
    (void)a;
    return 0;
}

void pt_unwind_arena_removed(struct perftramp *pt, struct pt_arena *a)
{
    (void)pt;
    (void)a;
}

void pt_unwind_close(struct perftramp *pt)
{
    (void)pt;
}
