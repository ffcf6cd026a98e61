/* SPDX-License-Identifier: MIT */
/* $PERFTRAMP, read by perftramp_open(NULL): one boolean word (1, yes,
 * true, on: the perf map; 0, no, false, off: nothing), in any case, or a
 * comma list of output names (lower case); anything else fails with
 * EINVAL.  Checked
 * on the context and on the files the outputs write. */
#include "config.h"

#include "api/context.h"
#include "../lib/perf_test_util.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char *dir;
static char map_path[64], dump_path[1100];

static void setup(void)
{
    dir = ptt_tempdir();
    setenv("JITDUMPDIR", dir, 1);
    snprintf(map_path, sizeof map_path, "/tmp/perf-%ld.map", (long)getpid());
    snprintf(dump_path, sizeof dump_path, "%s/jit-%ld.dump", dir, (long)getpid());
    unlink(map_path);
}

static void teardown(void)
{
    unsetenv("PERFTRAMP");
    unsetenv("JITDUMPDIR");
    unlink(map_path);
    ptt_rmdir(dir);
    free(dir);
}

static long plus_one(long x)
{
    return x + 1;
}

/* Opens with PERFTRAMP=value, wraps one function, closes: the outputs the
 * context had, and which files appeared. */
static unsigned open_with(const char *value, bool *map, bool *dump)
{
    setenv("PERFTRAMP", value, 1);
    perftramp *pt = perftramp_open(NULL);
    ck_assert_msg(pt != NULL, "PERFTRAMP='%s': %s", value, strerror(errno));
    unsigned outputs = pt->outputs;
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "env::f"));
    struct stat st;
    *map = stat(map_path, &st) == 0;
    *dump = stat(dump_path, &st) == 0;
    ck_assert_int_eq(perftramp_close(pt), 0);
    unlink(map_path);
    unlink(dump_path);
    return outputs;
}

static const char *const on[] = {"1", "yes", "true", "on", "YES", "True", "oN", " 1 ", "\tyes"};
static const char *const off[] = {"0", "no", "false", "off", "NO", "False", "OFF", "", "  "};
static const char *const bad[] = {"2",           "enable",   "yes please", "1,jitdump",
                                  "perfmap,yes", "perfmaps", "-1",         "PERFMAP"};
#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

START_TEST(boolean_words)
{
    bool map, dump;
    for (size_t i = 0; i < COUNT(on); i++) {
        ck_assert_uint_eq(open_with(on[i], &map, &dump), PERFTRAMP_PERF_MAP);
        ck_assert_msg(map && !dump, "PERFTRAMP='%s': map %d dump %d", on[i], map, dump);
    }
    for (size_t i = 0; i < COUNT(off); i++) {
        ck_assert_uint_eq(open_with(off[i], &map, &dump), 0);
        ck_assert_msg(!map && !dump, "PERFTRAMP='%s': map %d dump %d", off[i], map, dump);
    }
    unsetenv("PERFTRAMP");
    perftramp *pt = perftramp_open(NULL);
    ck_assert_ptr_nonnull(pt);
    ck_assert_uint_eq(pt->outputs, 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(output_lists)
{
    bool map, dump;
    ck_assert_uint_eq(open_with("perfmap,jitdump", &map, &dump), PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP);
    ck_assert(map && dump); /* the dump in $JITDUMPDIR */
    ck_assert_uint_eq(open_with("jitdump", &map, &dump), PERFTRAMP_JITDUMP);
    ck_assert(!map && dump);
#ifdef HAVE_LIBGCC_UNWINDER
    ck_assert_uint_eq(open_with(" unwind , gdb ", &map, &dump), PERFTRAMP_UNWIND | PERFTRAMP_GDB);
    ck_assert_uint_eq(open_with("all", &map, &dump), PERFTRAMP_ALL);
#else
    /* no unwinder to feed (Debian's musl-gcc): named, the open fails */
    ck_assert_uint_eq(open_with(" perfmap , gdb ", &map, &dump), PERFTRAMP_PERF_MAP | PERFTRAMP_GDB);
    setenv("PERFTRAMP", " unwind , gdb ", 1);
    errno = 0;
    ck_assert_msg(perftramp_open(NULL) == NULL && errno == ENOTSUP, "PERFTRAMP=unwind,gdb: errno %d", errno);
    /* "all": the rest open, the unwinder stays off and says why */
    ck_assert_uint_eq(open_with("all", &map, &dump), PERFTRAMP_ALL);
    ck_assert(map && dump);
#endif
    /* an "all" that opens everything it names has no error to report */
    setenv("PERFTRAMP", "all", 1);
    perftramp *pt = perftramp_open(NULL);
    ck_assert_ptr_nonnull(pt);
#ifdef HAVE_LIBGCC_UNWINDER
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_UNWIND), 0);
#else
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_UNWIND), ENOTSUP);
#endif
    ck_assert_int_eq(perftramp_close(pt), 0);
    unlink(map_path);
    unlink(dump_path);
    unsetenv("PERFTRAMP");
}
END_TEST

START_TEST(unknown_words_are_einval)
{
    for (size_t i = 0; i < COUNT(bad); i++) {
        setenv("PERFTRAMP", bad[i], 1);
        errno = 0;
        perftramp *pt = perftramp_open(NULL);
        ck_assert_msg(pt == NULL && errno == EINVAL, "PERFTRAMP='%s': %p, errno %d", bad[i], (void *)pt, errno);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("env");
    TCase *tc = tcase_create("env");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, boolean_words);
    tcase_add_test(tc, output_lists);
    tcase_add_test(tc, unknown_words_are_einval);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    if (failed)
        printf("PROOF: env.words failed %d of 3 cases (see above)\n", failed);
    else
        printf("PROOF: env.words proven $PERFTRAMP: %zu on words -> the perf map only, %zu off words -> no "
               "output, 4 output lists, %zu unknown words -> EINVAL\n",
               COUNT(on), COUNT(off), COUNT(bad));
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
