/* SPDX-License-Identifier: MIT */
/* perftramp cfi FILE [SYMBOL|ADDR]: an FDE's rows in perftramp_publish's
 * form (struct perftramp_cfi initialisers), read from a linked ELF file's
 * .eh_frame.  A JIT author can see what a compiler emits for a function
 * and write the same rows for generated code.
 *
 * The rows come from the decoded rule table (read/eh_decode.h), not from
 * the FDE's opcodes: each location where the table changes becomes the
 * ops that turn the previous row into the new one, starting from the
 * entry rules perftramp's own CIE gives this architecture (what
 * perftramp_publish assumes at offset 0).  So DW_CFA_remember_state /
 * restore_state and the advance_loc variants need no special case.  A
 * rule the publish API has no op for (an expression, a register held in
 * another register, a CFA expression, AArch64 return-address signing) is
 * reported and the exit status is 1. */
#include "cli.h"
#include "emit/eh_frame.h"
#include "read/elf_reader.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define CFI_MAX_ROWS 512

/* A function symbol by name (.symtab, then .dynsym): 0, or -1. */
static int find_symbol(const struct pt_elf *e, const char *name, uint64_t *addr)
{
    static const char *const tabs[][2] = {{".symtab", ".strtab"}, {".dynsym", ".dynstr"}};
    for (size_t t = 0; t < 2; t++) {
        struct pt_elf_section sym, str;
        if (pt_elf_section(e, tabs[t][0], &sym) < 0 || pt_elf_section(e, tabs[t][1], &str) < 0 || !sym.data ||
            !str.data)
            continue;
        struct pt_elf_symbol s;
        for (size_t i = 1; pt_elf_symbol(e, &sym, i, &s) == 0; i++) {
            if ((s.info & 0xf) != 2 /* STT_FUNC */ || s.name >= str.size)
                continue;
            const char *sn = (const char *)str.data + s.name;
            if (memchr(sn, 0, str.size - s.name) && strcmp(sn, name) == 0 && s.value) {
                *addr = s.value;
                return 0;
            }
        }
    }
    return -1;
}

/* The row perftramp_publish assumes at offset 0: perftramp's own CIE for
 * the architecture, decoded. */
struct entry_ctx {
    struct pt_eh_ctx *ctx;
    struct pt_row row;
    int ok;
};
static int entry_cb(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct entry_ctx *ec = arg;
    ec->ok = pt_eh_rows(ec->ctx, cie, fde, &ec->row, 1) == 1;
    return 1;
}
static int entry_row(const struct pt_arch *a, struct pt_row *out)
{
    struct pt_buf b;
    pt_buf_init(&b, a->big_endian);
    size_t cie = pt_eh_cie(&b, a);
    pt_eh_fde(&b, cie, 0, 1, NULL, 0);
    pt_eh_terminator(&b);
    struct pt_eh_ctx ctx = {.data = b.data, .len = b.len, .big_endian = a->big_endian, .addr_size = a->addr_size};
    struct entry_ctx ec = {.ctx = &ctx};
    int r = b.failed ? -1 : pt_eh_walk(&ctx, entry_cb, &ec, NULL, NULL);
    pt_buf_free(&b);
    if (r < 0 || !ec.ok)
        return -1;
    *out = ec.row;
    return 0;
}

struct job {
    const struct pt_arch *arch;
    struct pt_eh_ctx *ctx;
    struct pt_row entry;
    const char *want_name;
    uint64_t want;       /* address to cover; 0: every FDE */
    bool have_want;
    int found, unexpressible;
};

static void op(uint64_t loc, const char *name, uint32_t reg, int64_t value, const char *comment)
{
    printf("    {.offset = %" PRIu64 ", .op = PERFTRAMP_CFI_%s, .reg = %" PRIu32 ", .value = %" PRId64 "},%s%s%s\n", loc,
           name, reg, value, comment ? " /* " : "", comment ? comment : "", comment ? " */" : "");
}

static bool same_rule(const struct pt_reg_rule *x, const struct pt_reg_rule *y)
{
    return x && y && x->kind == y->kind && x->offset == y->offset;
}

/* The ops turning row p into row r, at r->loc. */
static void diff(struct job *j, const struct pt_row *p, const struct pt_row *r)
{
    char rb[24];
    if (r->cfa_expression || r->ra_signed != p->ra_signed) {
        printf("    /* +%" PRIu64 ": %s: not expressible in struct perftramp_cfi */\n", r->loc,
               r->cfa_expression ? "CFA expression" : "return-address signing state");
        j->unexpressible++;
    } else if (r->cfa_reg != p->cfa_reg && r->cfa_offset != p->cfa_offset) {
        op(r->loc, "DEF_CFA", r->cfa_reg, r->cfa_offset, cli_reg_name(j->arch, r->cfa_reg, rb));
    } else if (r->cfa_reg != p->cfa_reg) {
        op(r->loc, "DEF_CFA_REGISTER", r->cfa_reg, 0, cli_reg_name(j->arch, r->cfa_reg, rb));
    } else if (r->cfa_offset != p->cfa_offset) {
        op(r->loc, "DEF_CFA_OFFSET", 0, r->cfa_offset, NULL);
    }
    /* registers, ascending: both lists are sorted */
    size_t a = 0, b = 0;
    while (a < p->n_rules || b < r->n_rules) {
        const struct pt_reg_rule *was = a < p->n_rules ? &p->rules[a] : NULL;
        const struct pt_reg_rule *now = b < r->n_rules ? &r->rules[b] : NULL;
        if (was && now && was->reg < now->reg)
            now = NULL; /* only the previous row has was->reg */
        else if (was && now && now->reg < was->reg)
            was = NULL; /* only the new row has now->reg */
        uint32_t reg = now ? now->reg : was->reg;
        if (was)
            a++;
        if (now)
            b++;
        if (same_rule(was, now))
            continue;
        const char *rn = cli_reg_name(j->arch, reg, rb);
        if (!now) {
            op(r->loc, "RESTORE", reg, 0, rn);
            continue;
        }
        switch (now->kind) {
        case PT_RULE_OFFSET: op(r->loc, "OFFSET", reg, now->offset, rn); break;
        case PT_RULE_SAME_VALUE: op(r->loc, "SAME_VALUE", reg, 0, rn); break;
        case PT_RULE_EXPLICIT_UNDEFINED: op(r->loc, "UNDEFINED", reg, 0, rn); break;
        default:
            printf("    /* +%" PRIu64 ": %s: a rule kind %u not expressible in struct perftramp_cfi */\n", r->loc, rn,
                   (unsigned)now->kind);
            j->unexpressible++;
        }
    }
}

static int fde_cb(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct job *j = arg;
    if (j->have_want && (j->want < fde->pc_begin || j->want - fde->pc_begin >= fde->pc_range))
        return 0;
    static struct pt_row rows[CFI_MAX_ROWS];
    int n = pt_eh_rows(j->ctx, cie, fde, rows, CFI_MAX_ROWS);
    if (n < 0)
        return -1;
    j->found++;
    printf("/* FDE at .eh_frame+0x%zx: pc 0x%" PRIx64 "..0x%" PRIx64 " (%" PRIu64 " bytes)%s%s, %s */\n", fde->offset,
           fde->pc_begin, fde->pc_begin + fde->pc_range, fde->pc_range, j->want_name ? ", " : "",
           j->want_name ? j->want_name : "", j->arch->name);
    printf("static const struct perftramp_cfi rows_%" PRIx64 "[] = {\n", fde->pc_begin);
    const struct pt_row *prev = &j->entry;
    for (int i = 0; i < n; i++) {
        diff(j, prev, &rows[i]);
        prev = &rows[i];
    }
    printf("};\n");
    return j->have_want ? 1 : 0;
}

static int usage(void)
{
    fprintf(stderr, "usage: perftramp cfi FILE [SYMBOL|ADDR]\n"
                    "  prints the FDE covering SYMBOL or ADDR (every FDE without one) of a linked ELF\n"
                    "  file's .eh_frame as struct perftramp_cfi rows for perftramp_publish\n");
    return CLI_USAGE;
}

static uint8_t *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    uint8_t *data = NULL;
    size_t cap = 0, n = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : 1 << 16;
            uint8_t *p = realloc(data, cap);
            if (!p) {
                free(data);
                fclose(f);
                errno = ENOMEM;
                return NULL;
            }
            data = p;
        }
        size_t got = fread(data + n, 1, cap - n, f);
        n += got;
        if (got == 0)
            break;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(data);
        errno = EIO;
        return NULL;
    }
    *len = n;
    return data;
}

int cli_cfi_main(int argc, char **argv)
{
    if (argc < 2 || argc > 3 || argv[1][0] == '-')
        return usage();
    const char *path = argv[1];
    size_t len = 0;
    uint8_t *data = slurp(path, &len);
    if (!data) {
        fprintf(stderr, "perftramp cfi: %s: %s\n", path, strerror(errno));
        return CLI_USAGE;
    }
    int rc = CLI_INVALID;
    struct pt_elf e;
    const char *why = NULL;
    struct pt_elf_section eh;
    if (pt_elf_open(&e, data, len, &why) < 0) {
        fprintf(stderr, "perftramp cfi: %s: not an ELF file we read: %s\n", path, why ? why : "?");
        goto out;
    }
    struct job j = {0};
    for (size_t k = 0; k < pt_arch_count; k++)
        if (pt_arch_list[k]->elf_machine == e.machine && pt_arch_list[k]->big_endian == e.big_endian &&
            pt_arch_list[k]->addr_size == e.addr_size)
            j.arch = pt_arch_list[k];
    if (!j.arch) {
        fprintf(stderr, "perftramp cfi: %s: machine %u has no perftramp table\n", path, (unsigned)e.machine);
        goto out;
    }
    if (e.type == 1 /* ET_REL */) {
        fprintf(stderr, "perftramp cfi: %s: a relocatable object: its .eh_frame pointers are not relocated yet; "
                        "link it (e.g. gcc -shared) first\n", path);
        goto out;
    }
    if (pt_elf_section(&e, ".eh_frame", &eh) < 0 || !eh.data) {
        fprintf(stderr, "perftramp cfi: %s: no .eh_frame section\n", path);
        goto out;
    }
    if (argc == 3) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(argv[2], &end, 0);
        if (!errno && *end == 0 && end != argv[2]) {
            j.want = v;
        } else if (find_symbol(&e, argv[2], &j.want) == 0) {
            j.want_name = argv[2];
        } else {
            fprintf(stderr, "perftramp cfi: %s: no function symbol %s\n", path, argv[2]);
            goto out;
        }
        j.have_want = true;
    }
    if (entry_row(j.arch, &j.entry) < 0) {
        fprintf(stderr, "perftramp cfi: cannot build %s's entry rules\n", j.arch->name);
        goto out;
    }
    struct pt_eh_ctx ctx = {.data = eh.data, .len = eh.size, .address = eh.addr, .big_endian = e.big_endian,
                            .addr_size = e.addr_size};
    j.ctx = &ctx;
    printf("/* %s: .eh_frame rows in perftramp_publish's form (%s; offsets from the function's start) */\n", path,
           j.arch->name);
    if (pt_eh_walk(&ctx, fde_cb, &j, NULL, NULL) < 0) {
        fprintf(stderr, "perftramp cfi: %s: .eh_frame: %s\n", path, ctx.error);
        goto out;
    }
    if (j.have_want && !j.found) {
        fprintf(stderr, "perftramp cfi: %s: no FDE covers 0x%" PRIx64 "\n", path, j.want);
        goto out;
    }
    if (j.unexpressible) {
        fprintf(stderr, "perftramp cfi: %d rule(s) not expressible with perftramp_publish\n", j.unexpressible);
        goto out;
    }
    rc = CLI_OK;
out:
    free(data);
    return rc;
}
