/* PERFTRAMP_PERF_MAP: not built yet. */
#include "outputs.h"

#include <errno.h>

int pt_perfmap_open(struct perftramp *pt)
{
    (void)pt;
    errno = ENOTSUP;
    return -1;
}

int pt_perfmap_add(struct perftramp *pt, const struct pt_tramp *t)
{
    (void)pt;
    (void)t;
    return 0;
}

int pt_perfmap_after_fork(struct perftramp *pt)
{
    (void)pt;
    return 0;
}

int pt_perfmap_close(struct perftramp *pt)
{
    (void)pt;
    return 0;
}
