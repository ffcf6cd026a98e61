/* SPDX-License-Identifier: MIT */
/* Misuse of the public API: every mistake a caller can make that the
 * library can detect gets a clear errno and leaves the context intact. */
#include "torture.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

static perftramp *open_plain(void)
{
    struct perftramp_options o = {0};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "perftramp_open: errno %d", errno);
    return pt;
}

/* Two trampolines wrapped first in a fresh context sit one stride apart. */
static size_t stride_of(perftramp *pt, perftramp_fn *first)
{
    perftramp_fn a = perftramp_wrap(pt, TT_FN(0), "stride-a");
    perftramp_fn b = perftramp_wrap(pt, TT_FN(1), "stride-b");
    ck_assert(a && b);
    ck_assert_uint_gt((uintptr_t)b, (uintptr_t)a);
    *first = a;
    return (size_t)((uintptr_t)b - (uintptr_t)a);
}

#define CK_EINVAL(expr)                                                                                 \
    do {                                                                                               \
        errno = 0;                                                                                     \
        ck_assert_int_eq((expr), -1);                                                                  \
        ck_assert_int_eq(errno, EINVAL);                                                               \
    } while (0)

START_TEST(wrap_nulls)
{
    perftramp *pt = open_plain();
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(NULL, TT_FN(0), "x"));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(pt, NULL, "x"));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(pt, TT_FN(0), NULL));
    ck_assert_int_eq(errno, EINVAL);
    /* the context still works */
    perftramp_fn t = perftramp_wrap(pt, TT_FN(2), "after-nulls");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(tt_call(t, 4, 5), tt_expect(2, 4, 5));
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(null_contexts)
{
    perftramp *pt = open_plain();
    perftramp_fn t = perftramp_wrap(pt, TT_FN(0), "t");
    CK_EINVAL(perftramp_release(NULL, t));
    CK_EINVAL(perftramp_release(pt, NULL));
    CK_EINVAL(perftramp_output_error(NULL, PERFTRAMP_PERF_MAP));
    CK_EINVAL(perftramp_after_fork_child(NULL));
    CK_EINVAL(perftramp_close(NULL));
    ck_assert_int_eq(tt_call(t, 1, 2), tt_expect(0, 1, 2));
    ck_assert_int_eq(perftramp_release(pt, t), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(release_twice)
{
    perftramp *pt = open_plain();
    perftramp_fn t = perftramp_wrap(pt, TT_FN(0), "twice");
    ck_assert_int_eq(perftramp_release(pt, t), 0);
    CK_EINVAL(perftramp_release(pt, t));
    CK_EINVAL(perftramp_release(pt, t));
    /* A double free on the free list would hand one slot out twice. */
    perftramp_fn a = perftramp_wrap(pt, TT_FN(1), "a");
    perftramp_fn b = perftramp_wrap(pt, TT_FN(2), "b");
    perftramp_fn c = perftramp_wrap(pt, TT_FN(3), "c");
    ck_assert(a && b && c);
    ck_assert_ptr_ne(a, b);
    ck_assert_ptr_ne(b, c);
    ck_assert_ptr_ne(a, c);
    ck_assert_int_eq(tt_call(a, 3, 4), tt_expect(1, 3, 4));
    ck_assert_int_eq(tt_call(b, 3, 4), tt_expect(2, 3, 4));
    ck_assert_int_eq(tt_call(c, 3, 4), tt_expect(3, 3, 4));
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

static long plain_function(long a, long b)
{
    return a + b;
}

START_TEST(release_foreign)
{
    perftramp *pt = open_plain();
    perftramp_fn t = perftramp_wrap(pt, TT_FN(0), "mine");
    long on_stack = 0;
    void *on_heap = malloc(64);
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)plain_function));
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)(uintptr_t)&on_stack));
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)(uintptr_t)on_heap));
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)(uintptr_t)1));
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)UINTPTR_MAX));
    /* the target is not the trampoline */
    CK_EINVAL(perftramp_release(pt, TT_FN(0)));
    free(on_heap);
    ck_assert_int_eq(tt_call(t, 6, 7), tt_expect(0, 6, 7));
    ck_assert_int_eq(perftramp_release(pt, t), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(release_inside_slot)
{
    perftramp *pt = open_plain();
    perftramp_fn a;
    size_t stride = stride_of(pt, &a);
    uintptr_t base = (uintptr_t)a;
    for (size_t off = 1; off < stride; off++)
        CK_EINVAL(perftramp_release(pt, (perftramp_fn)(base + off)));
    /* a slot of the arena never handed out */
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)(base + 5 * stride)));
    CK_EINVAL(perftramp_release(pt, (perftramp_fn)(base - stride)));
    /* nothing was disturbed: a is live, releasable once */
    ck_assert_int_eq(tt_call(a, 8, 9), tt_expect(0, 8, 9));
    ck_assert_int_eq(perftramp_release(pt, a), 0);
    CK_EINVAL(perftramp_release(pt, a));
    /* the untouched never-used slot is handed out normally later on */
    perftramp_fn seen[8];
    for (int i = 0; i < 8; i++) {
        seen[i] = perftramp_wrap(pt, TT_FN((unsigned)i), "later");
        ck_assert_ptr_nonnull(seen[i]);
        for (int j = 0; j < i; j++)
            ck_assert_ptr_ne(seen[i], seen[j]);
        ck_assert_int_eq(tt_call(seen[i], 1, i), tt_expect((unsigned)i, 1, i));
    }
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(release_other_context)
{
    perftramp *p1 = open_plain();
    perftramp *p2 = open_plain();
    perftramp_fn t1 = perftramp_wrap(p1, TT_FN(1), "one");
    perftramp_fn t2 = perftramp_wrap(p2, TT_FN(2), "two");
    CK_EINVAL(perftramp_release(p2, t1));
    CK_EINVAL(perftramp_release(p1, t2));
    ck_assert_int_eq(tt_call(t1, 2, 3), tt_expect(1, 2, 3));
    ck_assert_int_eq(tt_call(t2, 2, 3), tt_expect(2, 2, 3));
    /* After p1 is closed, its trampolines are foreign to every context
     * (the detectable part of use-after-close). */
    ck_assert_int_eq(perftramp_close(p1), 0);
    CK_EINVAL(perftramp_release(p2, t1));
    ck_assert_int_eq(perftramp_release(p2, t2), 0);
    ck_assert_int_eq(perftramp_close(p2), 0);
}
END_TEST

START_TEST(output_error_bits)
{
    perftramp *pt = open_plain();
    CK_EINVAL(perftramp_output_error(pt, 0));
    CK_EINVAL(perftramp_output_error(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP));
    CK_EINVAL(perftramp_output_error(pt, PERFTRAMP_ALL));
    CK_EINVAL(perftramp_output_error(pt, 0x20));
    CK_EINVAL(perftramp_output_error(pt, 0x80000000u));
    /* never enabled: no error */
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_UNWIND), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_GDB), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(open_bad_options)
{
    struct perftramp_options o = {.outputs = 0x20};
    errno = 0;
    ck_assert_ptr_null(perftramp_open(&o));
    ck_assert_int_eq(errno, EINVAL);
    o = (struct perftramp_options){.flags = 0x2};
    errno = 0;
    ck_assert_ptr_null(perftramp_open(&o));
    ck_assert_int_eq(errno, EINVAL);
    static const char *bad[] = {"perfmapx", "jit", "all,bogus", "perfmap;jitdump", "PERFMAP"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv("PERFTRAMP", bad[i], 1);
        errno = 0;
        ck_assert_msg(perftramp_open(NULL) == NULL && errno == EINVAL, "PERFTRAMP=%s accepted", bad[i]);
    }
    setenv("PERFTRAMP", " , ", 1);
    perftramp *pt = perftramp_open(NULL);
    ck_assert_ptr_nonnull(pt);
    ck_assert_int_eq(perftramp_close(pt), 0);
    unsetenv("PERFTRAMP");
}
END_TEST

START_TEST(release_all_then_reuse)
{
    perftramp *pt = open_plain();
    enum { N = 300 };
    perftramp_fn t[N];
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < N; i++) {
            t[i] = perftramp_wrap(pt, TT_FN((unsigned)(i + round)), "reuse");
            ck_assert_ptr_nonnull(t[i]);
        }
        for (int i = 0; i < N; i++)
            ck_assert_int_eq(tt_call(t[i], i, round), tt_expect((unsigned)(i + round), i, round));
        for (int i = N - 1; i >= 0; i -= 2)
            ck_assert_int_eq(perftramp_release(pt, t[i]), 0);
        for (int i = N - 1; i >= 0; i -= 2)
            CK_EINVAL(perftramp_release(pt, t[i]));
        for (int i = N - 2; i >= 0; i -= 2)
            ck_assert_int_eq(perftramp_release(pt, t[i]), 0);
    }
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("misuse");
    TCase *tc = tcase_create("api");
    tcase_add_test(tc, wrap_nulls);
    tcase_add_test(tc, null_contexts);
    tcase_add_test(tc, release_twice);
    tcase_add_test(tc, release_foreign);
    tcase_add_test(tc, release_inside_slot);
    tcase_add_test(tc, release_other_context);
    tcase_add_test(tc, output_error_bits);
    tcase_add_test(tc, open_bad_options);
    tcase_add_test(tc, release_all_then_reuse);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
