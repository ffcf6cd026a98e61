/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_UNWIND with nongnu libunwind (libunwind.so.8, found by
 * perftramp with dlsym): its dynamic-info lookup finds the trampoline's
 * FDE, and unw_backtrace walks through it to the same bottom as a direct
 * call.  Without PERFTRAMP_UNWIND the lookup must fail: the control. */
#include "config.h"

#include "api/context.h"
#include "perftramp.h"
#include "unwind_common.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(HAVE_NONGNU_LIBUNWIND) && defined(HAVE_LIBUNWIND_H)
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#include "unwind_stack.h"

__attribute__((noinline)) static void record_unw(struct pt_trace *t)
{
    void *buf[PT_MAX_FRAMES];
    int n = unw_backtrace(buf, PT_MAX_FRAMES);
    for (int k = 0; k < n; k++)
        t->ip[k] = (uintptr_t)buf[k];
    t->n = n;
    __asm__ volatile("" ::: "memory");
}

/* A walk with unw_step, the path profilers and crash reporters take. */
__attribute__((noinline)) static void record_unw_step(struct pt_trace *t)
{
    unw_context_t uc;
    unw_cursor_t c;
    t->n = 0;
    unw_getcontext(&uc);
    if (unw_init_local(&c, &uc) < 0)
        return;
    do {
        unw_word_t ip;
        if (unw_get_reg(&c, UNW_REG_IP, &ip) < 0 || t->n >= PT_MAX_FRAMES)
            break;
        t->ip[t->n++] = (uintptr_t)ip;
    } while (unw_step(&c) > 0);
    __asm__ volatile("" ::: "memory");
}

START_TEST(test_proc_info_found_only_when_registered)
{
    for (int registered = 0; registered < 2; registered++) {
        perftramp *pt = open_with(registered ? PERFTRAMP_UNWIND : 0);
        int_fn f = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "py::nongnu");
        ck_assert_ptr_nonnull(f);
        unw_proc_info_t pi;
        memset(&pi, 0, sizeof pi);
        uintptr_t mid = (uintptr_t)f + pt->layout.insn_off[2];
        int r = unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)mid, &pi, NULL);
        if (registered) {
            ck_assert_msg(r == 0, "unw_get_proc_info_by_ip: %d", r);
            ck_assert_uint_eq(pi.start_ip, (uintptr_t)f);
            ck_assert_uint_eq(pi.end_ip, (uintptr_t)f + pt->layout.size);
        } else {
            ck_assert_msg(r < 0, "found unwind info that was never registered");
        }
        ck_assert_int_eq(perftramp_close(pt), 0);
    }
    /* closed: cancelled */
    perftramp *pt = open_with(PERFTRAMP_UNWIND);
    int_fn f = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "py::gone");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(perftramp_close(pt), 0);
    unw_proc_info_t pi;
    ck_assert_int_lt(unw_get_proc_info_by_ip(unw_local_addr_space, (unw_word_t)(uintptr_t)f, &pi, NULL), 0);
}
END_TEST

START_TEST(test_unw_backtrace_through_trampoline)
{
    perftramp *pt = open_with(PERFTRAMP_UNWIND);
    for (int i = 0; i < 1000; i++) /* a few live neighbours */
        ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)target, "py::other"));
    int_fn f = (int_fn)perftramp_wrap(pt, (perftramp_fn)target, "py::unw");
    ck_assert_ptr_nonnull(f);
    const char *why = trace_through(pt, f, record_unw);
    ck_assert_msg(why == NULL, "unw_backtrace through a trampoline: %s", why);
    why = trace_through(pt, f, record_unw_step);
    ck_assert_msg(why == NULL, "unw_step through a trampoline: %s", why);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

int main(void)
{
    /* libunwind checks addresses by write(2)-ing them to a pipe; valgrind
     * reports each probe as an error in libunwind, not in perftramp */
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload")) {
        puts("PROOF: output.nongnu-libunwind not-run under valgrind (libunwind's write(2) address probes are "
             "reported as errors)");
        puts("SKIP: under valgrind (libunwind's write(2) address probes are reported as errors)");
        return 77;
    }
    Suite *s = suite_create("unwind_nongnu");
    TCase *tc = tcase_create("nongnu");
    tcase_add_test(tc, test_proc_info_found_only_when_registered);
    tcase_add_test(tc, test_unw_backtrace_through_trampoline);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    puts(failed ? "PROOF: output.nongnu-libunwind failed (see the checks above)"
                : "PROOF: output.nongnu-libunwind proven unw_get_proc_info_by_ip, unw_backtrace and unw_step through "
                  "trampolines");
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
#else
int main(void)
{
    puts("PROOF: output.nongnu-libunwind not-run nongnu libunwind (libunwind-dev) is not installed");
    puts("SKIP: nongnu libunwind (libunwind-dev) is not installed");
    return 77;
}
#endif
