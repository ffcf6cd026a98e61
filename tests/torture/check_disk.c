/* SPDX-License-Identifier: MIT */
/* Full disks.  When a write fails (EFBIG under RLIMIT_FSIZE with SIGXFSZ
 * ignored; ENOSPC on a full tmpfs) the output is disabled with that errno,
 * every trampoline keeps working, and the jitdump stays parseable up to
 * its last complete record: no torn record, every LOAD before the failure
 * present.  Each case runs in a child (limits, mounts) that reports back
 * through a pipe; the parent checks the files. */
#define _GNU_SOURCE
#include "dumpscan.h"
#include "read/jitdump_reader.h"
#include "torture.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WRAPS 4000

struct report {
    int ok;                 /* 1: the child got through */
    char why[400];
    int map_error, dump_error;
    long map_failed_at;     /* index of the wrap that disabled the output (-1: none) */
    long dump_failed_at;
    long wraps;
    /* ENOSPC case: the child validates (its tmpfs vanishes with it) */
    size_t loads, torn, validator_errors, map_lines, map_torn;
    int skipped;
    char skip_why[160];
};

static void child_fail(struct report *r, const char *fmt, const char *arg)
{
    snprintf(r->why, sizeof r->why, fmt, arg);
    r->ok = 0;
}

static char wrap_name[64];
static const char *name_of(long i)
{
    snprintf(wrap_name, sizeof wrap_name, "disk::w%ld", i);
    return wrap_name;
}

/* Wraps until every enabled output failed or MAX_WRAPS; calls every
 * trampoline made so far each time (they must all keep working). */
static perftramp_fn t[MAX_WRAPS];

static void wrap_until_full(perftramp *pt, unsigned outputs, struct report *r, long start)
{
    r->map_failed_at = r->dump_failed_at = -1;
    for (long i = start; i < MAX_WRAPS; i++) {
        t[i] = perftramp_wrap(pt, TT_FN((unsigned)i), name_of(i));
        if (!t[i]) {
            child_fail(r, "wrap failed: %s", strerror(errno));
            return;
        }
        r->wraps = i + 1;
        if (r->map_failed_at < 0 && (r->map_error = perftramp_output_error(pt, PERFTRAMP_PERF_MAP)))
            r->map_failed_at = i;
        if (r->dump_failed_at < 0 && (r->dump_error = perftramp_output_error(pt, PERFTRAMP_JITDUMP)))
            r->dump_failed_at = i;
        bool map_done = !(outputs & PERFTRAMP_PERF_MAP) || r->map_failed_at >= 0;
        bool dump_done = !(outputs & PERFTRAMP_JITDUMP) || r->dump_failed_at >= 0;
        if (map_done && dump_done && i >= r->map_failed_at + 20 && i >= r->dump_failed_at + 20)
            break;
    }
    for (long i = 0; i < r->wraps; i++)
        if (tt_call(t[i], i, 1) != tt_expect((unsigned)i, i, 1)) {
            child_fail(r, "trampoline %s stopped working", name_of(i));
            return;
        }
    r->ok = 1;
}

struct expect_names {
    long next;
};

static int load_in_order(void *arg, const struct ds_load *l)
{
    struct expect_names *e = arg;
    ck_assert_str_eq(l->name, name_of(e->next));
    e->next++;
    return 0;
}

static int line_in_order(void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
    struct expect_names *e = arg;
    (void)start;
    (void)size;
    const char *want = name_of(e->next);
    ck_assert_msg(len == strlen(want) && memcmp(name, want, len) == 0, "map line %ld: '%.*s'", e->next, (int)len,
                  name);
    e->next++;
    return 0;
}

START_TEST(efbig_keeps_dump_parseable)
{
    char *dir = tt_mkdtemp();
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct report r = {0};
        close(pfd[0]);
        signal(SIGXFSZ, SIG_IGN);
        struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP, .jitdump_dir = dir};
        perftramp *pt = perftramp_open(&o);
        if (!pt) {
            child_fail(&r, "open: %s", strerror(errno));
            tt_send_report(pfd[1], &r, sizeof r);
        }
        /* 20 wraps fit; then the limit lands inside the next group */
        for (long i = 0; i < 20; i++)
            t[i] = perftramp_wrap(pt, TT_FN((unsigned)i), name_of(i));
        char dump[4200];
        snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
        struct stat st;
        stat(dump, &st);
        struct rlimit rl = {.rlim_cur = (rlim_t)st.st_size + 100, .rlim_max = RLIM_INFINITY};
        setrlimit(RLIMIT_FSIZE, &rl);
        wrap_until_full(pt, o.outputs, &r, 20);
        if (perftramp_close(pt) != 0 && r.ok) {
            /* close reports the first output that failed to close; a
             * disabled output has nothing left to write */
            child_fail(&r, "close: %s", strerror(errno));
        }
        tt_send_report(pfd[1], &r, sizeof r);
    }
    close(pfd[1]);
    struct report r;
    tt_read_report(pfd[0], child, &r, sizeof r);
    ck_assert_msg(r.ok, "child: %s", r.why);
    ck_assert_msg(r.dump_error == EFBIG, "jitdump error %d (%s), want EFBIG", r.dump_error, strerror(r.dump_error));
    ck_assert_msg(r.map_error == EFBIG, "perf map error %d (%s), want EFBIG", r.map_error, strerror(r.map_error));
    ck_assert_int_ge(r.dump_failed_at, 20);

    char dump[4200], map[64];
    snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)child);
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)child);
    /* the dump: every group before the failing one, complete; nothing torn */
    struct expect_names e = {0};
    struct ds_dump_stats ds;
    ck_assert_msg(ds_scan_jitdump(dump, load_in_order, &e, &ds) == 0, "dump: %s", ds.error);
    ck_assert_msg(ds.torn_tail == 0, "dump: a torn record of %zu bytes", ds.torn_tail);
    ck_assert_uint_eq(ds.loads, (size_t)r.dump_failed_at);
    char why[300];
    struct pt_jd_summary sum;
    size_t errors = ds_validate_jitdump(dump, &sum, why, sizeof why);
    ck_assert_msg(errors == 0, "validator: %s", why);
    ck_assert_uint_eq(sum.trailing_bytes, 0);
    /* the map: every line before the failing one, and nothing of the
     * failing one (RLIMIT_FSIZE cuts a write at any byte: the writer cuts
     * the part written off again) */
    e.next = 0;
    struct ds_map_stats ms;
    ck_assert_msg(ds_scan_map(map, line_in_order, &e, &ms) == 0, "map: %s", ms.error);
    ck_assert_uint_eq(ms.lines, (size_t)r.map_failed_at);
    ck_assert_msg(ms.torn_tail == 0, "map: a torn line of %zu bytes", ms.torn_tail);
    printf("EFBIG: dump disabled at wrap %ld (%zu complete LOADs, 0 torn bytes), map at wrap %ld (%zu lines, "
           "%zu-byte torn tail); %ld trampolines all working\n",
           r.dump_failed_at, ds.loads, r.map_failed_at, ms.lines, ms.torn_tail, r.wraps);
    unlink(map);
    tt_rmtree(dir);
    free(dir);
}
END_TEST

/* ENOSPC on a 64 KiB tmpfs mounted over /tmp in a private mount namespace
 * of the child (nothing outside sees it; it vanishes with the child): the
 * perf map and the jitdump fill the same small disk. */
START_TEST(enospc_keeps_dump_parseable)
{
    char *dir = tt_mkdtemp();
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct report r = {0};
        close(pfd[0]);
        if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("tmpfs", "/tmp", "tmpfs", 0, "size=64k,mode=1777") != 0) {
            r.skipped = 1;
            snprintf(r.skip_why, sizeof r.skip_why, "cannot mount a small tmpfs here: %s", strerror(errno));
            tt_send_report(pfd[1], &r, sizeof r);
        }
        struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP, .jitdump_dir = "/tmp"};
        perftramp *pt = perftramp_open(&o);
        if (!pt) {
            child_fail(&r, "open: %s", strerror(errno));
            tt_send_report(pfd[1], &r, sizeof r);
        }
        wrap_until_full(pt, o.outputs, &r, 0);
        perftramp_close(pt);
        char dump[64], map[64];
        snprintf(dump, sizeof dump, "/tmp/jit-%d.dump", (int)getpid());
        snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
        struct expect_names e = {0};
        struct ds_map_stats ms;
        if (ds_scan_map(map, line_in_order, &e, &ms) != 0)
            child_fail(&r, "map: %s", ms.error);
        r.map_lines = ms.lines;
        r.map_torn = ms.torn_tail;
        struct ds_dump_stats ds;
        if (ds_scan_jitdump(dump, NULL, NULL, &ds) != 0)
            child_fail(&r, "dump: %s", ds.error);
        r.loads = ds.loads;
        r.torn = ds.torn_tail;
        char why[300];
        struct pt_jd_summary sum;
        r.validator_errors = ds_validate_jitdump(dump, &sum, why, sizeof why);
        if (r.validator_errors && r.ok)
            child_fail(&r, "validator: %s", why);
        tt_send_report(pfd[1], &r, sizeof r);
    }
    close(pfd[1]);
    struct report r;
    tt_read_report(pfd[0], child, &r, sizeof r);
    rmdir(dir);
    free(dir);
    if (r.skipped) {
        printf("SKIP enospc_keeps_dump_parseable: %s\n", r.skip_why);
        return;
    }
    ck_assert_msg(r.ok, "child: %s", r.why);
    ck_assert_msg(r.dump_error == ENOSPC, "jitdump error %d (%s), want ENOSPC", r.dump_error,
                  strerror(r.dump_error));
    ck_assert_int_gt(r.dump_failed_at, 0);
    ck_assert_uint_eq(r.torn, 0);
    ck_assert_uint_eq(r.loads, (size_t)r.dump_failed_at);
    ck_assert_msg(r.map_error == ENOSPC, "perf map error %d (%s), want ENOSPC", r.map_error, strerror(r.map_error));
    ck_assert_uint_eq(r.map_lines, (size_t)r.map_failed_at);
    ck_assert_msg(r.map_torn == 0, "map: a torn line of %zu bytes", r.map_torn);
    printf("ENOSPC: dump disabled at wrap %ld with %zu complete LOADs, 0 torn bytes; map at wrap %ld with %zu "
           "complete lines (%zu-byte torn tail); %ld trampolines all working\n",
           r.dump_failed_at, r.loads, r.map_failed_at, r.map_lines, r.map_torn, r.wraps);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disk");
    TCase *tc = tcase_create("full");
    tcase_add_test(tc, efbig_keeps_dump_parseable);
    tcase_add_test(tc, enospc_keeps_dump_parseable);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
