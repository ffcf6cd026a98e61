/* SPDX-License-Identifier: MIT */
/* tests/emit/debug_line.sh's helper: writes .debug_abbrev, .debug_info and
 * .debug_line (emit/debug_line.c) for the ranges given, one unit each:
 *   debug_line_prog OUTDIR ADDR SIZE FILE LINE [ADDR SIZE FILE LINE]...
 * (ADDR, SIZE in hex) -> OUTDIR/abbrev.bin, info.bin, line.bin. */
#include "config.h"

#include "emit/debug_line.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int write_file(const char *dir, const char *name, const struct pt_buf *b)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(b->data, 1, b->len, f) != b->len || fclose(f) != 0) {
        fprintf(stderr, "debug_line_prog: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 6 || (argc - 2) % 4) {
        fprintf(stderr, "usage: debug_line_prog OUTDIR ADDR SIZE FILE LINE...\n");
        return 2;
    }
    struct pt_buf abbrev, info, line;
    pt_buf_init(&abbrev, false);
    pt_buf_init(&info, false);
    pt_buf_init(&line, false);
    pt_dwarf_abbrev(&abbrev);
    for (int i = 2; i < argc; i += 4) {
        uint64_t addr = strtoull(argv[i], NULL, 16), size = strtoull(argv[i + 1], NULL, 16);
        if (pt_dwarf_line_unit(&info, &line, sizeof(void *), addr, size, argv[i + 2],
                               (unsigned)strtoul(argv[i + 3], NULL, 10)) < 0) {
            fprintf(stderr, "debug_line_prog: pt_dwarf_line_unit: %s\n", strerror(errno));
            return 1;
        }
    }
    int r = write_file(argv[1], "abbrev.bin", &abbrev) | write_file(argv[1], "info.bin", &info) |
            write_file(argv[1], "line.bin", &line);
    pt_buf_free(&abbrev);
    pt_buf_free(&info);
    pt_buf_free(&line);
    return r ? 1 : 0;
}
