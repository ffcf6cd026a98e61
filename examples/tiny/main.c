/* SPDX-License-Identifier: MIT */
/* tiny: run a script.  Usage: tiny SCRIPT.tiny
 * PERFTRAMP=perfmap,jitdump,unwind,gdb in the environment turns perftramp's
 * outputs on (see docs/interpreter-guide.md); with PERFTRAMP_SIGNAL=USR2 too,
 * they stay off until `kill -USR2 <pid>` turns them on (and off again). */
#include "tiny.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads a whole file; NULL with a message on failure. */
static char *read_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "tiny: %s: %s\n", path, strerror(errno));
        return NULL;
    }
    size_t len = 0, cap = 4096;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    int failed = ferror(f) || !buf;
    fclose(f);
    if (failed) {
        fprintf(stderr, "tiny: %s: read error\n", path);
        free(buf);
        return NULL;
    }
    buf[len] = '\0';
    if (strlen(buf) != len) {
        fprintf(stderr, "tiny: %s: contains a NUL byte\n", path);
        free(buf);
        return NULL;
    }
    return buf;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: tiny SCRIPT.tiny\n");
        return 2;
    }
    char *src = read_file(argv[1]);
    if (!src)
        return 2;
    struct program prog;
    int rc = 2;
    if (tiny_parse(argv[1], src, &prog) == 0)
        rc = tiny_run(&prog);
    tiny_free(&prog);
    free(src);
    return rc;
}
