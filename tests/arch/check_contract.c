/* SPDX-License-Identifier: MIT */
/* The trampoline contract on the host: every register-passed signature
 * goes through unchanged (on i686: every signature within the five stack
 * words it passes), the frame chain holds, slots are reused, errors are
 * clear, and wrap/release are safe from many threads. */
#include "api/context.h"
#include "contract_targets.h"
#include "perftramp.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define WRAP(pt, fn, name) ((__typeof__(&fn))perftramp_wrap((pt), (perftramp_fn)(fn), (name)))

static perftramp *open_plain(void)
{
    struct perftramp_options o = {0};
    perftramp *pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    return pt;
}

START_TEST(integer_and_float_registers)
{
    perftramp *pt = open_plain();
    __typeof__(&five_ints) t5 = WRAP(pt, five_ints, "five_ints");
    ck_assert_int_eq(t5(1, 2, 3, 4, 5), five_ints(1, 2, 3, 4, 5));
    __typeof__(&ret_float) tf = WRAP(pt, ret_float, "ret_float");
    ck_assert(tf(5.5f, 1.25f) == 4.25f);
#if defined(__x86_64__)
    __typeof__(&six_ints) t6 = WRAP(pt, six_ints, "six_ints");
    ck_assert_int_eq(t6(1, 2, 3, 4, 5, 6), six_ints(1, 2, 3, 4, 5, 6));
    ck_assert_int_eq(t6(-9, 8, -7, 6, -5, 4), six_ints(-9, 8, -7, 6, -5, 4));
    __typeof__(&eight_doubles) t8 = WRAP(pt, eight_doubles, "eight_doubles");
    ck_assert(t8(1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5) == eight_doubles(1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5));
    __typeof__(&mixed) tm = WRAP(pt, mixed, "mixed");
    ck_assert(tm(1, 2.25, 3, 4.5f, 5, 6.75, 7, 8.125, 9, 10.5, 11, 12.25, 14.75) ==
              mixed(1, 2.25, 3, 4.5f, 5, 6.75, 7, 8.125, 9, 10.5, 11, 12.25, 14.75));
    __typeof__(&ret_vector) tv = WRAP(pt, ret_vector, "ret_vector");
    v2df r = tv((v2df){1.5, -2}, (v2df){4, 8});
    ck_assert(r[0] == 6 && r[1] == -16);
    __typeof__(&ret_int128) ti = WRAP(pt, ret_int128, "ret_int128");
    __int128 big = ((__int128)0x123456789abcdefll << 64) | 0xfedcba9876543210ull;
    ck_assert(ti(big, 77) == ret_int128(big, 77));
#endif
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(variadic_calls_keep_al)
{
    perftramp *pt = open_plain();
    __typeof__(&variadic_sum) ts = WRAP(pt, variadic_sum, "variadic_sum");
    ck_assert_int_eq(ts(4, 1L, 2L, 3L, 4L), variadic_sum(4, 1L, 2L, 3L, 4L));
#if defined(__x86_64__)
    ck_assert_int_eq(ts(5, 1L, 2L, 3L, 4L, 5L), variadic_sum(5, 1L, 2L, 3L, 4L, 5L));
    __typeof__(&variadic_doubles) td = WRAP(pt, variadic_doubles, "variadic_doubles");
    /* %al carries the number of vector registers used: must reach the target */
    ck_assert(td(8, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0) == variadic_doubles(8, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0));
#endif
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(struct_returns)
{
    perftramp *pt = open_plain();
    struct two_longs tl = WRAP(pt, ret_two_longs, "ret_two_longs")(3, 5);
    ck_assert_int_eq(tl.a, 21);
    ck_assert_int_eq(tl.b, 55);
    struct two_doubles td = WRAP(pt, ret_two_doubles, "ret_two_doubles")(3, 5);
    ck_assert(td.x == 1.5 && td.y == 15);
    struct long_double_mix m = WRAP(pt, ret_mix, "ret_mix")(10, 2);
    ck_assert(m.a == 9 && m.d == 2.5);
    /* hidden struct-return pointer in %rdi, returned in %rax */
    struct big b = WRAP(pt, ret_big, "ret_big")(7);
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(b.v[i], 7 * (i + 1));
    /* x87 st(0) */
    long double ld = WRAP(pt, ret_long_double, "ret_long_double")(1.5, 4);
    ck_assert(ld == 6.25L);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(frame_pointer_chain_and_alignment)
{
    perftramp *pt = open_plain();
    ck_assert(WRAP(pt, stack_is_aligned, "stack_is_aligned")());
    perftramp_fn tramp = perftramp_wrap(pt, (perftramp_fn)frame_chain, "frame_chain");
    void *chain[3];
    ((void (*)(void **))tramp)(chain);
    /* target frame -> trampoline frame -> this function's frame */
    uintptr_t ret_into_tramp = (uintptr_t)chain[1];
    ck_assert_uint_gt(ret_into_tramp, (uintptr_t)tramp);
    ck_assert_uint_lt(ret_into_tramp, (uintptr_t)tramp + pt->layout.code_len);
    ck_assert_ptr_eq(chain[2], __builtin_frame_address(0));
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(bytes_match_the_table)
{
    perftramp *pt = open_plain();
    perftramp_fn t = perftramp_wrap(pt, (perftramp_fn)add_1, "add_1");
    const uint8_t *code = (const uint8_t *)t;
    ck_assert_mem_eq(code, pt->layout.bytes, pt->layout.code_len);
    uintptr_t target; /* the host table's word: an address of this process */
    memcpy(&target, code + pt->layout.word_off[PT_WORD_TARGET], sizeof target);
    ck_assert_uint_eq(target, (uintptr_t)add_1);
    ck_assert_uint_eq((uintptr_t)t % pt->arch->code_align, 0);
    /* x86-64: an endbr64 landing pad first */
    if (strcmp(pt->arch->name, "x86_64") == 0)
        ck_assert_mem_eq(code, "\xf3\x0f\x1e\xfa", 4);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

START_TEST(hundred_thousand_trampolines)
{
    enum { N = 100000 };
    perftramp *pt = open_plain();
    long (*const targets[4])(long) = {add_k, add_1, add_2, add_3};
    const long adds[4] = {1000, 1, 2, 3};
    perftramp_fn *t = malloc(N * sizeof *t);
    uint64_t *tags = malloc(N * sizeof *tags);
    for (int i = 0; i < N; i++) {
        t[i] = perftramp_wrap(pt, (perftramp_fn)targets[i % 4], "many");
        ck_assert_ptr_nonnull(t[i]);
    }
    for (int i = 0; i < N; i++) {
        ck_assert_int_eq(((long (*)(long))t[i])(i), i + adds[i % 4]);
        memcpy(&tags[i], (const uint8_t *)t[i] + pt->layout.word_off[PT_WORD_TAG], 8);
    }
    /* every trampoline's bytes are unique: its tag differs from all others */
    qsort(tags, N, sizeof *tags, cmp_u64);
    for (int i = 1; i < N; i++)
        ck_assert_uint_ne(tags[i - 1], tags[i]);
    /* addresses are unique too */
    qsort(t, N, sizeof *t, cmp_u64);
    for (int i = 1; i < N; i++)
        ck_assert_ptr_ne(t[i - 1], t[i]);
    free(tags);
    free(t);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(release_then_reuse)
{
    perftramp *pt = open_plain();
    perftramp_fn a = perftramp_wrap(pt, (perftramp_fn)add_1, "a");
    perftramp_fn b = perftramp_wrap(pt, (perftramp_fn)add_2, "b");
    ck_assert_int_eq(perftramp_release(pt, a), 0);
    perftramp_fn c = perftramp_wrap(pt, (perftramp_fn)add_3, "c");
    ck_assert_ptr_eq(c, a); /* the freed slot is reused */
    ck_assert_int_eq(((long (*)(long))c)(10), 13);
    ck_assert_int_eq(((long (*)(long))b)(10), 12);
    /* the reused slot has a fresh tag */
    ck_assert_int_eq(perftramp_release(pt, c), 0);
    ck_assert_int_eq(perftramp_release(pt, b), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(errors_are_clear)
{
    perftramp *pt = open_plain();
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(NULL, (perftramp_fn)add_1, "x"));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(pt, NULL, "x"));
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(pt, (perftramp_fn)add_1, NULL));
    ck_assert_int_eq(errno, EINVAL);

    perftramp_fn t = perftramp_wrap(pt, (perftramp_fn)add_1, "t");
    errno = 0;
    ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)((uintptr_t)t + 1)), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)add_1), -1); /* not ours */
    ck_assert_int_eq(perftramp_release(NULL, t), -1);
    ck_assert_int_eq(perftramp_release(pt, NULL), -1);
    ck_assert_int_eq(perftramp_release(pt, t), 0);
    errno = 0;
    ck_assert_int_eq(perftramp_release(pt, t), -1); /* twice */
    ck_assert_int_eq(errno, EINVAL);
    /* a never-handed-out slot in a live arena */
    perftramp_fn u = perftramp_wrap(pt, (perftramp_fn)add_1, "u");
    ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)((uintptr_t)u + pt->slots.stride * 5)), -1);

    /* a released trampoline traps instead of calling its old target */
    perftramp_fn v = perftramp_wrap(pt, (perftramp_fn)add_2, "v");
    ck_assert_int_eq(perftramp_release(pt, v), 0);
    ck_assert_mem_eq((const void *)v, pt->arch->trap, pt->arch->trap_len);

    /* another context's trampoline */
    perftramp *other = open_plain();
    perftramp_fn w = perftramp_wrap(other, (perftramp_fn)add_3, "w");
    ck_assert_int_eq(perftramp_release(pt, w), -1);
    ck_assert_int_eq(perftramp_release(other, w), 0);
    ck_assert_int_eq(perftramp_close(other), 0);

    errno = 0;
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_output_error(pt, 3), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_output_error(NULL, PERFTRAMP_JITDUMP), -1);
    ck_assert_int_eq(perftramp_close(pt), 0);
    errno = 0;
    ck_assert_int_eq(perftramp_close(NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
}
END_TEST

START_TEST(open_options)
{
    struct perftramp_options bad = {.outputs = 0x100};
    errno = 0;
    ck_assert_ptr_null(perftramp_open(&bad));
    ck_assert_int_eq(errno, EINVAL);
    struct perftramp_options bad_flag = {.flags = 0x80};
    errno = 0;
    ck_assert_ptr_null(perftramp_open(&bad_flag));
    ck_assert_int_eq(errno, EINVAL);

    setenv("PERFTRAMP", "perfmap,bogus", 1);
    errno = 0;
    ck_assert_ptr_null(perftramp_open(NULL));
    ck_assert_int_eq(errno, EINVAL);
    setenv("PERFTRAMP", "", 1);
    perftramp *pt = perftramp_open(NULL);
    ck_assert_ptr_nonnull(pt);
    ck_assert_uint_eq(pt->outputs, 0);
    perftramp_close(pt);
    unsetenv("PERFTRAMP");
    pt = perftramp_open(NULL);
    ck_assert_ptr_nonnull(pt);
    perftramp_close(pt);

    unsigned bits;
    ck_assert_int_eq(pt_parse_outputs("perfmap, jitdump", &bits), 0);
    ck_assert_uint_eq(bits, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP);
    ck_assert_int_eq(pt_parse_outputs("unwind,gdb", &bits), 0);
    ck_assert_uint_eq(bits, PERFTRAMP_UNWIND | PERFTRAMP_GDB);
    ck_assert_int_eq(pt_parse_outputs("all", &bits), 0);
    ck_assert_uint_eq(bits, PERFTRAMP_ALL);
    ck_assert_int_eq(pt_parse_outputs("perfmapx", &bits), -1);
    ck_assert_int_eq(pt_parse_outputs("PERFMAP", &bits), -1);
}
END_TEST

/* ---- threads --------------------------------------------------------- */

struct worker {
    perftramp *pt;
    int id;
    int failures;
};

static void *churn(void *arg)
{
    struct worker *w = arg;
    long (*const targets[4])(long) = {add_k, add_1, add_2, add_3};
    const long adds[4] = {1000, 1, 2, 3};
    perftramp_fn held[16] = {0};
    for (int i = 0; i < 20000; i++) {
        int k = i % 16;
        if (held[k]) {
            long want = (long)((k + w->id) % 4);
            if (((long (*)(long))held[k])(i) != i + adds[want])
                w->failures++;
            if (perftramp_release(w->pt, held[k]) != 0)
                w->failures++;
        }
        held[k] = perftramp_wrap(w->pt, (perftramp_fn)targets[(k + w->id) % 4], "churn");
        if (!held[k])
            w->failures++;
    }
    for (int k = 0; k < 16; k++)
        if (held[k] && perftramp_release(w->pt, held[k]) != 0)
            w->failures++;
    return NULL;
}

START_TEST(eight_threads_wrap_and_release)
{
    perftramp *pt = open_plain();
    pthread_t th[8];
    struct worker w[8];
    for (int i = 0; i < 8; i++) {
        w[i] = (struct worker){pt, i, 0};
        ck_assert_int_eq(pthread_create(&th[i], NULL, churn, &w[i]), 0);
    }
    for (int i = 0; i < 8; i++) {
        pthread_join(th[i], NULL);
        ck_assert_int_eq(w[i].failures, 0);
    }
    /* everything released: the slots all went back to the free list */
    size_t live = 0;
    for (size_t k = 0; k < pt->slots.n_arenas; k++)
        live += pt->slots.arenas[k]->live;
    ck_assert_uint_eq(live, 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

static Suite *contract_suite(void)
{
    Suite *s = suite_create("contract");
    TCase *t = tcase_create("signatures");
    tcase_add_test(t, integer_and_float_registers);
    tcase_add_test(t, variadic_calls_keep_al);
    tcase_add_test(t, struct_returns);
    tcase_add_test(t, frame_pointer_chain_and_alignment);
    tcase_add_test(t, bytes_match_the_table);
    suite_add_tcase(s, t);
    t = tcase_create("slots");
    tcase_set_timeout(t, 120);
    tcase_add_test(t, hundred_thousand_trampolines);
    tcase_add_test(t, release_then_reuse);
    tcase_add_test(t, errors_are_clear);
    tcase_add_test(t, open_options);
    tcase_add_test(t, eight_threads_wrap_and_release);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    int failed = pt_check_run(contract_suite());
    return failed ? 1 : 0;
}
