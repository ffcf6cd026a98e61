/* SPDX-License-Identifier: MIT */
/* perftramp arch [NAME] [--raw DIR]: what one architecture table emits.
 *
 * Everything shown is derived the way the library derives it at run time
 * (pt_layout_build, pt_eh_jitdump_blob) and then read back with the
 * untrusted-input decoder (pt_eh_walk, pt_eh_rows, pt_eh_hdr_decode), so
 * the listing is a second opinion on the emitter, not a copy of the table. */
#include "cli.h"

#include "emit/bytebuf.h"
#include "emit/eh_frame.h"
#include "emit/elf_image.h"
#include "emit/layout.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Where --raw places the trampoline in its ELF object: .text here,
 * .eh_frame at ALIGN8(size) after it, .eh_frame_hdr right behind (the
 * genelf layout perf uses for jitdump code). */
#define RAW_TEXT_ADDR 0x1000u
#define ROWS_MAX 64

struct emitted {
    struct pt_layout l;
    struct pt_buf blob;    /* .eh_frame then .eh_frame_hdr */
    size_t eh_size;        /* bytes of .eh_frame in blob */
    uint64_t text_addr, eh_addr, hdr_addr;
    /* decoded back */
    struct pt_cie cie;
    struct pt_fde fde;
    size_t n_fdes, n_cies;
    struct pt_row rows[ROWS_MAX];
    int n_rows;
    struct pt_eh_hdr_info hdr;
    uint64_t hdr_pc, hdr_fde;
};

static const char *word_name(int w)
{
    return w == PT_WORD_TARGET ? "target" : w == PT_WORD_TAG ? "tag" : "?";
}

static int first_fde(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct emitted *e = arg;
    if (e->n_fdes++ == 0) {
        e->cie = *cie;
        e->fde = *fde;
    }
    return 0;
}

static void hdr_row(void *arg, uint64_t pc, uint64_t fde)
{
    struct emitted *e = arg;
    e->hdr_pc = pc;
    e->hdr_fde = fde;
}

/* Lays the table out, emits the jitdump unwinding blob and decodes it back. */
static int emit(const struct pt_arch *a, struct emitted *e)
{
    const char *why = NULL;
    memset(e, 0, sizeof *e);
    if (pt_layout_build(&e->l, a, &why) < 0) {
        fprintf(stderr, "perftramp: %s: table cannot be laid out: %s\n", a->name, why ? why : "?");
        return -1;
    }
    pt_buf_init(&e->blob, a->big_endian);
    if (pt_eh_jitdump_blob(&e->blob, &e->l, &e->eh_size) < 0) {
        fprintf(stderr, "perftramp: %s: CFI cannot be emitted: %s\n", a->name, strerror(errno));
        return -1;
    }
    e->text_addr = RAW_TEXT_ADDR;
    e->eh_addr = e->text_addr + ((e->l.size + 7) & ~(uint64_t)7);
    e->hdr_addr = e->eh_addr + e->eh_size;

    struct pt_eh_ctx ctx = {.data = e->blob.data, .len = e->eh_size, .address = e->eh_addr,
                            .big_endian = a->big_endian, .addr_size = a->addr_size};
    if (pt_eh_walk(&ctx, first_fde, e, &e->n_cies, &e->n_fdes) < 0 || e->n_fdes != 1) {
        fprintf(stderr, "perftramp: %s: emitted .eh_frame does not decode: %s\n", a->name,
                ctx.error[0] ? ctx.error : "not exactly one FDE");
        return -1;
    }
    e->n_rows = pt_eh_rows(&ctx, &e->cie, &e->fde, e->rows, ROWS_MAX);
    if (e->n_rows < 0) {
        fprintf(stderr, "perftramp: %s: emitted FDE program does not decode: %s\n", a->name, ctx.error);
        return -1;
    }
    struct pt_eh_ctx hctx = {.data = e->blob.data + e->eh_size, .len = e->blob.len - e->eh_size,
                             .address = e->hdr_addr, .big_endian = a->big_endian, .addr_size = a->addr_size};
    if (pt_eh_hdr_decode(&hctx, &e->hdr, hdr_row, e) < 0) {
        fprintf(stderr, "perftramp: %s: emitted .eh_frame_hdr does not decode: %s\n", a->name, hctx.error);
        return -1;
    }
    return 0;
}

/* The decoded row in force at `loc` (rows are sorted by loc). */
static const struct pt_row *row_at(const struct emitted *e, uint64_t loc)
{
    const struct pt_row *r = NULL;
    for (int i = 0; i < e->n_rows; i++)
        if (e->rows[i].loc <= loc)
            r = &e->rows[i];
    return r;
}

/* Registers that carry a rule in any row, ascending; the RA column last
 * is not special-cased: readelf sorts it by number too. */
static size_t used_regs(const struct emitted *e, uint32_t *regs, size_t max)
{
    size_t n = 0;
    for (int i = 0; i < e->n_rows; i++)
        for (size_t k = 0; k < e->rows[i].n_rules; k++) {
            uint32_t r = e->rows[i].rules[k].reg;
            size_t j = 0;
            while (j < n && regs[j] < r)
                j++;
            if (j < n && regs[j] == r)
                continue;
            if (n == max)
                continue;
            memmove(&regs[j + 1], &regs[j], (n - j) * sizeof *regs);
            regs[j] = r;
            n++;
        }
    return n;
}

static void cfa_text(const struct pt_arch *a, const struct pt_row *r, char *out, size_t n)
{
    char rb[24];
    if (!r)
        snprintf(out, n, "?");
    else if (r->cfa_expression)
        snprintf(out, n, "exp");
    else
        snprintf(out, n, "%s%+" PRId64, cli_reg_name(a, r->cfa_reg, rb), r->cfa_offset);
}

static void print_row_cells(FILE *out, const struct pt_arch *a, const struct pt_row *r, const uint32_t *regs,
                            size_t n_regs)
{
    char t[40];
    cfa_text(a, r, t, sizeof t);
    fprintf(out, "%-10s", t);
    for (size_t k = 0; k < n_regs; k++) {
        cli_rule_text(a, r ? pt_row_rule(r, regs[k]) : NULL, t, sizeof t);
        fprintf(out, " %-7s", t);
    }
    if (r && r->ra_signed)
        fputs(" ra-signed", out);
}

static void print_insns(FILE *out, const struct emitted *e)
{
    const struct pt_arch *a = e->l.arch;
    fprintf(out, "\nInstructions (bytes from the table, fixups resolved by the layout):\n");
    fprintf(out, "  offset  bytes                    instruction\n");
    for (size_t i = 0; i < a->n_insns; i++) {
        const struct pt_insn *in = &a->insns[i];
        char hex[3 * PT_INSN_MAX_BYTES + 1] = "";
        for (size_t k = 0; k < in->len; k++)
            snprintf(hex + 3 * k, 4, "%02x ", e->l.bytes[e->l.insn_off[i] + k]);
        fprintf(out, "  0x%04zx  %-24s %s", e->l.insn_off[i], hex, in->text ? in->text : "?");
        if (in->fixup != PT_FIX_NONE)
            fprintf(out, "    [%s -> %s at 0x%zx]", pt_fixup_name(in->fixup), word_name(in->fixup_word),
                    e->l.word_off[in->fixup_word]);
        fputc('\n', out);
    }
    bool quad = a->addr_size == 8;
    if (e->l.word_off[0] > e->l.code_len)
        fprintf(out, "  0x%04zx  (%zu bytes of zero padding to %u)\n", e->l.code_len,
                e->l.word_off[0] - e->l.code_len, (unsigned)a->addr_size);
    for (int w = 0; w < PT_WORD_COUNT; w++)
        fprintf(out, "  0x%04zx  %-24s %s %s   (data word, written per trampoline)\n", e->l.word_off[w],
                quad ? "xx xx xx xx xx xx xx xx" : "xx xx xx xx", quad ? ".quad" : ".long", word_name(w));
    fprintf(out, "  0x%04zx  end (one trampoline = %zu bytes)\n", e->l.size, e->l.size);
}

static void print_rules(FILE *out, const struct emitted *e)
{
    const struct pt_arch *a = e->l.arch;
    uint32_t regs[PT_ROW_MAX_RULES];
    size_t n_regs = used_regs(e, regs, PT_ROW_MAX_RULES);
    char rb[24];

    fprintf(out, "\nRules at every instruction offset (decoded from the emitted FDE):\n");
    fprintf(out, "  offset  %-10s", "CFA");
    for (size_t k = 0; k < n_regs; k++)
        fprintf(out, " %-7s", regs[k] == a->ra_column ? "ra" : cli_reg_name(a, regs[k], rb));
    fprintf(out, "  before\n");
    for (size_t i = 0; i < a->n_insns; i++) {
        fprintf(out, "  0x%04zx  ", e->l.insn_off[i]);
        print_row_cells(out, a, row_at(e, e->l.insn_off[i]), regs, n_regs);
        fprintf(out, "  %s\n", a->insns[i].text ? a->insns[i].text : "?");
    }
    fprintf(out, "  (u = not saved by this frame: the caller's value; c+N = saved at CFA+N; s = same value)\n");

    fprintf(out, "\nRows (one per change, as readelf --debug-dump=frames-interp prints them):\n");
    fprintf(out, "  LOC     %-10s", "CFA");
    for (size_t k = 0; k < n_regs; k++)
        fprintf(out, " %-7s", regs[k] == a->ra_column ? "ra" : cli_reg_name(a, regs[k], rb));
    fputc('\n', out);
    for (int i = 0; i < e->n_rows; i++) {
        fprintf(out, "  0x%04" PRIx64 "  ", e->rows[i].loc);
        print_row_cells(out, a, &e->rows[i], regs, n_regs);
        fputc('\n', out);
    }
}

static void print_eh(FILE *out, const struct emitted *e)
{
    const struct pt_arch *a = e->l.arch;
    const struct pt_cie *c = &e->cie;
    const struct pt_fde *f = &e->fde;
    char rb[24];

    fprintf(out, "\n.eh_frame (%zu bytes; genelf layout: at .text + ALIGN8(%zu) = .text + 0x%" PRIx64 "):\n",
            e->eh_size, e->l.size, e->eh_addr - e->text_addr);
    cli_hexdump(out, "  ", e->blob.data, e->eh_size, 0);
    fprintf(out, "  CIE at 0x%zx: version %u, augmentation \"%s\", code_align %" PRIu64 ", data_align %" PRId64
                 ", return address column %" PRIu64 " (%s), FDE pointer encoding 0x%02x\n",
            c->offset, c->version, c->augmentation, c->code_align, c->data_align, c->ra_column,
            cli_reg_name(a, c->ra_column, rb), c->fde_encoding);
    fprintf(out, "    initial instructions:\n");
    cli_cfa_print(out, "      ", a, c->insns, c->insns_len, a->big_endian, c->code_align, c->data_align);
    int64_t pc_rel = (int64_t)(f->pc_begin - e->text_addr);
    fprintf(out, "  FDE at 0x%zx: CIE at 0x%zx, pc_begin .text%+" PRId64 ", pc_range %" PRIu64 " -> %s\n",
            f->offset, f->cie_offset, pc_rel, f->pc_range,
            pc_rel == 0 && f->pc_range == e->l.size ? "covers exactly the trampoline" : "DOES NOT match the code");
    fprintf(out, "    program:\n");
    cli_cfa_print(out, "      ", a, f->insns, f->insns_len, a->big_endian, c->code_align, c->data_align);

    size_t hdr_len = e->blob.len - e->eh_size;
    fprintf(out, "\n.eh_frame_hdr (%zu bytes, right after .eh_frame):\n", hdr_len);
    cli_hexdump(out, "  ", e->blob.data + e->eh_size, hdr_len, 0);
    fprintf(out, "  version %u, eh_frame_ptr_enc 0x%02x, fde_count_enc 0x%02x, table_enc 0x%02x\n",
            e->hdr.version, e->hdr.eh_frame_ptr_enc, e->hdr.fde_count_enc, e->hdr.table_enc);
    fprintf(out, "  eh_frame_ptr -> %s, fde_count %" PRIu64 "\n",
            e->hdr.eh_frame_ptr == e->eh_addr ? ".eh_frame start (ok)" : "NOT the .eh_frame start",
            e->hdr.fde_count);
    if (e->hdr.fde_count)
        fprintf(out, "  table: pc .text%+" PRId64 " -> FDE at .eh_frame+0x%" PRIx64 "%s\n",
                (int64_t)(e->hdr_pc - e->text_addr), e->hdr_fde - e->eh_addr,
                e->hdr_fde - e->eh_addr == f->offset ? " (ok)" : " (NOT the FDE)");
}

static int write_file(const char *dir, const char *name, const void *p, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        fprintf(stderr, "perftramp: %s: %s\n", path, strerror(errno));
        return -1;
    }
    const uint8_t *b = p;
    while (n) {
        ssize_t w = write(fd, b, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            fprintf(stderr, "perftramp: %s: %s\n", path, strerror(errno));
            close(fd);
            return -1;
        }
        b += w;
        n -= (size_t)w;
    }
    if (close(fd) < 0) {
        fprintf(stderr, "perftramp: %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

/* rows.txt: the decoded rows with DWARF register numbers, for tests that
 * compare them with another decoder (readelf).  One row a line:
 *   LOC CFA_REG CFA_OFFSET [REG=RULE ...]   (rules in readelf notation) */
static int write_rows(const char *dir, const struct emitted *e)
{
    struct pt_buf b;
    pt_buf_init(&b, false);
    for (int i = 0; i < e->n_rows; i++) {
        char line[64], t[40];
        const struct pt_row *r = &e->rows[i];
        snprintf(line, sizeof line, "0x%" PRIx64 " %s r%u%+" PRId64, r->loc, r->cfa_expression ? "exp" : "cfa",
                 r->cfa_reg, r->cfa_offset);
        pt_buf_put(&b, line, strlen(line));
        for (size_t k = 0; k < r->n_rules; k++) {
            /* numbers, not names: the comparison must not depend on them */
            if (r->rules[k].kind == PT_RULE_REGISTER)
                snprintf(t, sizeof t, "r%" PRId64, r->rules[k].offset);
            else
                cli_rule_text(NULL, &r->rules[k], t, sizeof t);
            snprintf(line, sizeof line, " r%u=%s", r->rules[k].reg, t);
            pt_buf_put(&b, line, strlen(line));
        }
        pt_buf_u8(&b, '\n');
    }
    int rc = b.failed ? -1 : write_file(dir, "rows.txt", b.data, b.len);
    pt_buf_free(&b);
    return rc;
}

static int write_raw(const char *dir, const struct emitted *e)
{
    const struct pt_arch *a = e->l.arch;
    if (mkdir(dir, 0755) < 0 && errno != EEXIST) {
        fprintf(stderr, "perftramp: %s: %s\n", dir, strerror(errno));
        return -1;
    }
    size_t hdr_len = e->blob.len - e->eh_size;
    /* .eh_frame_hdr is a SHT_PROGBITS section: readelf decodes it by name. */
    struct pt_elf_out_section secs[] = {
        {".text", 1 /* SHT_PROGBITS */, 0x2 | 0x4 /* ALLOC|EXECINSTR */, e->text_addr, e->l.bytes, e->l.size, 16},
        {".eh_frame", 1, 0x2 /* ALLOC */, e->eh_addr, e->blob.data, e->eh_size, 8},
        {".eh_frame_hdr", 1, 0x2, e->hdr_addr, e->blob.data + e->eh_size, hdr_len, 4},
    };
    char sym[64];
    snprintf(sym, sizeof sym, "perftramp_%s", a->name);
    /* ET_REL: a symbol value is an offset in its section */
    struct pt_elf_out_symbol syms[] = {{sym, 0, 0, e->l.code_len}};
    size_t elf_len = 0;
    uint8_t *elf = pt_elf_build(a, secs, 3, syms, 1, &elf_len);
    if (!elf) {
        fprintf(stderr, "perftramp: ELF image: %s\n", strerror(errno));
        return -1;
    }
    int rc = 0;
    if (write_file(dir, "code.bin", e->l.bytes, e->l.size) < 0 ||
        write_file(dir, "eh_frame.bin", e->blob.data, e->eh_size) < 0 ||
        write_file(dir, "eh_frame_hdr.bin", e->blob.data + e->eh_size, hdr_len) < 0 ||
        write_file(dir, "trampoline.o", elf, elf_len) < 0 || write_rows(dir, e) < 0)
        rc = -1;
    free(elf);
    if (rc == 0)
        printf("\nWrote %s/{code.bin,eh_frame.bin,eh_frame_hdr.bin,trampoline.o,rows.txt}.\n"
               "  .text at 0x%" PRIx64 ", .eh_frame at 0x%" PRIx64 ", .eh_frame_hdr at 0x%" PRIx64 "\n"
               "  readelf --debug-dump=frames-interp %s/trampoline.o\n"
               "  llvm-objdump -d --triple=%s %s/trampoline.o\n",
               dir, e->text_addr, e->eh_addr, e->hdr_addr, dir, a->clang_target ? a->clang_target : "?", dir);
    return rc;
}

static void list_archs(void)
{
    const struct pt_arch *host = pt_arch_host();
    for (size_t i = 0; i < pt_arch_count; i++) {
        const struct pt_arch *a = pt_arch_list[i];
        struct pt_layout l;
        const char *why = NULL;
        if (pt_layout_build(&l, a, &why) == 0)
            printf("%-10s EM %-4u %-6s %3zu bytes code, %3zu per trampoline  %s%s\n", a->name, a->elf_machine,
                   a->big_endian ? "big" : "little", l.code_len, l.size, a->clang_target ? a->clang_target : "",
                   a == host ? "  (host)" : "");
        else
            printf("%-10s EM %-4u BROKEN TABLE: %s\n", a->name, a->elf_machine, why ? why : "?");
    }
}

static void arch_usage(FILE *f)
{
    fprintf(f, "usage: perftramp arch              list the built-in architecture tables\n"
               "       perftramp arch NAME [--raw DIR]\n");
}

int cli_arch_main(int argc, char **argv)
{
    const char *name = NULL, *raw = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--raw") == 0 && i + 1 < argc) {
            raw = argv[++i];
        } else if (strncmp(argv[i], "--raw=", 6) == 0) {
            raw = argv[i] + 6;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            arch_usage(stdout);
            return CLI_OK;
        } else if (argv[i][0] == '-' || name) {
            fprintf(stderr, "perftramp arch: unexpected argument '%s'\n", argv[i]);
            arch_usage(stderr);
            return CLI_USAGE;
        } else {
            name = argv[i];
        }
    }
    if (!name) {
        if (raw) {
            fprintf(stderr, "perftramp arch: --raw needs an architecture NAME\n");
            return CLI_USAGE;
        }
        list_archs();
        return CLI_OK;
    }
    const struct pt_arch *a = pt_arch_find(name);
    if (!a) {
        fprintf(stderr, "perftramp arch: no table named '%s'; built in:", name);
        for (size_t i = 0; i < pt_arch_count; i++)
            fprintf(stderr, " %s", pt_arch_list[i]->name);
        fputc('\n', stderr);
        return CLI_USAGE;
    }
    struct emitted *e = calloc(1, sizeof *e);
    if (!e) {
        fprintf(stderr, "perftramp: %s\n", strerror(errno));
        return CLI_USAGE;
    }
    int rc = CLI_OK;
    if (emit(a, e) < 0) {
        rc = CLI_INVALID;
        goto out;
    }
    char rb[24];
    printf("%s: ELF machine %u, %s-endian, clang --target=%s\n", a->name, a->elf_machine,
           a->big_endian ? "big" : "little", a->clang_target ? a->clang_target : "?");
    printf("trampoline: %zu bytes of instructions, %zu bytes with data words, start aligned to %u%s\n",
           e->l.code_len, e->l.size, a->code_align, a->icache == PT_ICACHE_FLUSH ? ", icache flush needed" : "");
    printf("CIE: code_align %u, data_align %d, return address column %u (%s)\n", a->cie_code_align,
           a->cie_data_align, a->ra_column, cli_reg_name(a, a->ra_column, rb));
    print_insns(stdout, e);
    print_rules(stdout, e);
    print_eh(stdout, e);
    if (a->ehabi)
        cli_ehabi_print(stdout, &e->l, e->rows, e->n_rows);
    if (raw && write_raw(raw, e) < 0)
        rc = CLI_USAGE;
out:
    pt_buf_free(&e->blob);
    free(e);
    return rc;
}
