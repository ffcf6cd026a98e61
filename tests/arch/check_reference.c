/* SPDX-License-Identifier: MIT */
/* The reference cross-check.  For every built-in table with a reference
 * object tests/ref/<arch>.S, assemble the reference with clang and with GNU
 * as (<triple>-as, also for the host: the test never lets $CC stand in for
 * gas), link it (resolving pc-relative relocations), and require:
 *   - .text bytes == the table's bytes (data words and padding masked);
 *   - the CFA and register rules at every instruction boundary == those of
 *     the FDE perftramp emits, decoded by our decoder;
 *   - the CIE's return-address column == the table's;
 *   - the FDE's pc_range == the trampoline's size: the emitter's FDE covers
 *     the data words too, and so does the reference's .cfi_endproc;
 *   - the alignment factors by meaning: the two toolchains choose
 *     different raw factors, so what is compared is their effect, the byte
 *     offsets at which the rules change and the byte offsets of every saved
 *     register (the decoder multiplies the factors out);
 *   - the rules at every boundary again, decoded by readelf
 *     --debug-dump=frames-interp.
 * For a table whose unwinder reads Arm EHABI tables (.ehabi), the EHABI
 * entries derived from its rows are compared too (tests/arch/ehabi_reference.c).
 * Prints one line per architecture and toolchain:
 *   PROOF: arch.<arch>.reference-gas|reference-clang proven|failed|not-run ...
 * and, for EHABI tables, arch.<arch>.ehabi-reference-gas|-clang.
 * A missing assembler or linker is not-run, and the test then exits 77
 * (SKIP) unless something failed. */
#include "read/eh_decode.h"
#include "emit/eh_frame.h"
#include "emit/elf_image.h"
#include "read/elf_reader.h"
#include "emit/layout.h"
#include "readelf_rows.h"
#include "ehabi_reference.h"

#include <check.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ROWS 64
#define MAX_ARCHES 16

static char workdir[256];

/* One proof per architecture and toolchain.  The Check runner is told not
 * to fork, so a failed assertion ends the loop iteration: a proof still
 * RUNNING at the end failed, with that iteration's message; one never
 * started (PENDING) was not reached. */
enum { TC_CLANG, TC_GAS, TC_COUNT };
static const char *const tc_label[TC_COUNT] = {"clang", "gas"};
enum proof_state { P_PENDING = 0, P_RUNNING, P_PROVEN, P_NOT_RUN };
static struct {
    const char *arch;
    enum proof_state state[TC_COUNT];
    char detail[TC_COUNT][200];
    /* EHABI tables: the derived entries against the reference's */
    enum proof_state ehabi[TC_COUNT]; /* P_RUNNING at the end: failed */
    char ehabi_detail[TC_COUNT][400];
} proofs[MAX_ARCHES];

static void proof_set(int i, int tc, enum proof_state st, const char *fmt, ...)
{
    proofs[i].state[tc] = st;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(proofs[i].detail[tc], sizeof proofs[i].detail[tc], fmt, ap);
    va_end(ap);
}

static const char *env_or(const char *name, const char *fallback)
{
    const char *v = getenv(name);
    return v && *v ? v : fallback;
}

static bool have_tool(const char *tool)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", tool);
    return system(cmd) == 0;
}

static int run(const char *cmd)
{
    int st = system(cmd);
    return st == 0 ? 0 : -1;
}

static void *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    void *p = malloc((size_t)n + 1);
    if (p && fread(p, 1, (size_t)n, f) != (size_t)n) {
        free(p);
        p = NULL;
    }
    fclose(f);
    *len = (size_t)n;
    return p;
}

/* Rows of the first FDE that starts at `pc` in an .eh_frame. */
struct fde_rows {
    uint64_t pc;
    struct pt_eh_ctx *ctx;
    struct pt_row rows[MAX_ROWS];
    int n;
    uint64_t range;
    uint64_t ra_column, code_align;
    int64_t data_align;
};

static int take_rows(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct fde_rows *fr = arg;
    if (fde->pc_begin != fr->pc)
        return 0;
    fr->n = pt_eh_rows(fr->ctx, cie, fde, fr->rows, MAX_ROWS);
    fr->range = fde->pc_range;
    fr->ra_column = cie->ra_column;
    fr->code_align = cie->code_align;
    fr->data_align = cie->data_align;
    return 1;
}

static int rows_of(const uint8_t *eh, size_t len, uint64_t eh_addr, const struct pt_arch *a, uint64_t pc,
                   struct fde_rows *fr, char *err, size_t errlen)
{
    struct pt_eh_ctx ctx = {.data = eh, .len = len, .address = eh_addr, .big_endian = a->big_endian,
                            .addr_size = a->addr_size};
    memset(fr, 0, sizeof *fr);
    fr->pc = pc;
    fr->ctx = &ctx;
    fr->n = -2;
    int r = pt_eh_walk(&ctx, take_rows, fr, NULL, NULL);
    if (r < 0 || fr->n < 0) {
        snprintf(err, errlen, "%s", fr->n == -2 && r >= 0 ? "no FDE for the code" : ctx.error);
        return -1;
    }
    return 0;
}

static const struct pt_row *row_at(const struct fde_rows *fr, uint64_t off)
{
    const struct pt_row *r = &fr->rows[0];
    for (int i = 0; i < fr->n && fr->rows[i].loc <= off; i++)
        r = &fr->rows[i];
    return r;
}

static const struct pt_row *row_at_cb(const void *fr, uint64_t off)
{
    return row_at(fr, off);
}

/* Describes a row difference at `off`, or returns false when equal. */
static bool rows_differ(const struct pt_row *a, const struct pt_row *b, char *why, size_t len)
{
    if (a->cfa_reg != b->cfa_reg || a->cfa_offset != b->cfa_offset || a->cfa_expression != b->cfa_expression) {
        snprintf(why, len, "CFA r%u%+lld vs r%u%+lld", a->cfa_reg, (long long)a->cfa_offset, b->cfa_reg,
                 (long long)b->cfa_offset);
        return true;
    }
    if (a->ra_signed != b->ra_signed) {
        snprintf(why, len, "return address signing state %d vs %d", a->ra_signed, b->ra_signed);
        return true;
    }
    for (int pass = 0; pass < 2; pass++) {
        const struct pt_row *x = pass ? b : a, *y = pass ? a : b;
        for (size_t i = 0; i < x->n_rules; i++) {
            const struct pt_reg_rule *rx = &x->rules[i], *ry = pt_row_rule(y, rx->reg);
            if (!ry || ry->kind != rx->kind || ry->offset != rx->offset) {
                snprintf(why, len, "register %u: rule %d%+lld vs %s", rx->reg, rx->kind, (long long)rx->offset,
                         ry ? "a different rule" : "none");
                return true;
            }
        }
    }
    return false;
}

/* The byte offsets below `end` at which the rules change (rows equal to
 * the one before them dropped: an assembler may emit an empty advance). */
static size_t change_locs(const struct fde_rows *fr, uint64_t end, uint64_t *locs, size_t max)
{
    size_t n = 0;
    char why[8];
    for (int i = 0; i < fr->n && fr->rows[i].loc < end && n < max; i++)
        if (i == 0 || rows_differ(&fr->rows[i - 1], &fr->rows[i], why, sizeof why))
            locs[n++] = fr->rows[i].loc;
    return n;
}

/* Our side: the table's code and its emitted FDE, in an ELF readelf reads. */
struct ours {
    struct pt_layout l;
    struct pt_buf eh;
    char elf_path[300];
    char factors[2][48]; /* the reference's CIE factors: clang, gas */
    size_t changes;      /* rule changes inside the code */
};

enum { OUR_TEXT = 0x10000, OUR_EH = 0x20000 };

static void build_ours(const struct pt_arch *arch, struct ours *o)
{
    const char *why = NULL;
    ck_assert_msg(pt_layout_build(&o->l, arch, &why) == 0, "%s: layout: %s", arch->name, why);
    struct pt_buf prog;
    pt_buf_init(&prog, arch->big_endian);
    pt_buf_init(&o->eh, arch->big_endian);
    ck_assert_int_eq(pt_cfi_program(&prog, &o->l), 0);
    size_t cie = pt_eh_cie(&o->eh, arch);
    pt_eh_fde(&o->eh, cie, (int64_t)OUR_TEXT - OUR_EH, o->l.size, prog.data, prog.len);
    pt_eh_terminator(&o->eh);
    pt_buf_free(&prog);
    ck_assert(!o->eh.failed);
    struct pt_elf_out_section secs[] = {
        {".text", 1, 0x6 /* ALLOC|EXECINSTR */, OUR_TEXT, o->l.bytes, o->l.size, 16},
        {".eh_frame", 1, 0x2 /* ALLOC */, OUR_EH, o->eh.data, o->eh.len, 8},
    };
    size_t len;
    uint8_t *img = pt_elf_build(arch, secs, 2, NULL, 0, &len);
    ck_assert_ptr_nonnull(img);
    snprintf(o->elf_path, sizeof o->elf_path, "%s/%s-ours.o", workdir, arch->name);
    FILE *f = fopen(o->elf_path, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(img, 1, len, f), len);
    fclose(f);
    free(img);
}

/* Assembles and links the reference with one toolchain and compares;
 * returns only when everything agrees. */
static void check_toolchain(const struct pt_arch *arch, struct ours *o, int tc, int ai, const char *assemble,
                            const char *ld, const char *readelf)
{
    const char *label = tc_label[tc];
    char src[512], obj[400], so[400], cmd[2048], err[256];
    snprintf(src, sizeof src, "%s/tests/ref/%s.S", env_or("PT_SRCDIR", "."), arch->name);
    snprintf(obj, sizeof obj, "%s/%s-%s.o", workdir, arch->name, label);
    snprintf(so, sizeof so, "%s/%s-%s.so", workdir, arch->name, label);
    snprintf(cmd, sizeof cmd, "%s -o '%s' '%s'", assemble, obj, src);
    ck_assert_msg(run(cmd) == 0, "%s: %s failed: %s", arch->name, label, cmd);
    snprintf(cmd, sizeof cmd, "%s -shared --no-relax -o '%s' '%s' 2>/dev/null", ld, so, obj);
    ck_assert_msg(run(cmd) == 0, "%s: link failed: %s", arch->name, cmd);

    size_t len;
    uint8_t *img = slurp(so, &len);
    ck_assert_ptr_nonnull(img);
    struct pt_elf e;
    const char *why = "";
    ck_assert_msg(pt_elf_open(&e, img, len, &why) == 0, "%s: %s", so, why);
    ck_assert_uint_eq(e.machine, arch->elf_machine);
    ck_assert_int_eq(e.big_endian, arch->big_endian);
    ck_assert_msg(e.addr_size == arch->addr_size, "%s %s: ELFCLASS%d from the toolchain, the table's .addr_size is %u",
                  arch->name, label, e.addr_size * 8, arch->addr_size);
    struct pt_elf_section text, eh;
    ck_assert_msg(pt_elf_section(&e, ".text", &text) == 0, "%s: no .text", so);
    ck_assert_msg(pt_elf_section(&e, ".eh_frame", &eh) == 0, "%s: no .eh_frame", so);

    /* 1. bytes, with data words and alignment padding masked.  A table
     * with relocations (a direct call) calls `near_target`, which the
     * reference puts right after the trampoline: the linker's resolution
     * and pt_layout_write_at's must agree */
    ck_assert_msg(text.size >= o->l.size, "%s %s: .text is %llu bytes, table lays out %zu", arch->name, label,
                  (unsigned long long)text.size, o->l.size);
    uint8_t want[PT_LAYOUT_MAX_BYTES];
    memcpy(want, o->l.bytes, sizeof want);
    if (o->l.n_relocs) {
        uint8_t written[PT_LAYOUT_MAX_BYTES];
        ck_assert_int_eq(pt_layout_write_at(&o->l, written, text.addr, text.addr + o->l.size, 0), 0);
        memcpy(want, written, o->l.code_len);
    }
    for (size_t i = 0; i < o->l.code_len; i++) {
        size_t k = 0;
        while (k + 1 < arch->n_insns && o->l.insn_off[k + 1] <= i)
            k++;
        ck_assert_msg(text.data[i] == want[i],
                      "%s %s: byte %zu differs (ref 0x%02x, table 0x%02x) in instruction %zu \"%s\"", arch->name,
                      label, i, text.data[i], want[i], k, arch->insns[k].text);
    }

    /* 2. rules at every instruction boundary, our decoder on both sides */
    struct fde_rows ref, mine;
    ck_assert_msg(rows_of(eh.data, eh.size, eh.addr, arch, text.addr, &ref, err, sizeof err) == 0,
                  "%s %s: reference .eh_frame: %s", arch->name, label, err);
    ck_assert_msg(rows_of(o->eh.data, o->eh.len, OUR_EH, arch, OUR_TEXT, &mine, err, sizeof err) == 0,
                  "%s: emitted .eh_frame: %s", arch->name, err);
    for (size_t i = 0; i < arch->n_insns; i++) {
        uint64_t off = o->l.insn_off[i];
        char why_rows[200];
        ck_assert_msg(!rows_differ(row_at(&ref, off), row_at(&mine, off), why_rows, sizeof why_rows),
                      "%s %s: rules differ at offset %llu (before \"%s\"): reference vs table: %s", arch->name,
                      label, (unsigned long long)off, arch->insns[i].text, why_rows);
    }

    /* 3. the CIE's return-address column, and the FDE's extent */
    ck_assert_msg(ref.ra_column == mine.ra_column && mine.ra_column == arch->ra_column,
                  "%s %s: return-address column: reference %llu, emitted %llu, table %u", arch->name, label,
                  (unsigned long long)ref.ra_column, (unsigned long long)mine.ra_column, arch->ra_column);
    ck_assert_msg(ref.range == o->l.size && mine.range == o->l.size,
                  "%s %s: FDE pc_range: reference %llu, emitted %llu, trampoline (code + data words) %zu", arch->name,
                  label, (unsigned long long)ref.range, (unsigned long long)mine.range, o->l.size);

    /* 4. alignment factors by meaning: the same change points in bytes
     * (the code factor times each advance); register offsets in bytes
     * were compared at every boundary above (the data factor) */
    uint64_t ref_locs[MAX_ROWS], my_locs[MAX_ROWS];
    size_t n_ref = change_locs(&ref, o->l.code_len, ref_locs, MAX_ROWS);
    size_t n_mine = change_locs(&mine, o->l.code_len, my_locs, MAX_ROWS);
    bool same_locs = n_ref == n_mine;
    for (size_t i = 0; same_locs && i < n_ref; i++)
        same_locs = ref_locs[i] == my_locs[i];
    ck_assert_msg(same_locs,
                  "%s %s: the rules change at different byte offsets (%zu changes in the reference, %zu emitted; "
                  "code alignment factor %llu vs %llu)",
                  arch->name, label, n_ref, n_mine, (unsigned long long)ref.code_align,
                  (unsigned long long)mine.code_align);
    for (size_t i = 0; i < n_mine; i++)
        ck_assert_msg(my_locs[i] % mine.code_align == 0 && my_locs[i] % ref.code_align == 0,
                      "%s %s: rule change at %llu is not a multiple of the code alignment factors (%llu, %llu)",
                      arch->name, label, (unsigned long long)my_locs[i], (unsigned long long)mine.code_align,
                      (unsigned long long)ref.code_align);
    snprintf(o->factors[tc], sizeof o->factors[0], "%s: code %llu data %lld", label,
             (unsigned long long)ref.code_align, (long long)ref.data_align);
    o->changes = n_mine;

    /* 5. readelf as the second opinion */
    if (readelf) {
        struct re_table rt, mt;
        ck_assert_msg(readelf_fde_rows(readelf, so, text.addr, &rt, err, sizeof err) == 0, "%s", err);
        ck_assert_msg(readelf_fde_rows(readelf, o->elf_path, OUR_TEXT, &mt, err, sizeof err) == 0, "%s", err);
        for (size_t i = 0; i < arch->n_insns; i++) {
            uint64_t off = o->l.insn_off[i];
            for (int side = 0; side < 2; side++) {
                const struct re_table *cols = side ? &mt : &rt;
                for (size_t c = 0; c < cols->n_cols; c++) {
                    const char *a = readelf_cell_at(&rt, cols->cols[c], off);
                    const char *b = readelf_cell_at(&mt, cols->cols[c], off);
                    ck_assert_msg(strcmp(a, b) == 0,
                                  "%s %s: readelf disagrees at offset %llu column %s: reference %s, table %s",
                                  arch->name, label, (unsigned long long)off, cols->cols[c], a, b);
                }
            }
        }
    }

    /* 6. EHABI: the entries derived from the same rows, against the
     * reference's CFI at every boundary and its own .ARM.exidx entry */
    if (arch->ehabi) {
        char ewhy[300];
        if (ehabi_reference_check(&o->l, &e, text.addr, row_at_cb, &ref, ewhy, sizeof ewhy, proofs[ai].ehabi_detail[tc],
                                  sizeof proofs[ai].ehabi_detail[tc]) == 0) {
            proofs[ai].ehabi[tc] = P_PROVEN;
        } else {
            proofs[ai].ehabi[tc] = P_RUNNING;
            snprintf(proofs[ai].ehabi_detail[tc], sizeof proofs[ai].ehabi_detail[tc], "%s %s: %s", arch->name, label,
                     ewhy);
        }
    }
    free(img);
}

/* A tool on PATH that says it is GNU as. */
static bool is_gnu_as(const char *tool)
{
    char cmd[512], line[256];
    snprintf(cmd, sizeof cmd, "%s --version 2>/dev/null", tool);
    FILE *f = popen(cmd, "r");
    if (!f)
        return false;
    bool gnu = false;
    while (fgets(line, sizeof line, f))
        gnu = gnu || strstr(line, "GNU assembler") != NULL;
    pclose(f);
    return gnu;
}

/* The tables checked: every main table, then every variant. */
static size_t n_tables(void)
{
    return pt_arch_count + pt_arch_variant_count;
}
static const struct pt_arch *table_at(size_t i)
{
    return i < pt_arch_count ? pt_arch_list[i] : pt_arch_variants[i - pt_arch_count].arch;
}

/* One loop iteration per architecture and toolchain (_i = 2 * arch +
 * toolchain), so a failure with one toolchain does not hide the other. */
START_TEST(every_table_matches_its_reference)
{
    int ai = _i / TC_COUNT, tc = _i % TC_COUNT;
    const struct pt_arch *arch = table_at((size_t)ai);
    ck_assert_int_lt(ai, MAX_ARCHES);
    proofs[ai].arch = arch->name;
    proof_set(ai, tc, P_RUNNING, "");
    char src[512];
    snprintf(src, sizeof src, "%s/tests/ref/%s.S", env_or("PT_SRCDIR", "."), arch->name);
    struct stat st;
    ck_assert_msg(stat(src, &st) == 0, "%s: every table needs its reference %s", arch->name, src);

    bool host = strcmp(arch->name, env_or("PT_HOST_ARCH", "")) == 0;
    char assemble[300], ld[200], readelf[200];
    if (tc == TC_CLANG) {
        snprintf(assemble, sizeof assemble, "clang --target=%s -c", arch->clang_target);
    } else {
        /* GNU as by its triple name, on the host too (Debian installs
         * x86_64-linux-gnu-as next to as): never $CC, which may be clang */
        snprintf(assemble, sizeof assemble, "%s-as", arch->clang_target);
        if (host && !is_gnu_as(assemble))
            snprintf(assemble, sizeof assemble, "as");
    }
    snprintf(ld, sizeof ld, "%s-ld", arch->clang_target);
    if (host && !have_tool(ld))
        snprintf(ld, sizeof ld, "ld");
    snprintf(readelf, sizeof readelf, "readelf");

    struct ours o;
    memset(&o, 0, sizeof o);
    build_ours(arch, &o);
    if (!have_tool(ld)) {
        proof_set(ai, tc, P_NOT_RUN, "no linker %s (binutils-%s)", ld, arch->clang_target);
    } else if (!have_tool(readelf)) {
        proof_set(ai, tc, P_NOT_RUN, "no readelf (binutils)");
    } else if (tc == TC_CLANG && !have_tool("clang")) {
        proof_set(ai, tc, P_NOT_RUN, "clang not installed");
    } else if (tc == TC_GAS && !is_gnu_as(assemble)) {
        proof_set(ai, tc, P_NOT_RUN, "GNU as %s not installed (binutils-%s)", assemble, arch->clang_target);
    } else {
        check_toolchain(arch, &o, tc, ai, assemble, ld, readelf);
        proof_set(ai, tc, P_PROVEN,
                  "%zu boundaries: bytes, rules (our decoder and readelf), RA column %u, pc_range %zu, "
                  "%zu rows at the same byte offsets (%s)",
                  arch->n_insns, arch->ra_column, o.l.size, o.changes, o.factors[tc]);
    }
    printf("reference %-8s %-5s: %zu instructions, %zu bytes, .eh_frame %zu bytes: %s\n", arch->name, tc_label[tc],
           arch->n_insns, o.l.size, o.eh.len, proofs[ai].state[tc] == P_PROVEN ? "proven" : "NOT RUN");
    fflush(stdout);
    pt_buf_free(&o.eh);
}
END_TEST

/* One PROOF line per architecture and toolchain.  Returns how many
 * failed; *not_run counts the ones that could not run. */
static int print_proofs(SRunner *r, int *not_run)
{
    TestResult **res = srunner_failures(r);
    int n_res = srunner_ntests_failed(r), next = 0, failed = 0;
    *not_run = 0;
    for (size_t i = 0; i < n_tables() && i < MAX_ARCHES; i++) {
        for (int tc = 0; tc < TC_COUNT; tc++) {
            const char *name = table_at(i)->name, *what = tc_label[tc];
            switch (proofs[i].state[tc]) {
            case P_PROVEN:
                printf("PROOF: arch.%s.reference-%s proven %s\n", name, what, proofs[i].detail[tc]);
                break;
            case P_NOT_RUN:
                printf("PROOF: arch.%s.reference-%s not-run %s\n", name, what, proofs[i].detail[tc]);
                (*not_run)++;
                break;
            case P_RUNNING: /* failures come in loop order, one per failed iteration */
                printf("PROOF: arch.%s.reference-%s failed %s\n", name, what, next < n_res ? tr_msg(res[next++]) : "?");
                failed++;
                break;
            case P_PENDING:
                printf("PROOF: arch.%s.reference-%s failed not reached\n", name, what);
                failed++;
                break;
            }
            if (!table_at(i)->ehabi)
                continue;
            if (proofs[i].ehabi[tc] == P_PROVEN) {
                printf("PROOF: arch.%s.ehabi-reference-%s proven %s\n", name, what, proofs[i].ehabi_detail[tc]);
            } else if (proofs[i].state[tc] == P_NOT_RUN) {
                printf("PROOF: arch.%s.ehabi-reference-%s not-run %s\n", name, what, proofs[i].detail[tc]);
            } else {
                printf("PROOF: arch.%s.ehabi-reference-%s failed %s\n", name, what,
                       proofs[i].ehabi[tc] == P_RUNNING ? proofs[i].ehabi_detail[tc]
                                                        : "not reached (the DWARF reference check failed first)");
                failed++;
            }
        }
    }
    free(res);
    return failed;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(workdir, sizeof workdir, "%s/perftramp-ref-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(workdir)) {
        perror("mkdtemp");
        return 1;
    }
    Suite *s = suite_create("reference");
    TCase *t = tcase_create("tables");
    tcase_set_timeout(t, 120);
    tcase_add_loop_test(t, every_table_matches_its_reference, 0, (int)n_tables() * TC_COUNT);
    suite_add_tcase(s, t);
    SRunner *r = srunner_create(s);
    srunner_set_fork_status(r, CK_NOFORK);
    srunner_run_all(r, CK_NORMAL);
    int not_run = 0;
    int failed = print_proofs(r, &not_run);
    srunner_free(r);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", workdir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", workdir);
    if (failed)
        return 1;
    if (not_run) {
        printf("SKIP: %d reference proof(s) not run (see the PROOF lines)\n", not_run);
        return 77;
    }
    return 0;
}
