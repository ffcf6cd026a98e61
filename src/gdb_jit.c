/* PERFTRAMP_GDB: not built yet. */
#include "outputs.h"

#include <errno.h>

int pt_gdb_open(struct perftramp *pt)
{
    (void)pt;
    errno = ENOTSUP;
    return -1;
}

int pt_gdb_add(struct perftramp *pt, struct pt_arena *a, size_t index)
{
    (void)pt;
    (void)a;
    (void)index;
    return 0;
}

int pt_gdb_remove(struct perftramp *pt, struct pt_arena *a, size_t index)
{
    (void)pt;
    (void)a;
    (void)index;
    return 0;
}

void pt_gdb_arena_removed(struct perftramp *pt, struct pt_arena *a)
{
    (void)pt;
    (void)a;
}

void pt_gdb_close(struct perftramp *pt)
{
    (void)pt;
}
