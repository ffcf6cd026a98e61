/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_JITDUMP: the dump perftramp writes, read back and checked by
 * the library's own validator (src/read/jitdump_reader.c), plus the
 * validator's teeth (it must reject what perf would choke on), errors
 * (EFBIG with no torn record), refusal of planted files, and fork. */
#include "api/context.h"
#include "read/eh_decode.h"
#include "read/jitdump_reader.h"
#include "../lib/perf_test_util.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

typedef long (*fn1)(long);
static long plus_one(long x)
{
    return x + 1;
}
static long times_three(long x)
{
    return x * 3;
}

struct issues {
    size_t n;
    char last[768];
};
static void collect(void *arg, enum pt_jd_severity sev, size_t off, const char *msg)
{
    struct issues *is = arg;
    if (sev == PT_JD_NOTE && strstr(msg, "room the writer mapped ahead"))
        return; /* a live dump's reserved zeros (outputs/file_window.h) */
    is->n++;
    if (msg[0] == '(')
        return; /* "(further issues ... not shown)" */
    snprintf(is->last, sizeof is->last, "%s at %zu: %s", sev == PT_JD_ERROR ? "error" : "warning", off, msg);
    fprintf(stderr, "  validator: %s\n", is->last);
}

static char *dir;
static char path[1024];

static void setup(void)
{
    dir = ptt_tempdir();
    ck_assert_ptr_nonnull(dir);
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dir, (long)getpid());
}

static void teardown(void)
{
    ptt_rmdir(dir);
    free(dir);
}

static perftramp *open_jd(unsigned flags)
{
    struct perftramp_options o = {.outputs = PERFTRAMP_JITDUMP, .jitdump_dir = dir, .flags = flags};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    return pt;
}

static uint8_t *dump(const char *p, size_t *len)
{
    uint8_t *d = ptt_read_file(p, len);
    ck_assert_msg(d != NULL, "read %s: %s", p, strerror(errno));
    return d;
}

/* Validates a file; returns errors, fills sum; counts warnings too. */
static size_t validate(const char *p, struct pt_jd_summary *sum, size_t *issues_out)
{
    size_t len;
    uint8_t *d = dump(p, &len);
    struct issues is = {0};
    size_t e = pt_jitdump_validate(d, len, sum, collect, &is);
    free(d);
    if (issues_out)
        *issues_out = is.n;
    return e;
}

START_TEST(dump_is_valid_and_complete_after_each_wrap)
{
    perftramp *pt = open_jd(0);
    struct stat st;
    ck_assert_int_eq(stat(path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    int fd = ptt_fd_of(path);
    ck_assert_int_ge(fd, 0);
    ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    char perms[5] = "";
    char suffix[64];
    snprintf(suffix, sizeof suffix, "/jit-%ld.dump", (long)getpid());
    ck_assert_msg(ptt_mapped(suffix, perms), "no marker mapping of %s", suffix);
    ck_assert_msg(perms[2] == 'x', "marker mapping is %s, perf wants it executable", perms);

    const char *names[] = {"py::main", "py::outer", "py::middle", "py::inner", "py::never"};
    fn1 t[5];
    for (int i = 0; i < 5; i++) {
        t[i] = (fn1)perftramp_wrap(pt, (perftramp_fn)(i % 2 ? times_three : plus_one), names[i]);
        ck_assert_ptr_nonnull(t[i]);
        /* in the kernel when wrap returns: the file already holds it whole */
        struct pt_jd_summary sum;
        size_t issues;
        ck_assert_uint_eq(validate(path, &sum, &issues), 0);
        ck_assert_uint_eq(issues, 0);
        ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], (size_t)i + 1);
        ck_assert_uint_eq(sum.by_id[PT_JD_UNWINDING_INFO], (size_t)i + 1);
        ck_assert_uint_eq(sum.loads_with_unwind, (size_t)i + 1);
        ck_assert_uint_eq(sum.trailing_bytes, 0);
    }
    ck_assert_int_eq(t[0](41), 42);
    ck_assert_int_eq(t[1](5), 15);

    size_t len;
    uint8_t *d = dump(path, &len);
    struct pt_jd_iter it;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    ck_assert_uint_eq(it.header.version, 1);
    ck_assert_uint_eq(it.header.elf_mach, pt_arch_host()->elf_machine);
    ck_assert_uint_eq(it.header.pid, (uint32_t)getpid());
    struct pt_jd_record r;
    int loads = 0, k;
    int prev_id = -1;
    while ((k = pt_jd_next(&it, &r)) == 1) {
        if (r.id == PT_JD_LOAD) {
            ck_assert_int_eq(prev_id, PT_JD_UNWINDING_INFO); /* the group: unwind info right before */
            ck_assert_str_eq(r.name, names[loads]);
            ck_assert_uint_eq(r.code_addr, (uintptr_t)t[loads]);
            ck_assert_uint_eq(r.code_size, pt->layout.size);
            /* the dumped bytes are the live trampoline's bytes */
            ck_assert_int_eq(memcmp(r.code, (const void *)(uintptr_t)r.code_addr, r.code_size), 0);
            ck_assert_uint_eq(r.total_size, PT_JD_LOAD_FIXED + strlen(names[loads]) + 1 + r.code_size);
            loads++;
        } else if (r.id == PT_JD_UNWINDING_INFO) {
            ck_assert_uint_gt(r.mapped_size, 0);
            ck_assert_uint_eq(r.mapped_size, r.unwinding_size);
            ck_assert_uint_eq(r.total_size % 8, 0);
        }
        prev_id = (int)r.id;
    }
    ck_assert_int_eq(k, 0);
    ck_assert_int_eq(loads, 5);
    free(d);

    /* while the context is open the file ends in the room its writer
     * mapped ahead (outputs/file_window.h): zeros, and no write(2) per group */
    size_t code_size = pt->layout.size;
    struct pt_jd_summary sum;
    ck_assert_uint_eq(validate(path, &sum, NULL), 0);
    ck_assert_uint_gt(sum.reserved_bytes, 0);
    ck_assert_uint_eq(sum.valid_bytes + sum.reserved_bytes, (uint64_t)len);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_uint_eq(validate(path, &sum, NULL), 0);
    ck_assert_uint_eq(sum.reserved_bytes, 0); /* closing cut it off */
    struct stat closed;
    ck_assert_int_eq(stat(path, &closed), 0);
    ck_assert_uint_eq((uint64_t)closed.st_size, sum.valid_bytes);
    ck_assert(sum.closed);
    ck_assert_uint_eq(sum.by_id[PT_JD_CLOSE], 1);
    ck_assert(!ptt_mapped(suffix, NULL)); /* marker gone with the context */
    size_t unwind_rec = (size_t)(sum.bytes_by_id[PT_JD_UNWINDING_INFO] / 5);
    printf("jitdump bytes per trampoline: UNWINDING_INFO %zu + LOAD %u + name length (%zu code bytes) = %zu for \"py::main\"\n",
           unwind_rec, (unsigned)(PT_JD_LOAD_FIXED + 1 + code_size), code_size,
           unwind_rec + PT_JD_LOAD_FIXED + 1 + code_size + strlen("py::main"));
}
END_TEST

/* perf's LOAD name is a C string it prints as is: a control byte (a
 * newline above all) must arrive escaped, as the perf map writes it. */
START_TEST(load_names_escape_control_bytes)
{
    perftramp *pt = open_jd(0);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "py::a\nb\001c\177"));
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *d = dump(path, &len);
    struct pt_jd_iter it;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    struct pt_jd_record r;
    int loads = 0;
    while (pt_jd_next(&it, &r) == 1)
        if (r.id == PT_JD_LOAD) {
            ck_assert_str_eq(r.name, "py::a\\x0ab\\x01c\\x7f");
            loads++;
        }
    ck_assert_int_eq(loads, 1);
    free(d);
}
END_TEST

START_TEST(code_index_never_reused_and_ranges_disjoint)
{
    perftramp *pt = open_jd(0);
    enum { N = 300 };
    static fn1 t[N];
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d", i);
        t[i] = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, name);
        ck_assert_ptr_nonnull(t[i]);
    }
    /* release half, reuse their slots: same addresses, new code_index */
    for (int i = 0; i < N; i += 2)
        ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)t[i]), 0);
    int reused = 0;
    for (int i = 0; i < N; i += 2) {
        fn1 u = (fn1)perftramp_wrap(pt, (perftramp_fn)times_three, "again");
        ck_assert_ptr_nonnull(u);
        for (int j = 0; j < N; j += 2)
            reused += u == t[j];
        ck_assert_int_eq(u(4), 12);
    }
    ck_assert_int_gt(reused, 0);

    size_t len;
    uint8_t *d = dump(path, &len);
    struct pt_jd_iter it;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    struct pt_jd_record r;
    static uint64_t idx[2 * N];
    size_t n = 0;
    uint64_t mapped = 0;
    while (pt_jd_next(&it, &r) == 1) {
        if (r.id == PT_JD_UNWINDING_INFO)
            mapped = r.mapped_size;
        if (r.id == PT_JD_LOAD && n < 2 * N)
            idx[n++] = r.code_index;
    }
    ck_assert_uint_eq(n, N + N / 2);
    for (size_t i = 0; i < n; i++)
        for (size_t j = i + 1; j < n; j++)
            ck_assert_msg(idx[i] != idx[j], "code_index %llu reused", (unsigned long long)idx[i]);
    /* perf maps [code, code + ALIGN8(code_size) + mapped_size): the slot
     * stride must cover it, or a later LOAD cuts into an earlier one */
    ck_assert_uint_ge(pt->slots.stride, ((pt->layout.size + 7) & ~(size_t)7) + mapped);
    struct pt_jd_summary sum;
    struct issues is = {0};
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, collect, &is), 0);
    ck_assert_uint_eq(is.n, 0);

    /* the validator sees the overlap when mapped_size is too big: each
     * trampoline's code lands in the mapped .eh_frame area of the one
     * before it, which still lives (a warning: the dump cannot show it
     * runs; perf then cannot unwind the earlier one with DWARF) */
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    while (pt_jd_next(&it, &r) == 1)
        if (r.id == PT_JD_UNWINDING_INFO) {
            uint64_t big = pt->slots.stride * 2;
            memcpy(d + r.offset + PT_JD_PREFIX_SIZE + 16, &big, 8);
        }
    is.n = 0;
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, collect, &is), 0);
    ck_assert_uint_gt(sum.warnings, 0);
    ck_assert_msg(strstr(is.last, ".eh_frame area") != NULL, "%s", is.last);
    free(d);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* Mutates a valid dump in ways perf cares about; each must be caught. */
START_TEST(validator_rejects_what_perf_chokes_on)
{
    perftramp *pt = open_jd(0);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "a"));
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "b"));
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *good = dump(path, &len);
    uint8_t *d = malloc(len);
    struct pt_jd_summary sum;
    struct issues is;
    struct pt_jd_iter it;
    struct pt_jd_record first_unwind = {0}, first_load = {0}, second_load = {0}, r;
    ck_assert_int_eq(pt_jd_iter_init(&it, good, len), 0);
    while (pt_jd_next(&it, &r) == 1) {
        if (r.id == PT_JD_UNWINDING_INFO && !first_unwind.total_size)
            first_unwind = r;
        if (r.id == PT_JD_LOAD) {
            if (!first_load.total_size)
                first_load = r;
            else
                second_load = r;
        }
    }
    ck_assert_uint_eq(pt_jitdump_validate(good, len, &sum, NULL, NULL), 0);

#define MUTATE(off, type, val, expect_err, what)                                                        \
    do {                                                                                                \
        memcpy(d, good, len);                                                                           \
        type v_ = (val);                                                                                \
        memcpy(d + (off), &v_, sizeof v_);                                                              \
        is.n = 0;                                                                                       \
        size_t e_ = pt_jitdump_validate(d, len, &sum, collect, &is);                                    \
        if (expect_err)                                                                                 \
            ck_assert_msg(e_ > 0, "not caught: %s", what);                                              \
        else                                                                                            \
            ck_assert_msg(e_ == 0 && sum.warnings > 0, "expected a warning only: %s (%s)", what, is.last); \
    } while (0)

    MUTATE(4, uint32_t, 2, 1, "version 2");
    /* perf reads the first record at 40 whatever total_size says, and
     * refuses sizes above 80 (a zero-length read fails) */
    MUTATE(8, uint32_t, 48, 0, "header size 48");
    MUTATE(8, uint32_t, 80, 0, "header size 80");
    MUTATE(8, uint32_t, 81, 1, "header size 81");
    MUTATE(32, uint64_t, 2, 1, "unknown flag");
    MUTATE(0, uint32_t, 0x12345678, 1, "bad magic");
    /* second LOAD: same code_index as the first */
    MUTATE(second_load.offset + 48, uint64_t, first_load.code_index, 1, "code_index reused");
    /* second LOAD: code_size beyond the record */
    MUTATE(second_load.offset + 40, uint64_t, second_load.total_size, 1, "code_size too big");
    /* second LOAD: the tag word equal to the first's (same bytes, another
     * name): only perf 6.17 and 6.18 derive equal build-ids from the code
     * alone and merge the names; 6.19 adds the names, older perf hashes the
     * address too (libcrypto) or draws random build-ids */
    {
        memcpy(d, good, len);
        memcpy(d + second_load.offset + second_load.total_size - second_load.code_size, first_load.code,
               first_load.code_size);
        struct pt_jd_options o617 = {.perf = {6, 17, 0}}, o61c = {.perf = {6, 1, 1}}, o61 = {.perf = {6, 1, 0}};
        ck_assert_uint_gt(pt_jitdump_validate_ex(d, len, &o617, &sum, NULL, NULL), 0);
        ck_assert_uint_eq(pt_jitdump_validate_ex(d, len, &o61c, &sum, NULL, NULL), 0);
        ck_assert_uint_eq(pt_jitdump_validate_ex(d, len, &o61, &sum, NULL, NULL), 0);
        is.n = 0;
        ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, collect, &is), 0); /* newest rules */
        ck_assert_uint_eq(sum.warnings, 0);
    }
    /* first UNWINDING_INFO: mapped_size 0, hdr size 0, hdr bigger than data */
    MUTATE(first_unwind.offset + 32, uint64_t, 0, 1, "mapped_size 0");
    MUTATE(first_unwind.offset + 24, uint64_t, 0, 1, "eh_frame_hdr_size 0");
    MUTATE(first_unwind.offset + 24, uint64_t, first_unwind.unwinding_size + 1, 1, "hdr > unwinding");
    /* empty unwinding info: a warning, not an error */
    {
        uint64_t zero = 0;
        memcpy(d, good, len);
        memcpy(d + first_unwind.offset + 16, &zero, 8);
        memcpy(d + first_unwind.offset + 24, &zero, 8);
        is.n = 0;
        ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, collect, &is), 0);
        ck_assert_uint_gt(sum.warnings, 0);
        ck_assert_msg(strstr(is.last, "without .eh_frame") != NULL, "%s", is.last);
    }
    /* .eh_frame_hdr first (the spec's order, not perf's): swap halves */
    {
        memcpy(d, good, len);
        size_t hdr = (size_t)first_unwind.eh_frame_hdr_size, all = (size_t)first_unwind.unwinding_size;
        uint8_t *u = d + first_unwind.offset + PT_JD_UNWIND_FIXED;
        memcpy(u, first_unwind.unwinding + (all - hdr), hdr);
        memcpy(u + hdr, first_unwind.unwinding, all - hdr);
        is.n = 0;
        ck_assert_uint_gt(pt_jitdump_validate(d, len, &sum, collect, &is), 0);
    }
    /* FDE range cut short: corrupt pc_range to 1 (CIE is first; find FDE by
     * its pc_range == code_size in the data) */
    {
        memcpy(d, good, len);
        uint8_t *u = d + first_unwind.offset + PT_JD_UNWIND_FIXED;
        uint32_t cs = (uint32_t)first_load.code_size, one = 1;
        int patched = 0;
        for (size_t i = 0; i + 4 <= first_unwind.unwinding_size; i++)
            if (!memcmp(u + i, &cs, 4)) {
                memcpy(u + i, &one, 4);
                patched = 1;
                break;
            }
        ck_assert(patched);
        ck_assert_uint_gt(pt_jitdump_validate(d, len, &sum, collect, &is), 0);
    }
    /* timestamps going back: perf sorts by time, a warning */
    MUTATE(second_load.offset + 8, uint64_t, 1, 0, "timestamp back");
    /* a torn tail: the CLOSE short by 3 bytes costs nothing, a torn LOAD
     * loses its code's names */
    memcpy(d, good, len);
    ck_assert_uint_eq(pt_jitdump_validate(d, len - 3, &sum, collect, &is), 0);
    ck_assert_uint_gt(sum.warnings, 0);
    ck_assert_uint_gt(sum.trailing_bytes, 0);
    ck_assert_uint_gt(pt_jitdump_validate(d, second_load.offset + second_load.total_size - 1, &sum, collect, &is), 0);
    ck_assert_msg(strstr(is.last, "torn LOAD") != NULL, "%s", is.last);
    free(d);
    free(good);
}
END_TEST

/* ---- rows, pc by pc (src/read/jitdump_rows.c) ------------------------- */

/* Where a record's CIE and first FDE sit in the dump, and what they hold. */
struct eh_at {
    size_t eh;            /* file offset of .eh_frame */
    size_t eh_len;
    struct pt_cie cie;
    struct pt_fde fde;
    size_t cie_insns;     /* file offsets of the CIE's and the FDE's programs */
    size_t fde_insns;
    int n_fdes;
};

static int first_fde_cb(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct eh_at *e = arg;
    if (e->n_fdes++ == 0) {
        e->cie = *cie;
        e->fde = *fde;
    }
    return 0;
}

static struct eh_at eh_of(const uint8_t *d, const struct pt_jd_record *u)
{
    struct eh_at e = {.eh = (size_t)(u->unwinding - d),
                      .eh_len = (size_t)(u->unwinding_size - u->eh_frame_hdr_size)};
    struct pt_eh_ctx ctx = {.data = u->unwinding, .len = e.eh_len, .address = 0x1000, .addr_size = 8};
    ck_assert_int_eq(pt_eh_walk(&ctx, first_fde_cb, &e, NULL, NULL), 0);
    ck_assert_int_ge(e.n_fdes, 1);
    e.cie_insns = (size_t)(e.cie.insns - d);
    e.fde_insns = (size_t)(e.fde.insns - d);
    return e;
}

/* The records of a dump of one or more trampolines. */
static void first_group(const uint8_t *d, size_t len, struct pt_jd_record *unwind, struct pt_jd_record *load)
{
    struct pt_jd_iter it;
    struct pt_jd_record r;
    memset(unwind, 0, sizeof *unwind);
    memset(load, 0, sizeof *load);
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    while (pt_jd_next(&it, &r) == 1) {
        if (r.id == PT_JD_UNWINDING_INFO && !unwind->total_size)
            *unwind = r;
        if (r.id == PT_JD_LOAD && !load->total_size)
            *load = r;
    }
    ck_assert_uint_gt(unwind->total_size, 0);
    ck_assert_uint_gt(load->total_size, 0);
}

struct find {
    const char *want;
    bool found;
    size_t n;
    char last[768];
};

static void find_issue(void *arg, enum pt_jd_severity sev, size_t off, const char *msg)
{
    struct find *f = arg;
    f->n++;
    if (f->want && strstr(msg, f->want))
        f->found = true;
    snprintf(f->last, sizeof f->last, "%s at %zu: %s", sev == PT_JD_ERROR ? "error" : "warning", off, msg);
    fprintf(stderr, "  validator: %s\n", f->last);
}

/* Validates d; some issue's text must contain `want` (NULL: no error and
 * no warning at all); returns the errors. */
static size_t expect(const uint8_t *d, size_t len, const char *want, const char *what)
{
    struct find f = {.want = want};
    struct pt_jd_summary sum;
    size_t e = pt_jitdump_validate(d, len, &sum, find_issue, &f);
    if (!want)
        ck_assert_msg(e == 0 && sum.warnings == 0, "%s: %zu errors, %zu warnings (%s)", what, e, sum.warnings, f.last);
    else
        ck_assert_msg(f.found, "%s: no issue says '%s' (last: %s)", what, want, f.last);
    return e;
}

/* perftramp's own dump: every pc has its rules, every boundary matches the
 * host table; a CFA offset changed after the fact names pc, found, wanted. */
START_TEST(validator_checks_rows_of_own_dump)
{
    perftramp *pt = open_jd(0);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "rows::a"));
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)times_three, "rows::b"));
    size_t n_insns = pt->layout.arch->n_insns, size = pt->layout.size;
    const char *table = pt->layout.arch->name;
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *good = dump(path, &len);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(pt_jitdump_validate(good, len, &sum, NULL, NULL), 0);
    ck_assert_uint_eq(sum.warnings, 0);
    ck_assert_uint_eq(sum.rows_loads, 2);
    ck_assert_uint_eq(sum.rows_pcs, 2 * size);
    ck_assert_uint_eq(sum.rows_table_loads, 2);
    ck_assert_uint_eq(sum.rows_boundaries, 2 * n_insns);
    ck_assert_str_eq(sum.rows_table, table);

    struct pt_jd_record u, l;
    first_group(good, len, &u, &l);
    struct eh_at e = eh_of(good, &u);
    uint8_t *d = malloc(len);

    /* the first DW_CFA_def_cfa_offset N (one-byte operand) becomes N + 8 */
    memcpy(d, good, len);
    size_t at = 0;
    for (size_t k = e.fde_insns; k + 1 < e.fde_insns + e.fde.insns_len; k++)
        if (d[k] == 0x0e && d[k + 1] < 0x78) {
            at = k + 1;
            break;
        }
    if (at) {
        d[at] += 8;
        ck_assert_uint_gt(expect(d, len, "rules differ from the table's", "CFA offset + 8"), 0);
#if defined(__x86_64__)
        expect(d, len, "at pc 0x", "CFA offset 24: the pc");
        expect(d, len, "(+0x5, mov %rsp,%rbp): found CFA=rsp+24 rbp=c-16 rip=c-8, the table's: CFA=rsp+16",
               "CFA offset 24: found and expected");
#endif
    } else {
        printf("rows: the %s table's FDE program has no DW_CFA_def_cfa_offset: that case not run\n", table);
    }

    /* the FDE stops 8 bytes short: the tag word has no rules */
    memcpy(d, good, len);
    uint32_t range = (uint32_t)size - 8; /* pcrel|sdata4: pc_range is 4 bytes after pc_begin */
    ck_assert_uint_eq(e.cie.fde_encoding & 0x0f, 0x0b);
    memcpy(d + e.eh + e.fde.offset + 12, &range, 4);
    memset(d + l.offset + l.total_size - 8, 0x11, 8); /* the tag: not a nop anywhere */
    ck_assert_uint_gt(expect(d, len, "are covered by no FDE", "FDE 8 bytes short"), 0);
#if defined(__x86_64__)
    /* ... but trailing nops no FDE covers are only a warning (V8 does that) */
    memset(d + l.offset + l.total_size - 8, 0x90, 8);
    ck_assert_uint_eq(expect(d, len, "(padding: nops) are covered by no FDE", "8 trailing nops"), 0);
    memset(d + l.offset + l.total_size - 8, 0x90, 7);
    d[l.offset + l.total_size - 1] = 0xc3; /* a ret among them: real code */
    ck_assert_uint_gt(expect(d, len, "are covered by no FDE: no unwinding there", "nops then ret"), 0);

    /* CIE: def_cfa rsp+8 (0c 07 08) and offset rip c-8 (90 01) */
    const uint8_t cfa[3] = {0x0c, 0x07, 0x08}, ra[2] = {0x90, 0x01};
    ck_assert_uint_ge(e.cie.insns_len, 5);
    ck_assert_int_eq(memcmp(good + e.cie_insns, cfa, 3), 0);
    ck_assert_int_eq(memcmp(good + e.cie_insns + 3, ra, 2), 0);
    memcpy(d, good, len);
    memset(d + e.cie_insns, 0, 3); /* DW_CFA_nop x3: no CFA until the FDE says def_cfa_offset */
    ck_assert_uint_gt(expect(d, len, "define no CFA, first at +0x0", "CIE without def_cfa"), 0);
    memcpy(d, good, len);
    memset(d + e.cie_insns + 3, 0, 2); /* no rule for rip: the return address is nowhere */
    ck_assert_uint_gt(expect(d, len, "no usable return-address rule, first at +0x0 (rule: u)", "no RA rule"), 0);
    memcpy(d, good, len);
    d[e.cie_insns + 3] = 0x07; /* DW_CFA_undefined rip */
    d[e.cie_insns + 4] = 0x10;
    ck_assert_uint_gt(expect(d, len, "(rule: undefined)", "RA undefined"), 0);
    /* the return-address column: 16 (rip) in the CIE, after "zR", code and data alignment */
    memcpy(d, good, len);
    size_t col = e.eh + e.cie.offset + 9 + strlen(e.cie.augmentation) + 1 + 2;
    ck_assert_uint_eq(d[col], 16);
    d[col] = 15;
    ck_assert_uint_gt(expect(d, len, "CIE return-address column 15, the x86_64 ABI's is 16 (rip)", "RA column 15"), 0);
#endif
    free(d);
    free(good);
}
END_TEST

/* Dumps of other producers and other architectures, from the fuzz corpus:
 * node 20 (V8) ends an FDE before a 2-byte nop (a warning); perftramp's
 * s390x dump (big-endian) matches the s390x table boundary by boundary. */
START_TEST(validator_checks_rows_of_corpus_dumps)
{
    const char *src = getenv("PT_SRCDIR");
    char p[1024];
    snprintf(p, sizeof p, "%s/tests/fuzz/corpus_jitdump/node20-snippet.dump", src ? src : ".");
    size_t len;
    uint8_t *d = dump(p, &len);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(expect(d, len, "its last 2 of 384 code bytes (padding: nops) are covered by no FDE", "node"), 0);
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, NULL, NULL), 0);
    ck_assert_uint_eq(sum.rows_loads, 1);
    ck_assert_uint_eq(sum.rows_pcs, 382);
    ck_assert_uint_eq(sum.rows_table_loads, 0);
    /* the same FDE 16 bytes shorter: real code without rules */
    struct pt_jd_iter it;
    struct pt_jd_record r, u = {0};
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    while (pt_jd_next(&it, &r) == 1)
        if (r.id == PT_JD_UNWINDING_INFO && r.unwinding_size > r.eh_frame_hdr_size)
            u = r;
    struct eh_at e = eh_of(d, &u);
    uint32_t range;
    memcpy(&range, d + e.eh + e.fde.offset + 12, 4);
    ck_assert_uint_eq(range, 382);
    range -= 16;
    memcpy(d + e.eh + e.fde.offset + 12, &range, 4);
    ck_assert_uint_gt(expect(d, len, "code bytes +0x16e..+0x180 (18 of 384) are covered by no FDE", "node short"), 0);
    free(d);

    snprintf(p, sizeof p, "%s/tests/fuzz/corpus_jitdump/perftramp-s390x-be.dump", src ? src : ".");
    d = dump(p, &len);
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, NULL, NULL), 0);
    const struct pt_arch *s390x = pt_arch_find("s390x");
    ck_assert_ptr_nonnull(s390x);
    ck_assert_uint_eq(sum.rows_table_loads, 1);
    ck_assert_uint_eq(sum.rows_boundaries, s390x->n_insns);
    ck_assert_str_eq(sum.rows_table, "s390x");
    free(d);
}
END_TEST

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

START_TEST(validator_survives_garbage)
{
    perftramp *pt = open_jd(0);
    for (int i = 0; i < 4; i++)
        ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "g"));
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *good = dump(path, &len);
    uint8_t *d = malloc(len);
    size_t caught = 0;
    for (int round = 0; round < 20000; round++) {
        memcpy(d, good, len);
        int flips = 1 + (int)(next_rand() % 8);
        for (int f = 0; f < flips; f++)
            d[next_rand() % len] ^= (uint8_t)(1u << (next_rand() % 8));
        size_t cut = round % 3 == 0 ? (size_t)(next_rand() % (len + 1)) : len;
        struct pt_jd_summary sum;
        caught += pt_jitdump_validate(d, cut, &sum, NULL, NULL) > 0 || sum.warnings > 0;
        /* the iterator alone as well */
        struct pt_jd_iter it;
        struct pt_jd_record r;
        if (pt_jd_iter_init(&it, d, cut) == 0)
            while (pt_jd_next(&it, &r) == 1)
                ;
    }
    /* pure noise */
    for (int round = 0; round < 2000; round++) {
        size_t n = next_rand() % 600;
        for (size_t i = 0; i < n && i < len; i++)
            d[i] = (uint8_t)next_rand();
        if (n >= 4) {
            uint32_t m = PT_JD_MAGIC;
            memcpy(d, &m, 4);
        }
        pt_jitdump_validate(d, n < len ? n : len, NULL, NULL, NULL);
    }
    ck_assert_uint_gt(caught, 1000); /* most mutations are noticed */
    free(d);
    free(good);
}
END_TEST

/* Zeros after the last record are reserved room; bytes in that room after
 * a total_size of 0 are the record a killed writer was copying in (it
 * stores the size last): uncommitted, a warning; past PT_JD_RESERVED_MAX
 * either is the total_size 0 error.  A stream (a pipe: size unknown) must
 * reach the verdict of the whole file wherever its reads split the bytes,
 * also right after the first zero prefix (the fuzzer found a stream that
 * stopped there and called the zeros reserved). */
static size_t streamed(const uint8_t *d, size_t len, size_t split, struct pt_jd_summary *ss)
{
    struct pt_jd_validator *v = pt_jd_validator_new(NULL, UINT64_MAX, NULL, NULL);
    ck_assert_ptr_nonnull(v);
    if (pt_jd_validator_feed(v, d, split) == 0)
        pt_jd_validator_feed(v, d + split, len - split);
    size_t e = pt_jd_validator_finish(v, ss);
    pt_jd_validator_free(v);
    return e;
}

START_TEST(validator_streams_zeros_like_whole)
{
    perftramp *pt = open_jd(0);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "z"));
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *good = dump(path, &len);
    const size_t far = PT_JD_RESERVED_MAX;
    uint8_t *d = calloc(1, len + far + 1);
    memcpy(d, good, len);
    static const struct {
        size_t zeros;
        int junk;
        size_t errors, warnings;
    } cases[] = {{67, 0, 0, 0}, {67, 1, 0, 1}, {PT_JD_RESERVED_MAX, 1, 1, 0}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        size_t zeros = cases[c].zeros, n = len + zeros + (size_t)cases[c].junk;
        memset(d + len, 0, far + 1);
        d[len + zeros] = cases[c].junk ? 'x' : 0;
        struct pt_jd_summary whole, ss;
        size_t ew = pt_jitdump_validate(d, n, &whole, NULL, NULL);
        ck_assert_uint_eq(ew, cases[c].errors);
        ck_assert_uint_eq(whole.warnings, cases[c].warnings);
        ck_assert_uint_eq(whole.reserved_bytes, ew || cases[c].junk ? 0 : zeros);
        ck_assert_uint_eq(whole.uncommitted_bytes, ew || !cases[c].junk ? 0 : zeros + 1);
        size_t step = zeros > 1000 ? 4093 : 1;
        for (size_t split = len; split <= n; split += step) {
            size_t es = streamed(d, n, split, &ss);
            ck_assert_msg(es == ew && ss.warnings == whole.warnings && ss.reserved_bytes == whole.reserved_bytes &&
                              ss.uncommitted_bytes == whole.uncommitted_bytes,
                          "case %zu, split at %zu: %zu errors, %zu warnings, %llu reserved, %llu uncommitted; "
                          "whole: %zu, %zu, %llu, %llu",
                          c, split, es, ss.warnings, (unsigned long long)ss.reserved_bytes,
                          (unsigned long long)ss.uncommitted_bytes, ew, whole.warnings,
                          (unsigned long long)whole.reserved_bytes, (unsigned long long)whole.uncommitted_bytes);
        }
    }
    free(d);
    free(good);
}
END_TEST

/* RLIMIT_FSIZE (SIGXFSZ ignored) makes a write fail with EFBIG partway
 * through a group: the output is disabled, EFBIG recorded, no torn record
 * stays, and trampolines keep working.  The limit is set past the room the
 * writer mapped ahead (outputs/file_window.h): the groups fill it, the next
 * room would cross the limit, so the writer goes on with pwrite() and meets
 * the limit inside a group.  Runs in a child so the limit cannot touch
 * Check's own files. */
START_TEST(efbig_disables_output_without_torn_record)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int bad = 0;
        signal(SIGXFSZ, SIG_IGN);
        char own[1100];
        snprintf(own, sizeof own, "%s/jit-%ld.dump", dir, (long)getpid());
        struct perftramp_options o = {.outputs = PERFTRAMP_JITDUMP, .jitdump_dir = dir};
        perftramp *pt = perftramp_open(&o);
        if (!pt || !perftramp_wrap(pt, (perftramp_fn)plus_one, "fits"))
            _exit(100);
        struct stat st;
        struct pt_jd_summary sum;
        size_t issues;
        if (stat(own, &st) < 0 || validate(own, &sum, &issues) != 0)
            _exit(101);
        size_t group = (size_t)sum.valid_bytes - PT_JD_HEADER_SIZE;
        struct rlimit rl = {.rlim_cur = (rlim_t)st.st_size + group + group / 2, .rlim_max = RLIM_INFINITY};
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
            _exit(102);
        fn1 t[4096];
        size_t n = 0, failed_at = 0;
        while (n < sizeof t / sizeof t[0] && !failed_at) {
            t[n] = (fn1)perftramp_wrap(pt, (perftramp_fn)(n % 2 ? times_three : plus_one), "fits");
            if (!t[n])
                bad |= 1;
            if (perftramp_output_error(pt, PERFTRAMP_JITDUMP) != 0)
                failed_at = n + 1; /* wraps before this one were written */
            n++;
        }
        if (!failed_at || perftramp_output_error(pt, PERFTRAMP_JITDUMP) != EFBIG)
            bad |= 2;
        fn1 after = (fn1)perftramp_wrap(pt, (perftramp_fn)times_three, "after");
        if (!after || after(3) != 9)
            bad |= 4;
        for (size_t i = 0; i < n; i++)
            if (t[i] && t[i](2) != (i % 2 ? 6 : 3))
                bad |= 4;
        /* close with the output disabled: no CLOSE record, no error */
        if (perftramp_close(pt) != 0)
            bad |= 8;
        /* the file holds the first wrap and the failed_at - 1 after it, whole */
        if (stat(own, &st) < 0 || (size_t)st.st_size != PT_JD_HEADER_SIZE + failed_at * group)
            bad |= 16;
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
    char cpath[1100];
    snprintf(cpath, sizeof cpath, "%s/jit-%ld.dump", dir, (long)child);
    struct pt_jd_summary sum;
    size_t issues;
    ck_assert_uint_eq(validate(cpath, &sum, &issues), 0);
    ck_assert_uint_eq(issues, 0);
    ck_assert_uint_eq(sum.trailing_bytes, 0);
    ck_assert_uint_eq(sum.reserved_bytes, 0);
    ck_assert_uint_gt(sum.by_id[PT_JD_LOAD], 2);
    ck_assert_uint_eq(sum.by_id[PT_JD_UNWINDING_INFO], sum.by_id[PT_JD_LOAD]);
    ck_assert(!sum.closed);
    printf("EFBIG: %zu whole groups, then the output off, no torn record\n", sum.by_id[PT_JD_LOAD]);
}
END_TEST

/* RLIMIT_FSIZE just past the room mapped ahead, SIGXFSZ left at its
 * default (it kills): groups that stay under the limit must not raise it.
 * The next room would cross the limit, so the writer takes pwrite() there
 * instead of allocating 64 KiB it may never fill. */
START_TEST(rlimit_near_room_raises_nothing_early)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_DFL);
        char own[1100];
        snprintf(own, sizeof own, "%s/jit-%ld.dump", dir, (long)getpid());
        struct perftramp_options o = {.outputs = PERFTRAMP_JITDUMP, .jitdump_dir = dir};
        perftramp *pt = perftramp_open(&o);
        if (!pt || !perftramp_wrap(pt, (perftramp_fn)plus_one, "fits"))
            _exit(100);
        struct stat st;
        struct pt_jd_summary sum;
        size_t issues;
        if (stat(own, &st) < 0 || validate(own, &sum, &issues) != 0)
            _exit(101);
        size_t group = (size_t)sum.valid_bytes - PT_JD_HEADER_SIZE;
        /* room for the groups that fill the mapped room, and four more */
        struct rlimit rl = {.rlim_cur = (rlim_t)st.st_size + 5 * group, .rlim_max = RLIM_INFINITY};
        if (setrlimit(RLIMIT_FSIZE, &rl) < 0)
            _exit(102);
        size_t n = ((size_t)st.st_size - (size_t)sum.valid_bytes) / group + 4;
        for (size_t i = 0; i < n; i++)
            if (!perftramp_wrap(pt, (perftramp_fn)plus_one, "fits") ||
                perftramp_output_error(pt, PERFTRAMP_JITDUMP) != 0)
                _exit(103);
        if (perftramp_close(pt) != 0)
            _exit(104);
        if (validate(own, &sum, &issues) != 0 || issues != 0 || sum.by_id[PT_JD_LOAD] != n + 1 || !sum.closed)
            _exit(105);
        _exit(0);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x%s", status,
                  WIFSIGNALED(status) && WTERMSIG(status) == SIGXFSZ ? " (SIGXFSZ before the limit)" : "");
}
END_TEST

START_TEST(planted_files_are_refused)
{
    char victim[1100];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    FILE *f = fopen(victim, "w");
    ck_assert_ptr_nonnull(f);
    fputs("precious", f);
    fclose(f);

    /* a symlink to someone's file */
    ck_assert_int_eq(symlink(victim, path), 0);
    perftramp *pt = open_jd(0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), ELOOP);
    fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "x");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *v = dump(victim, &len);
    ck_assert_uint_eq(len, 8);
    ck_assert_int_eq(memcmp(v, "precious", 8), 0);
    free(v);
    unlink(path);

    /* a FIFO: must not block, must be refused */
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    pt = open_jd(0);
    int e = perftramp_output_error(pt, PERFTRAMP_JITDUMP);
    ck_assert_msg(e == ENXIO || e == EPERM, "FIFO: %s", strerror(e));
    ck_assert_int_eq(perftramp_close(pt), 0);
    unlink(path);

    /* a directory */
    ck_assert_int_eq(mkdir(path, 0700), 0);
    pt = open_jd(0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), EISDIR);
    ck_assert_int_eq(perftramp_close(pt), 0);
    rmdir(path);

    /* someone else's regular file (needs root to plant) */
    if (geteuid() == 0) {
        f = fopen(path, "w");
        fputs("theirs", f);
        fclose(f);
        ck_assert_int_eq(chown(path, 65534, 65534), 0);
        pt = open_jd(0);
        ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), EPERM);
        ck_assert_int_eq(perftramp_close(pt), 0);
        v = dump(path, &len);
        ck_assert_uint_eq(len, 6); /* not truncated, not written */
        free(v);
        unlink(path);
    } else {
        printf("planted_files_are_refused: not root, foreign-owner case not planted\n");
    }
}
END_TEST

/* Many threads wrapping at once: every group stays whole and in order. */
struct thr_arg {
    perftramp *pt;
    int id;
};
static void *wrap_many(void *p)
{
    struct thr_arg *a = p;
    for (int i = 0; i < 200; i++) {
        char name[48];
        snprintf(name, sizeof name, "thread%d::f%d", a->id, i);
        fn1 t = (fn1)perftramp_wrap(a->pt, (perftramp_fn)plus_one, name);
        if (!t || t(i) != i + 1)
            return (void *)1;
        if (i % 3 == 0 && perftramp_release(a->pt, (perftramp_fn)t) != 0)
            return (void *)1;
    }
    return NULL;
}

START_TEST(concurrent_wraps_keep_groups_whole)
{
    perftramp *pt = open_jd(0);
    pthread_t th[4];
    struct thr_arg args[4];
    for (int i = 0; i < 4; i++) {
        args[i] = (struct thr_arg){pt, i};
        ck_assert_int_eq(pthread_create(&th[i], NULL, wrap_many, &args[i]), 0);
    }
    for (int i = 0; i < 4; i++) {
        void *r;
        pthread_join(th[i], &r);
        ck_assert_ptr_null(r);
    }
    ck_assert_int_eq(perftramp_close(pt), 0);
    struct pt_jd_summary sum;
    size_t issues;
    ck_assert_uint_eq(validate(path, &sum, &issues), 0);
    ck_assert_uint_eq(issues, 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 800);
    ck_assert_uint_eq(sum.loads_with_unwind, 800);
}
END_TEST

/* The dump directory vanished before a fork: the child cannot create its
 * dump, the output is disabled with ENOENT, trampolines keep working, and
 * the parent goes on writing its (unlinked, still open) file. */
START_TEST(vanished_dir_in_child_disables_output)
{
    perftramp *pt = open_jd(0);
    fn1 a = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "a");
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(unlink(path), 0);
    ck_assert_int_eq(rmdir(dir), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int bad = 0;
        if (perftramp_after_fork_child(pt) != 0)
            bad |= 1; /* after-fork itself succeeds; the output is what fails */
        if (perftramp_output_error(pt, PERFTRAMP_JITDUMP) != ENOENT)
            bad |= 2;
        if (a(1) != 2)
            bad |= 4;
        fn1 b = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "b");
        if (!b || b(2) != 3)
            bad |= 8;
        if (perftramp_close(pt) != 0)
            bad |= 16;
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "c"));
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_int_eq(mkdir(dir, 0700), 0); /* for teardown */
}
END_TEST

/* PERFTRAMP_ATFORK while another thread keeps wrapping: the prepare
 * handler holds the context lock across fork(), so each child starts from
 * a consistent context and writes a valid dump of its own. */
static atomic_int stop_wrapping;
static void *wrap_until_stopped(void *p)
{
    perftramp *pt = p;
    /* bounded: at most 20000 groups in the dump, at most 200 live */
    for (int i = 0; !atomic_load(&stop_wrapping) && i < 20000; i++) {
        fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "busy::f");
        if (!t || t(i) != i + 1)
            return (void *)1;
        if (i % 100 && perftramp_release(pt, (perftramp_fn)t) != 0)
            return (void *)1;
    }
    return NULL;
}

START_TEST(atfork_while_another_thread_wraps)
{
    perftramp *pt = open_jd(PERFTRAMP_ATFORK);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "first"));
    pthread_t th;
    ck_assert_int_eq(pthread_create(&th, NULL, wrap_until_stopped, pt), 0);
    for (int k = 0; k < 10; k++) {
        pid_t child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
            /* PERFTRAMP_ATFORK writes the child's dump at its first wrap */
            fn1 own_t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "child::own");
            char own[1100];
            snprintf(own, sizeof own, "%s/jit-%ld.dump", dir, (long)getpid());
            size_t len;
            uint8_t *d = ptt_read_file(own, &len);
            struct pt_jd_summary sum;
            int bad = !own_t || !d || pt_jitdump_validate(d, len, &sum, NULL, NULL) != 0 || sum.warnings ||
                      sum.by_id[PT_JD_LOAD] < 1 || sum.header.pid != (uint32_t)getpid();
            free(d);
            if (perftramp_close(pt) != 0)
                bad |= 2;
            _exit(bad);
        }
        int status;
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d status 0x%x", k, status);
    }
    atomic_store(&stop_wrapping, 1);
    void *r;
    pthread_join(th, &r);
    ck_assert_ptr_null(r);
    ck_assert_int_eq(perftramp_close(pt), 0);
    struct pt_jd_summary sum;
    size_t issues;
    ck_assert_uint_eq(validate(path, &sum, &issues), 0);
    ck_assert_uint_eq(issues, 0);
}
END_TEST

/* The child gets its own dump with every live trampoline; the parent's
 * file is untouched; pre-fork trampolines work in the child. */
static void fork_case(unsigned flags)
{
    perftramp *pt = open_jd(flags);
    fn1 a = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "live::a");
    fn1 gone = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "released::b");
    fn1 c = (fn1)perftramp_wrap(pt, (perftramp_fn)times_three, "live::c");
    ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)gone), 0);
    size_t before_len;
    uint8_t *before = dump(path, &before_len);

    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        close(pfd[0]);
        int bad = 0;
        if (!(flags & PERFTRAMP_ATFORK) && perftramp_after_fork_child(pt) != 0)
            bad |= 1;
        if (a(1) != 2 || c(2) != 6)
            bad |= 2;
        fn1 d = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "child::d");
        if (!d || d(5) != 6)
            bad |= 4;
        char parent_marker[64];
        snprintf(parent_marker, sizeof parent_marker, "/jit-%ld.dump", (long)getppid());
        if (ptt_mapped(parent_marker, NULL))
            bad |= 8; /* the parent's marker must not stay mapped in the child */
        char own[64];
        snprintf(own, sizeof own, "/jit-%ld.dump", (long)getpid());
        if (!ptt_mapped(own, NULL))
            bad |= 16;
        if (perftramp_output_error(pt, PERFTRAMP_JITDUMP))
            bad |= 32;
        if (perftramp_close(pt) != 0)
            bad |= 64;
        free(before); /* the parent's copy: the child frees it too (valgrind checks children) */
        _exit(bad);
    }
    close(pfd[1]);
    close(pfd[0]);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);

    /* parent's dump: byte for byte what it was */
    size_t after_len;
    uint8_t *after = dump(path, &after_len);
    ck_assert_uint_eq(after_len, before_len);
    ck_assert_int_eq(memcmp(after, before, before_len), 0);
    free(after);
    free(before);

    /* child's dump: the live ones, then its own */
    char cpath[1100];
    snprintf(cpath, sizeof cpath, "%s/jit-%ld.dump", dir, (long)child);
    size_t len;
    uint8_t *d = dump(cpath, &len);
    struct pt_jd_summary sum;
    struct issues is = {0};
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, collect, &is), 0);
    ck_assert_uint_eq(is.n, 0);
    ck_assert_uint_eq(sum.header.pid, (uint32_t)child);
    ck_assert(sum.closed);
    struct pt_jd_iter it;
    struct pt_jd_record r;
    const char *want[] = {"live::a", "live::c", "child::d"};
    uintptr_t want_addr[] = {(uintptr_t)a, (uintptr_t)c, 0};
    int n = 0;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    while (pt_jd_next(&it, &r) == 1) {
        if (r.id != PT_JD_LOAD)
            continue;
        ck_assert_int_lt(n, 3);
        ck_assert_str_eq(r.name, want[n]);
        ck_assert_uint_eq(r.pid, (uint32_t)child);
        if (want_addr[n])
            ck_assert_uint_eq(r.code_addr, want_addr[n]);
        n++;
    }
    ck_assert_int_eq(n, 3);
    free(d);
    ck_assert_int_eq(a(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
}

START_TEST(fork_child_gets_own_dump)
{
    fork_case(0);
}
END_TEST

START_TEST(fork_with_atfork_flag)
{
    fork_case(PERFTRAMP_ATFORK);
}
END_TEST

static Suite *jitdump_suite(void)
{
    Suite *s = suite_create("jitdump");
    TCase *t = tcase_create("output");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 120);
    tcase_add_test(t, dump_is_valid_and_complete_after_each_wrap);
    tcase_add_test(t, load_names_escape_control_bytes);
    tcase_add_test(t, code_index_never_reused_and_ranges_disjoint);
    tcase_add_test(t, efbig_disables_output_without_torn_record);
    tcase_add_test(t, rlimit_near_room_raises_nothing_early);
    tcase_add_test(t, planted_files_are_refused);
    tcase_add_test(t, concurrent_wraps_keep_groups_whole);
    tcase_add_test(t, vanished_dir_in_child_disables_output);
    tcase_add_test(t, fork_child_gets_own_dump);
    tcase_add_test(t, fork_with_atfork_flag);
    tcase_add_test(t, atfork_while_another_thread_wraps);
    suite_add_tcase(s, t);
    t = tcase_create("validator");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_set_timeout(t, 300);
    tcase_add_test(t, validator_rejects_what_perf_chokes_on);
    tcase_add_test(t, validator_checks_rows_of_own_dump);
    tcase_add_test(t, validator_checks_rows_of_corpus_dumps);
    tcase_add_test(t, validator_survives_garbage);
    tcase_add_test(t, validator_streams_zeros_like_whole);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    int failed = pt_check_run(jitdump_suite());
    return failed ? 1 : 0;
}
