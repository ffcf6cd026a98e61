/* SPDX-License-Identifier: MIT */
/* Runs `readelf --debug-dump=frames-interp` on an ELF file and returns
 * the rule table of the FDE that starts at a given address, normalized to
 * offsets from that address: a second, independent decoder. */
#ifndef PERFTRAMP_READELF_ROWS_H
#define PERFTRAMP_READELF_ROWS_H

#include <stddef.h>
#include <stdint.h>

#define RE_MAX_COLS 16
#define RE_MAX_ROWS 64

struct re_table {
    size_t n_cols;                  /* column 0 is CFA */
    char cols[RE_MAX_COLS][16];     /* column names: "CFA", "rbp", "ra", ... */
    size_t n_rows;
    uint64_t loc[RE_MAX_ROWS];      /* offset from the FDE start */
    char cell[RE_MAX_ROWS][RE_MAX_COLS][24];
};

/* Returns 0, or -1 with a message in err. */
int readelf_fde_rows(const char *readelf, const char *path, uint64_t pc_begin, struct re_table *t, char *err,
                     size_t errlen);
/* The cell for column `name` in effect at `offset` ("u" when absent). */
const char *readelf_cell_at(const struct re_table *t, const char *name, uint64_t offset);

#endif
