/* SPDX-License-Identifier: MIT */
/* How every Check suite here runs: all cases, in forked children unless
 * CK_FORK=no (valgrind), and the count of failures for main's exit code. */
#ifndef PERFTRAMP_CHECK_RUN_H
#define PERFTRAMP_CHECK_RUN_H

#include <check.h>

static inline int pt_check_run(Suite *s)
{
    SRunner *r = srunner_create(s);
    srunner_run_all(r, CK_NORMAL);
    int failed = srunner_ntests_failed(r);
    srunner_free(r);
    return failed;
}

#endif
