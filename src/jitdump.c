/* PERFTRAMP_JITDUMP: not built yet. */
#include "outputs.h"

#include <errno.h>

int pt_jitdump_open(struct perftramp *pt)
{
    (void)pt;
    errno = ENOTSUP;
    return -1;
}

int pt_jitdump_add(struct perftramp *pt, const struct pt_tramp *t)
{
    (void)pt;
    (void)t;
    return 0;
}

int pt_jitdump_after_fork(struct perftramp *pt)
{
    (void)pt;
    return 0;
}

int pt_jitdump_close(struct perftramp *pt)
{
    (void)pt;
    return 0;
}
