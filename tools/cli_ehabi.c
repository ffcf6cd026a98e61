/* SPDX-License-Identifier: MIT */
/* perftramp arch NAME, for a table whose unwinder reads Arm EHABI tables:
 * the index and extab entries the emitter derives from the table's rows,
 * read back with the untrusted-input reader (read/ehabi_decode.h), each
 * opcode spelled out, and what each entry recovers set beside the
 * .eh_frame row in force over its region. */
#include "cli.h"

#include "emit/ehabi.h"
#include "read/ehabi_decode.h"

#include <inttypes.h>
#include <string.h>

enum { CODE = 0x1000, TABLES = 0x8000 };

/* One opcode at ops[*i] as the EHABI document names it; advances *i. */
static void op_text(const uint8_t *ops, size_t n, size_t *i, char *out, size_t len)
{
    uint8_t op = ops[(*i)++];
    uint8_t next = *i < n ? ops[*i] : 0;
    if (op < 0x40) {
        snprintf(out, len, "%02x       vsp += %d", op, ((op & 0x3f) << 2) + 4);
    } else if (op < 0x80) {
        snprintf(out, len, "%02x       vsp -= %d", op, ((op & 0x3f) << 2) + 4);
    } else if (op < 0x90) {
        unsigned mask = (unsigned)(op & 0xf) << 8 | next;
        (*i)++;
        size_t first = (size_t)snprintf(out, len, "%02x %02x    pop {", op, next), at = first;
        for (unsigned r = 0; r < 12 && at < len; r++)
            if (mask >> r & 1)
                at += (size_t)snprintf(out + at, len - at, "%sr%u", at > first ? ", " : "", 4 + r);
        if (at < len)
            snprintf(out + at, len - at, "}");
    } else if (op < 0xa0) {
        snprintf(out, len, "%02x       vsp = r%u", op, op & 0xf);
    } else if (op < 0xb0) {
        snprintf(out, len, "%02x       pop {r4-r%u%s}", op, 4 + (op & 7), op & 8 ? ", r14" : "");
    } else if (op == 0xb0) {
        snprintf(out, len, "b0       finish");
    } else if (op == 0xb1) {
        (*i)++;
        snprintf(out, len, "b1 %02x    pop {r0-r3 under mask 0x%x}", next, next);
    } else if (op == 0xc8 || op == 0xc9) {
        (*i)++;
        unsigned s = (next >> 4) + (op == 0xc8 ? 16 : 0);
        snprintf(out, len, "%02x %02x    pop {d%u-d%u}", op, next, s, s + (next & 0xf));
    } else {
        snprintf(out, len, "%02x       (see the EHABI document, 10.3)", op);
    }
}

void cli_ehabi_print(FILE *out, const struct pt_layout *l, const struct pt_row *rows, int n_rows)
{
    const struct pt_arch *a = l->arch;
    struct pt_ehabi_region r[PT_EHABI_MAX_REGIONS];
    size_t n, n_index;
    const char *why = "?";
    if (pt_ehabi_layout_regions(l, r, PT_EHABI_MAX_REGIONS, &n, &why) < 0) {
        fprintf(out, "\nEHABI: the rows cannot be said as EHABI opcodes: %s\n", why);
        return;
    }
    uint8_t tab[2048];
    size_t len = pt_ehabi_tables(tab, sizeof tab, TABLES, CODE, 1, 0, l->size, r, n, a->big_endian, &n_index);
    if (!len) {
        fprintf(out, "\nEHABI: no tables\n");
        return;
    }
    fprintf(out,
            "\nEHABI (what libgcc reads on this machine; %zu index entries, %zu bytes for one trampoline, the .ARM.extab\n"
            "entries shared by every slot of an arena; each entry starts 2 bytes before its region: libgcc looks up pc - 2):\n",
            n_index, len);
    for (size_t i = 0; i < n_index; i++) {
        struct pt_ehabi_entry e;
        if (pt_ehabi_read_entry(tab, n_index * 8, TABLES, tab, len, TABLES, i, a->big_endian, &e, &why) < 0) {
            fprintf(out, "  entry %zu: DOES NOT read back: %s\n", i, why);
            continue;
        }
        int64_t at = (int64_t)(e.start - CODE);
        if (e.cantunwind) {
            fprintf(out, "  .text%+" PRId64 "  EXIDX_CANTUNWIND (the end)\n", at);
            continue;
        }
        fprintf(out, "  .text%+" PRId64 "  %s, personality routine %u:\n", at,
                e.inline_entry ? "inline in the index" : "in .ARM.extab", e.personality);
        for (size_t k = 0; k < e.n_ops;) {
            char t[96];
            op_text(e.ops, e.n_ops, &k, t, sizeof t);
            fprintf(out, "      %s\n", t);
        }
        struct pt_ehabi_frame f, d;
        const struct pt_row *row = NULL;
        for (int q = 0; q < n_rows && (int64_t)rows[q].loc <= at + PT_EHABI_SHIFT; q++)
            row = &rows[q];
        char sp[48], pc[48], cmp[120] = "";
        if (pt_ehabi_execute(e.ops, e.n_ops, &f, &why) < 0) {
            fprintf(out, "    DOES NOT execute: %s\n", why);
            continue;
        }
        pt_ehabi_value_str(&f.sp, sp, sizeof sp);
        pt_ehabi_value_str(&f.pc, pc, sizeof pc);
        bool same = row && pt_ehabi_frame_from_row(row, a->ra_column, &d) == 0 &&
                    pt_ehabi_same_caller(&f, &d, cmp, sizeof cmp);
        fprintf(out, "    caller's sp = %s, pc = %s: %s\n", sp, pc,
                same ? "as the .eh_frame row there says" : cmp[0] ? cmp : "NO .eh_frame row to compare");
    }
}
