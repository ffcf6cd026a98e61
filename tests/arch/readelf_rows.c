/* SPDX-License-Identifier: MIT */
/* Tests (read layer's second opinion): the rule table of one FDE as
 * `readelf --debug-dump=frames-interp` prints it (readelf_rows.h). */
#include "readelf_rows.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int readelf_fde_rows(const char *readelf, const char *path, uint64_t pc_begin, struct re_table *t, char *err,
                     size_t errlen)
{
    /* --wide and the C locale: the rows as readelf prints them for machines
     * (no wrapped or translated lines); the path quoted for sh, whatever
     * it holds (a TMPDIR with spaces or quotes). */
    char quoted[2048];
    size_t q = 0;
    quoted[q++] = '\'';
    for (const char *c = path; *c && q + 5 < sizeof quoted; c++) {
        if (*c == '\'') {
            memcpy(quoted + q, "'\\''", 4);
            q += 4;
        } else {
            quoted[q++] = *c;
        }
    }
    quoted[q++] = '\'';
    quoted[q] = '\0';
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "LC_ALL=C %s --wide --debug-dump=frames-interp %s 2>&1", readelf, quoted);
    FILE *f = popen(cmd, "r");
    if (!f) {
        snprintf(err, errlen, "cannot run %s", cmd);
        return -1;
    }
    memset(t, 0, sizeof *t);
    char line[1024];
    int state = 0; /* 0 looking for FDE, 1 expecting header, 2 rows */
    while (fgets(line, sizeof line, f)) {
        if (state == 0) {
            char *pc = strstr(line, " FDE ");
            pc = pc ? strstr(pc, "pc=") : NULL;
            if (pc && strtoull(pc + 3, NULL, 16) == pc_begin)
                state = 1;
        } else if (state == 1) {
            /* "   LOC           CFA      rbp   ra" */
            char *tok = strtok(line, " \t\n");
            if (!tok || strcmp(tok, "LOC") != 0)
                continue;
            while ((tok = strtok(NULL, " \t\n")) && t->n_cols < RE_MAX_COLS)
                snprintf(t->cols[t->n_cols++], sizeof t->cols[0], "%s", tok);
            state = 2;
        } else {
            char *tok = strtok(line, " \t\n");
            if (!tok || t->n_rows == RE_MAX_ROWS)
                break; /* blank line ends the FDE */
            char *end;
            uint64_t loc = strtoull(tok, &end, 16);
            if (*end)
                break;
            size_t r = t->n_rows++;
            t->loc[r] = loc - pc_begin;
            for (size_t c = 0; c < t->n_cols; c++) {
                tok = strtok(NULL, " \t\n");
                snprintf(t->cell[r][c], sizeof t->cell[r][c], "%s", tok ? tok : "?");
            }
        }
    }
    int status = pclose(f);
    if (state != 2 || t->n_rows == 0) {
        snprintf(err, errlen, "%s: no FDE at 0x%" PRIx64 " (status %d)", path, pc_begin, status);
        return -1;
    }
    return 0;
}

const char *readelf_cell_at(const struct re_table *t, const char *name, uint64_t offset)
{
    size_t col = t->n_cols;
    for (size_t c = 0; c < t->n_cols; c++)
        if (strcmp(t->cols[c], name) == 0)
            col = c;
    if (col == t->n_cols)
        return "u";
    const char *cell = "u";
    for (size_t r = 0; r < t->n_rows && t->loc[r] <= offset; r++)
        cell = t->cell[r][col];
    return cell;
}
