/* SPDX-License-Identifier: MIT */
/* The direct-call variant (src/arch/x86_64_near.c, PERFTRAMP_NEAR_CALLS):
 *   - it stands in for its main table: same size, same CFI program;
 *   - its relocation: rel32 = target - end of the call, both limits of
 *     +-2 GiB written, one byte past either refused (ERANGE, nothing
 *     written);
 *   - a context with the flag writes the variant for a target in reach and
 *     the main table (through memory) for one out of reach, and both call
 *     their target; without the flag, the main table always;
 *   - the jitdump of such a context validates, its LOADs carry the bytes
 *     that run (the direct call), and the perf map names them.
 * The single step of every CFI row of a near trampoline is in
 * tests/arch/check_boundaries.c. */
#include "config.h"

#include "api/context.h"
#include "emit/eh_frame.h"
#include "mem/codemem.h"
#include "read/jitdump_reader.h"
#include "../lib/perf_test_util.h"
#include "perftramp.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__x86_64__)

typedef long (*fn1)(long);

static long far_plus_one(long x) /* in the executable: far from the mmap'd arenas on a PIE */
{
    return x + 1;
}

/* lea 0x1(%rdi),%rax; ret (Intel SDM vol. 2: LEA REX.W 8D /r, disp8; RET C3) */
static const uint8_t plus_one_code[] = {0x48, 0x8d, 0x47, 0x01, 0xc3};

static const struct pt_arch *near_arch(void)
{
    const struct pt_arch *v = pt_arch_variant_of(pt_arch_find("x86_64"), "near");
    ck_assert_ptr_nonnull(v);
    return v;
}

START_TEST(variant_stands_in_for_its_main_table)
{
    struct pt_layout m, n;
    ck_assert_int_eq(pt_layout_build(&m, pt_arch_find("x86_64"), NULL), 0);
    ck_assert_int_eq(pt_layout_build(&n, near_arch(), NULL), 0);
    ck_assert_uint_eq(n.size, m.size);
    ck_assert_uint_eq(n.code_len, m.code_len);
    ck_assert_uint_eq(n.n_relocs, 1);
    ck_assert_uint_eq(m.n_relocs, 0);
    struct pt_buf pm, pn;
    pt_buf_init(&pm, false);
    pt_buf_init(&pn, false);
    ck_assert_int_eq(pt_cfi_program(&pm, &m), 0);
    ck_assert_int_eq(pt_cfi_program(&pn, &n), 0);
    ck_assert_uint_eq(pm.len, pn.len);
    ck_assert_int_eq(memcmp(pm.data, pn.data, pm.len), 0);
    pt_buf_free(&pm);
    pt_buf_free(&pn);
}
END_TEST

/* The call instruction of the near table and the end of it. */
static void call_site(const struct pt_layout *l, size_t *at, size_t *end)
{
    size_t k = l->relocs[0];
    *at = l->insn_off[k] + l->arch->insns[k].fixup_at;
    *end = l->insn_off[k] + l->arch->insns[k].len;
    ck_assert_uint_eq(l->bytes[l->insn_off[k]], 0xe8);
}

START_TEST(relocation_reaches_exactly_2_GiB_each_way)
{
    struct pt_layout l;
    ck_assert_int_eq(pt_layout_build(&l, near_arch(), NULL), 0);
    size_t at, end;
    call_site(&l, &at, &end);
    const uint64_t x = 0x7f0000000000ull;
    static const struct {
        int64_t d;
        bool ok;
    } cases[] = {{0x1234, true},       {-0x1234, true},           {INT32_MAX, true},
                 {INT32_MIN, true},    {(int64_t)INT32_MAX + 1, false}, {(int64_t)INT32_MIN - 1, false},
                 {1ll << 40, false}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        uint8_t buf[PT_LAYOUT_MAX_BYTES];
        memset(buf, 0xcc, sizeof buf);
        uint64_t target = x + end + (uint64_t)cases[c].d;
        ck_assert_int_eq(pt_layout_reaches(&l, x, target), cases[c].ok);
        errno = 0;
        int r = pt_layout_write_at(&l, buf, x, target, 7);
        if (!cases[c].ok) {
            ck_assert_int_eq(r, -1);
            ck_assert_int_eq(errno, ERANGE);
            ck_assert_uint_eq(buf[0], 0xcc); /* nothing written */
            continue;
        }
        ck_assert_int_eq(r, 0);
        int32_t field;
        memcpy(&field, buf + at, 4);
        ck_assert_int_eq(field, (int32_t)cases[c].d);
        /* the rest is the template, then the data words */
        ck_assert_int_eq(memcmp(buf, l.bytes, at), 0);
        ck_assert_int_eq(memcmp(buf + at + 4, l.bytes + at + 4, l.code_len - at - 4), 0);
        uint64_t word;
        memcpy(&word, buf + l.word_off[PT_WORD_TARGET], 8);
        ck_assert_uint_eq(word, target);
    }
}
END_TEST

/* A target in code memory of this process's backend: near the arenas. */
static fn1 near_target(struct pt_code_block *b)
{
    ck_assert_int_eq(pt_code_alloc(b, 4096, 16), 0);
    memcpy(b->w, plus_one_code, sizeof plus_one_code);
    return (fn1)b->x;
}

/* A copy of plus_one_code at least 4 GiB from `from`: MAP_FIXED_NOREPLACE
 * at 4 GiB to 16 TiB on both sides (ASan and valgrind reserve some). */
static fn1 far_target(uintptr_t from, void **map)
{
    long page = sysconf(_SC_PAGESIZE);
    for (uint64_t gib = 4; gib <= 16384; gib *= 2)
        for (int side = -1; side <= 1; side += 2) {
            uintptr_t want = (from + (uintptr_t)side * (uintptr_t)(gib << 30)) & ~(uintptr_t)(page - 1);
            void *p = mmap((void *)want, (size_t)page, PROT_READ | PROT_WRITE,
                           MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
            if (p == MAP_FAILED)
                continue;
            if ((uintptr_t)p != want) {
                munmap(p, (size_t)page);
                continue;
            }
            memcpy(p, plus_one_code, sizeof plus_one_code);
            ck_assert_int_eq(mprotect(p, (size_t)page, PROT_READ | PROT_EXEC), 0);
            *map = p;
            return (fn1)p;
        }
    ck_abort_msg("no page 4 GiB to 16 TiB away from %#lx", (unsigned long)from);
    return NULL;
}

static bool is_near(const struct perftramp *pt, fn1 t)
{
    size_t at, end;
    call_site(&pt->near_layout, &at, &end);
    const uint8_t *p = (const uint8_t *)t;
    return memcmp(p, pt->near_layout.bytes, at) == 0;
}

static bool is_main(const struct perftramp *pt, fn1 t)
{
    return memcmp((const uint8_t *)t, pt->layout.bytes, pt->layout.code_len) == 0;
}

static char *dir;

static void setup(void)
{
    dir = ptt_tempdir();
    ck_assert_ptr_nonnull(dir);
}

static void teardown(void)
{
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map);
    ptt_rmdir(dir);
    free(dir);
}

START_TEST(near_in_reach_main_out_of_reach)
{
    struct perftramp_options o = {.outputs = PERFTRAMP_JITDUMP | PERFTRAMP_PERF_MAP, .jitdump_dir = dir,
                                  .flags = PERFTRAMP_NEAR_CALLS};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    ck_assert(pt->near);
    struct pt_code_block b;
    fn1 nt = near_target(&b);
    fn1 tn = (fn1)perftramp_wrap(pt, (perftramp_fn)nt, "near::plus_one");
    ck_assert_ptr_nonnull(tn);
    ck_assert_msg(pt_layout_reaches(&pt->near_layout, (uintptr_t)tn, (uintptr_t)nt),
                  "the test's target %p is not within 2 GiB of the trampoline %p", (void *)nt, (void *)tn);
    ck_assert_msg(is_near(pt, tn), "a target in reach got the indirect call");
    size_t at, end;
    call_site(&pt->near_layout, &at, &end);
    int32_t rel;
    memcpy(&rel, (const uint8_t *)tn + at, 4);
    ck_assert_uint_eq((uintptr_t)tn + end + (uintptr_t)(intptr_t)rel, (uintptr_t)nt);
    ck_assert_int_eq(tn(41), 42);

    void *map = NULL;
    fn1 ft = far_target((uintptr_t)tn, &map);
    fn1 tf = (fn1)perftramp_wrap(pt, (perftramp_fn)ft, "far::plus_one");
    ck_assert_ptr_nonnull(tf);
    ck_assert(!pt_layout_reaches(&pt->near_layout, (uintptr_t)tf, (uintptr_t)ft));
    ck_assert_msg(is_main(pt, tf), "a target out of reach did not get the indirect call");
    ck_assert_int_eq(tf(41), 42);
    fn1 te = (fn1)perftramp_wrap(pt, (perftramp_fn)far_plus_one, "exe::plus_one");
    ck_assert_ptr_nonnull(te);
    ck_assert_int_eq(te(1), 2);
    ck_assert(is_near(pt, te) == pt_layout_reaches(&pt->near_layout, (uintptr_t)te, (uintptr_t)far_plus_one));

    /* a released near slot reused for a far target: the bytes follow */
    ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)tn), 0);
    fn1 again = (fn1)perftramp_wrap(pt, (perftramp_fn)ft, "far::again");
    ck_assert_ptr_eq(again, tn);
    ck_assert(is_main(pt, again));
    ck_assert_int_eq(again(1), 2);

    /* the jitdump: valid, every LOAD unwinds, and the LOAD of the near
     * trampoline carries its direct call */
    char path[1024];
    snprintf(path, sizeof path, "%s/jit-%ld.dump", dir, (long)getpid());
    size_t len;
    uint8_t *d = ptt_read_file(path, &len);
    ck_assert_ptr_nonnull(d);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, NULL, NULL), 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 4);
    ck_assert_uint_eq(sum.loads_with_unwind, 4);
    struct pt_jd_iter it;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    struct pt_jd_record r;
    int seen_near = 0;
    while (pt_jd_next(&it, &r) == 1)
        if (r.id == PT_JD_LOAD && !strcmp(r.name, "near::plus_one")) {
            ck_assert_uint_eq(r.code_addr, (uintptr_t)tn);
            ck_assert_uint_eq(r.code[at - 1], 0xe8);
            memcpy(&rel, r.code + at, 4);
            ck_assert_uint_eq(r.code_addr + end + (uint64_t)(int64_t)rel, (uintptr_t)nt);
            seen_near++;
        }
    ck_assert_int_eq(seen_near, 1);
    free(d);

    /* the perf map names it */
    char map_path[64], want[128];
    snprintf(map_path, sizeof map_path, "/tmp/perf-%ld.map", (long)getpid());
    snprintf(want, sizeof want, "%lx %zx near::plus_one\n", (unsigned long)(uintptr_t)tn, pt->layout.size);
    uint8_t *m = ptt_read_file(map_path, &len);
    ck_assert_ptr_nonnull(m);
    ck_assert_msg(memmem(m, len, want, strlen(want)) != NULL, "perf map lacks: %s", want);
    free(m);

    ck_assert_int_eq(perftramp_close(pt), 0);
    pt_code_free(&b);
    munmap(map, (size_t)sysconf(_SC_PAGESIZE));
}
END_TEST

START_TEST(without_the_flag_always_the_main_table)
{
    struct perftramp_options o = {.outputs = 0};
    perftramp *pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    ck_assert(!pt->near);
    struct pt_code_block b;
    fn1 nt = near_target(&b);
    fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)nt, "near::plus_one");
    ck_assert_ptr_nonnull(t);
    ck_assert(is_main(pt, t));
    ck_assert_int_eq(t(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
    pt_code_free(&b);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("near");
    TCase *tc = tcase_create("near");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, variant_stands_in_for_its_main_table);
    tcase_add_test(tc, relocation_reaches_exactly_2_GiB_each_way);
    tcase_add_test(tc, near_in_reach_main_out_of_reach);
    tcase_add_test(tc, without_the_flag_always_the_main_table);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    printf("PROOF: arch.x86_64_near.relocated %s call rel32 written per trampoline (both 2 GiB limits, one past "
           "refused), main table out of reach, jitdump validated, perf map named\n",
           failed ? "failed" : "proven");
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#else

int main(void)
{
    printf("PROOF: arch.x86_64_near.relocated not-run the direct-call table is x86-64's\n");
    printf("SKIP: the direct-call table is x86-64's\n");
    return 77;
}

#endif
