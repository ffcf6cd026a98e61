/* SPDX-License-Identifier: MIT */
/* Allocation failure at every allocation site reached by perftramp_open
 * and perftramp_wrap (and perftramp_set_outputs): the call returns NULL with ENOMEM (or, for an
 * output that fails while recording, disables that output as documented),
 * nothing leaks, nothing crashes, and the context stays usable. */
#include "fault_alloc.h"
#include "torture.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>

/* Outputs exercised: none, then each output this build supports. */
static const unsigned output_sets[] = {0, PERFTRAMP_PERF_MAP, PERFTRAMP_JITDUMP, PERFTRAMP_UNWIND, PERFTRAMP_GDB,
                                       PERFTRAMP_ALL};
#define N_SETS (sizeof output_sets / sizeof output_sets[0])

static char *scratch;

static perftramp *open_with(unsigned outputs)
{
    struct perftramp_options o = {.outputs = outputs, .jitdump_dir = scratch};
    return perftramp_open(&o);
}

/* An output set this build cannot open (a stub, ENOTSUP) is skipped. */
static bool supported(unsigned outputs)
{
    perftramp *pt = open_with(outputs);
    if (!pt) {
        ck_assert_msg(errno == ENOTSUP, "open(outputs=%#x) without faults: errno %d", outputs, errno);
        printf("SKIP outputs=%#x: not supported by this build (ENOTSUP)\n", outputs);
        return false;
    }
    ck_assert_int_eq(perftramp_close(pt), 0);
    return true;
}

static void wrap_works(perftramp *pt, unsigned k)
{
    perftramp_fn t = perftramp_wrap(pt, TT_FN(k), "after-fault");
    ck_assert_msg(t != NULL, "wrap after a fault: errno %d", errno);
    ck_assert_int_eq(tt_call(t, 12, 34), tt_expect(k, 12, 34));
    ck_assert_int_eq(perftramp_release(pt, t), 0);
}

START_TEST(open_fails_cleanly)
{
    unsigned outputs = output_sets[_i];
    if (!supported(outputs))
        return;
    size_t before = fa_live();
    unsigned long sites = 0;
    for (unsigned long n = 1;; n++) {
        fa_arm(n);
        errno = 0;
        perftramp *pt = open_with(outputs);
        int e = errno;
        bool fired = fa_fired();
        fa_disarm();
        if (!fired) {
            ck_assert_msg(pt != NULL, "open without a fault failed: errno %d", e);
            sites = n - 1;
            wrap_works(pt, (unsigned)n);
            ck_assert_int_eq(perftramp_close(pt), 0);
            break;
        }
        if (pt) {
            /* an allocation the open can do without (none expected) */
            wrap_works(pt, (unsigned)n);
            ck_assert_int_eq(perftramp_close(pt), 0);
        } else {
            ck_assert_msg(e == ENOMEM, "open(outputs=%#x), allocation %lu failed: errno %d, want ENOMEM", outputs,
                          n, e);
        }
        ck_assert_msg(fa_live() == before, "open(outputs=%#x), allocation %lu failed: %zu blocks leaked", outputs,
                      n, fa_live() - before);
    }
    ck_assert_uint_gt(sites, 0);
    printf("open(outputs=%#x): %lu allocation sites, each failed once\n", outputs, sites);
}
END_TEST

/* Fails each allocation of the wrap that happens after `prefill` wraps
 * (0: the first wrap, which creates the first arena; a full arena: the
 * wrap that creates the second).  A wrap that fails must leave the context
 * exactly as it was (no block more or less), so the same prefilled context
 * serves the next N; one that an output absorbed (the output is disabled,
 * the trampoline returned) needs a fresh one. */
struct faulted {
    perftramp *pt;
    perftramp_fn *keep;
};

static struct faulted prefilled(unsigned outputs, size_t prefill)
{
    struct faulted f = {open_with(outputs), calloc(prefill + 1, sizeof(perftramp_fn))};
    ck_assert_ptr_nonnull(f.pt);
    ck_assert_ptr_nonnull(f.keep);
    for (size_t i = 0; i < prefill; i++)
        ck_assert_ptr_nonnull(f.keep[i] = perftramp_wrap(f.pt, TT_FN((unsigned)i), "prefill"));
    return f;
}

static void finish(struct faulted *f, size_t prefill)
{
    /* the context is usable: old and new trampolines work */
    for (size_t i = 0; i < prefill; i += 97)
        ck_assert_int_eq(tt_call(f->keep[i], 1, 2), tt_expect((unsigned)i, 1, 2));
    wrap_works(f->pt, 1);
    wrap_works(f->pt, 2);
    ck_assert_int_eq(perftramp_close(f->pt), 0);
    free(f->keep);
    f->pt = NULL;
}

static void wrap_faults(unsigned outputs, size_t prefill)
{
    size_t before = fa_live();
    unsigned long sites = 0, absorbed = 0;
    struct faulted f = prefilled(outputs, prefill);
    for (unsigned long n = 1;; n++) {
        size_t live = fa_live();
        fa_arm(n);
        errno = 0;
        perftramp_fn t = perftramp_wrap(f.pt, TT_FN(1), "faulted");
        int e = errno;
        bool fired = fa_fired();
        fa_disarm();
        if (!t) {
            ck_assert_msg(fired, "wrap failed without a fault: errno %d", e);
            ck_assert_msg(e == ENOMEM, "wrap(outputs=%#x, after %zu), allocation %lu failed: errno %d, want ENOMEM",
                          outputs, prefill, n, e);
            ck_assert_msg(fa_live() == live, "wrap(outputs=%#x, after %zu), allocation %lu failed: %ld blocks leaked",
                          outputs, prefill, n, (long)(fa_live() - live));
            continue;
        }
        ck_assert_int_eq(tt_call(t, 5, 6), tt_expect(1, 5, 6));
        /* an output that failed is disabled with the allocation's errno */
        for (unsigned bit = 1; bit <= PERFTRAMP_GDB; bit <<= 1) {
            int oe = perftramp_output_error(f.pt, bit);
            ck_assert_msg(oe == 0 || (fired && oe == ENOMEM), "output %#x error %d", bit, oe);
        }
        ck_assert_int_eq(perftramp_release(f.pt, t), 0);
        finish(&f, prefill);
        ck_assert_msg(fa_live() == before, "wrap(outputs=%#x, after %zu), allocation %lu failed: %zu blocks leaked",
                      outputs, prefill, n, fa_live() - before);
        if (!fired) {
            sites = n - 1;
            break;
        }
        absorbed++;
        f = prefilled(outputs, prefill);
    }
    printf("wrap(outputs=%#x, after %zu wraps): %lu allocation sites failed once each, %lu absorbed by an output\n",
           outputs, prefill, sites, absorbed);
}

/* How many wraps fill the first arena: the first wrap that lands before
 * the previous one or more than a stride past it opened a new arena. */
static size_t first_arena_slots(unsigned outputs)
{
    perftramp *pt = open_with(outputs);
    ck_assert_ptr_nonnull(pt);
    uintptr_t first = (uintptr_t)perftramp_wrap(pt, TT_FN(0), "probe");
    uintptr_t prev = (uintptr_t)perftramp_wrap(pt, TT_FN(0), "probe");
    uintptr_t stride = prev - first;
    size_t n = 2;
    for (;; n++) {
        uintptr_t t = (uintptr_t)perftramp_wrap(pt, TT_FN(0), "probe");
        ck_assert(t);
        if (t != prev + stride)
            break;
        prev = t;
    }
    ck_assert_int_eq(perftramp_close(pt), 0);
    return n;
}

START_TEST(wrap_fails_cleanly)
{
    unsigned outputs = output_sets[_i];
    if (!supported(outputs))
        return;
    wrap_faults(outputs, 0);                          /* first arena */
    wrap_faults(outputs, 1);                          /* a wrap that needs no new arena */
    wrap_faults(outputs, first_arena_slots(outputs)); /* the second arena */
}
END_TEST

/* perftramp_set_outputs on a running context: each allocation of the
 * enable (opening, then replaying the live trampolines) fails once.  A
 * failed enable returns -1 with ENOMEM and changes nothing (no output on,
 * no error recorded, no block more or less); an allocation an output
 * absorbs leaves that output disabled with its error readable.  Either
 * way the trampolines keep working and disabling frees everything. */
START_TEST(set_outputs_fails_cleanly)
{
    unsigned outputs = output_sets[_i];
    if (!outputs || !supported(outputs))
        return;
    size_t before = fa_live();
    perftramp *pt = open_with(0);
    ck_assert_ptr_nonnull(pt);
    perftramp_fn keep[3];
    for (unsigned k = 0; k < 3; k++)
        ck_assert_ptr_nonnull(keep[k] = perftramp_wrap(pt, TT_FN(k), "live"));
    unsigned long sites = 0, absorbed = 0;
    for (unsigned long n = 1;; n++) {
        size_t live = fa_live();
        fa_arm(n);
        errno = 0;
        int r = perftramp_set_outputs(pt, outputs);
        int e = errno;
        bool fired = fa_fired();
        fa_disarm();
        if (r < 0) {
            ck_assert_msg(fired, "set_outputs(%#x) failed without a fault: errno %d", outputs, e);
            ck_assert_msg(e == ENOMEM, "set_outputs(%#x), allocation %lu failed: errno %d, want ENOMEM", outputs, n,
                          e);
            ck_assert_uint_eq(perftramp_outputs(pt), 0);
            for (unsigned b = 1; b <= PERFTRAMP_GDB; b <<= 1)
                ck_assert_int_eq(perftramp_output_error(pt, b), 0);
            ck_assert_msg(fa_live() == live, "set_outputs(%#x), allocation %lu failed: %zd blocks changed", outputs,
                          n, (ssize_t)(fa_live() - live));
        } else {
            if (fired)
                absorbed++;
            else
                ck_assert_uint_eq(perftramp_outputs(pt), outputs);
            ck_assert_int_eq(perftramp_set_outputs(pt, 0), 0);
            ck_assert_msg(fa_live() == live, "set_outputs(%#x) then off, allocation %lu: %zd blocks changed", outputs,
                          n, (ssize_t)(fa_live() - live));
        }
        for (unsigned k = 0; k < 3; k++)
            ck_assert_int_eq(tt_call(keep[k], 5, 6), tt_expect(k, 5, 6));
        if (!fired) {
            sites = n - 1;
            break;
        }
    }
    wrap_works(pt, 3);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_msg(fa_live() == before, "set_outputs(%#x): %zd blocks leaked", outputs, (ssize_t)(fa_live() - before));
    ck_assert_uint_gt(sites, 0);
    printf("set_outputs(%#x) on a running context: %lu allocation sites, each failed once (%lu absorbed by an "
           "output)\n", outputs, sites, absorbed);
}
END_TEST

/* Each test runs in its own process (Check forks): remove the perf map
 * that process wrote to /tmp, so the suite leaves nothing behind. */
static void remove_own_map(void)
{
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map);
}

int main(void)
{
    scratch = tt_mkdtemp();
    Suite *s = suite_create("alloc_fault");
    TCase *tc = tcase_create("every_site");
    tcase_set_timeout(tc, 600);
    tcase_add_checked_fixture(tc, NULL, remove_own_map);
    tcase_add_loop_test(tc, open_fails_cleanly, 0, (int)N_SETS);
    tcase_add_loop_test(tc, wrap_fails_cleanly, 0, (int)N_SETS);
    tcase_add_loop_test(tc, set_outputs_fails_cleanly, 0, (int)N_SETS);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    tt_rmtree(scratch);
    free(scratch);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
