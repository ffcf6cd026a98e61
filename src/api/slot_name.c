/* SPDX-License-Identifier: MIT */
/* What a slot keeps for the outputs, in one allocation:
 *     name NUL file NUL line(4 bytes, native)
 * so that a->names[i] still reads as the plain name (the GDB output and
 * every replay use it as such), and perftramp_wrap_at's source position
 * travels with it to every later replay (perftramp_set_outputs, fork). */
#include "api/context.h"

#include <stdlib.h>
#include <string.h>

size_t pt_slot_name_size(size_t name_len, const char *file, unsigned line)
{
    return name_len + 1 + (file && line ? strlen(file) : 0) + 1 + sizeof line;
}

void pt_slot_name_write(char *rec, const char *name, const char *file, unsigned line)
{
    size_t n = strlen(name) + 1;
    size_t f = file && line ? strlen(file) : 0;
    memcpy(rec, name, n);
    memcpy(rec + n, f ? file : "", f + 1);
    unsigned l = f ? line : 0;
    memcpy(rec + n + f + 1, &l, sizeof l);
}

static const char *file_of(const char *rec)
{
    return rec + strlen(rec) + 1;
}

const char *pt_slot_name_file(const char *rec)
{
    if (!rec)
        return NULL;
    const char *f = file_of(rec);
    return *f ? f : NULL;
}

unsigned pt_slot_name_line(const char *rec)
{
    unsigned l = 0;
    if (rec) {
        const char *f = file_of(rec);
        memcpy(&l, f + strlen(f) + 1, sizeof l);
    }
    return l;
}
