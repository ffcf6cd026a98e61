/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_ATFORK is lazy: a forked child writes nothing until its first
 * perftramp_wrap, which then writes its perf-<pid>.map and jit-<pid>.dump
 * whole (every trampoline live in it, then the new one).  So a child of a
 * parent holding 1000 trampolines that only execs, or only closes, writes
 * no file at all and leaves the parent's files as they were.  An explicit
 * perftramp_after_fork_child() stays eager. */
#define _GNU_SOURCE /* memmem */
#include "api/context.h"
#include "../lib/perf_test_util.h"
#include "read/jitdump_reader.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define N_WRAPPED 1010
#define N_RELEASED 10
#define N_LIVE (N_WRAPPED - N_RELEASED)

typedef long (*fn1)(long);
static long plus_one(long x)
{
    return x + 1;
}

static char *dir;
static perftramp *pt;
static fn1 tramps[N_WRAPPED];
static uint8_t *parent_map, *parent_dump;
static size_t parent_map_len, parent_dump_len;

static void map_of(pid_t pid, char *out, size_t n)
{
    snprintf(out, n, "/tmp/perf-%ld.map", (long)pid);
}

static void dump_of(pid_t pid, char *out, size_t n)
{
    snprintf(out, n, "%s/jit-%ld.dump", dir, (long)pid);
}

static bool exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* When fork_run last forked, on the clock file times are taken from. */
static struct timespec t_fork;

/* /tmp/perf-<pid>.map is a shared name: a dead process that had the
 * child's pid may have left one there (seen in a full make check at load 6:
 * the child found "its" map before any wrap).  A map is the child's own
 * only if it was written after the fork and names this test's trampolines. */
static bool map_written_since_fork(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return false;
    if (st.st_mtim.tv_sec < t_fork.tv_sec ||
        (st.st_mtim.tv_sec == t_fork.tv_sec && st.st_mtim.tv_nsec < t_fork.tv_nsec))
        return false;
    size_t len;
    uint8_t *m = ptt_read_file(path, &len);
    bool ours = m && memmem(m, len, "lazy::", 6) != NULL;
    free(m);
    return ours;
}

static void setup(void)
{
    dir = ptt_tempdir();
    pt = perftramp_open(&(struct perftramp_options){
        .outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP, .jitdump_dir = dir, .flags = PERFTRAMP_ATFORK});
    ck_assert_msg(pt != NULL, "open: %s", strerror(errno));
    for (int i = 0; i < N_WRAPPED; i++) {
        char name[32];
        snprintf(name, sizeof name, "lazy::f%d", i);
        tramps[i] = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, name);
        ck_assert_ptr_nonnull(tramps[i]);
    }
    for (int i = 0; i < N_RELEASED; i++)
        ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)tramps[i * 7]), 0);
    char path[1100];
    map_of(getpid(), path, sizeof path);
    parent_map = ptt_read_file(path, &parent_map_len);
    dump_of(getpid(), path, sizeof path);
    parent_dump = ptt_read_file(path, &parent_dump_len);
    ck_assert(parent_map && parent_dump);
}

static void teardown(void)
{
    char path[64];
    perftramp_close(pt);
    map_of(getpid(), path, sizeof path);
    unlink(path);
    free(parent_map);
    free(parent_dump);
    ptt_rmdir(dir);
    free(dir);
}

/* The parent's files are byte for byte what they were before the fork. */
static void parent_files_unchanged(void)
{
    char path[1100];
    size_t len;
    map_of(getpid(), path, sizeof path);
    uint8_t *m = ptt_read_file(path, &len);
    ck_assert_msg(m && len == parent_map_len && memcmp(m, parent_map, len) == 0, "the parent's map changed");
    free(m);
    dump_of(getpid(), path, sizeof path);
    m = ptt_read_file(path, &len);
    ck_assert_msg(m && len == parent_dump_len && memcmp(m, parent_dump, len) == 0, "the parent's dump changed");
    free(m);
}

/* The child's exit code when /tmp/perf-<its pid>.map belongs to another
 * user (a dead process of theirs had the pid, and /tmp is sticky): no
 * process of ours can write that name, so the child says so and
 * fork_run forks again, for another pid. */
#define CHILD_FOREIGN_MAP 40

static bool foreign_map_at_my_pid(void)
{
    char path[64];
    struct stat st;
    map_of(getpid(), path, sizeof path);
    return lstat(path, &st) == 0 && st.st_uid != getuid();
}

/* Forks; the child runs `child` and exits with its result.  Returns the
 * child's pid after checking it exited 0. */
static pid_t fork_run(int (*child)(void))
{
    for (int attempt = 0;; attempt++) {
        fflush(NULL);
        clock_gettime(CLOCK_REALTIME_COARSE, &t_fork);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            int r = foreign_map_at_my_pid() ? CHILD_FOREIGN_MAP : child();
            free(parent_map);
            free(parent_dump);
            _exit(r);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        if (WIFEXITED(status) && WEXITSTATUS(status) == CHILD_FOREIGN_MAP && attempt < 20) {
            printf("note: /tmp/perf-%ld.map belongs to another user: forking again\n", (long)pid);
            continue;
        }
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
        return pid;
    }
}

static int child_execs(void)
{
    execl("/bin/true", "true", (char *)NULL);
    return 127;
}

static int child_closes(void)
{
    /* trampolines work, and a close writes no CLOSE record anywhere */
    if (tramps[1](1) != 2)
        return 1;
    return perftramp_close(pt) == 0 ? 0 : 2;
}

START_TEST(exec_child_writes_nothing)
{
    char map[64], dump[1100];
    pid_t child = fork_run(child_execs);
    map_of(child, map, sizeof map);
    dump_of(child, dump, sizeof dump);
    ck_assert_msg(!map_written_since_fork(map), "%s written by a child that only exec'd", map);
    ck_assert_msg(!exists(dump), "%s written by a child that only exec'd", dump);
    parent_files_unchanged();

    child = fork_run(child_closes);
    map_of(child, map, sizeof map);
    dump_of(child, dump, sizeof dump);
    ck_assert(!map_written_since_fork(map) && !exists(dump));
    parent_files_unchanged();
    printf("fork: parent with %d live trampolines (%zu-byte dump, %zu-byte map): a child that execs or closes "
           "writes no file\n",
           N_LIVE, parent_dump_len, parent_map_len);
}
END_TEST

/* In the child: its map and dump hold `want` entries, the live ones
 * (lazy::f<i>) then `last` if not NULL.  0, or a code saying what broke. */
static int child_files_complete(size_t want, const char *last)
{
    char map[64], dump[1100];
    map_of(getpid(), map, sizeof map);
    dump_of(getpid(), dump, sizeof dump);
    FILE *f = fopen(map, "r");
    if (!f)
        return 10;
    char line[256], prev[256] = "";
    size_t lines = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n')
            continue; /* padding before a 4 KiB boundary (outputs/perfmap.c) */
        lines++;
        snprintf(prev, sizeof prev, "%s", line);
    }
    fclose(f);
    unlink(map);
    if (lines != want || (last && !strstr(prev, last)))
        return 11;
    size_t len;
    uint8_t *d = ptt_read_file(dump, &len);
    struct pt_jd_summary sum;
    int bad = !d || pt_jitdump_validate(d, len, &sum, NULL, NULL) != 0 || sum.warnings ||
              sum.by_id[PT_JD_LOAD] != want || sum.header.pid != (uint32_t)getpid();
    free(d);
    unlink(dump);
    return bad ? 12 : 0;
}

static int child_wraps(void)
{
    char map[64];
    map_of(getpid(), map, sizeof map);
    if (map_written_since_fork(map))
        return 20; /* nothing before the first wrap */
    fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "child::new");
    if (!t || t(1) != 2 || tramps[1](1) != 2)
        return 21;
    int r = child_files_complete(N_LIVE + 1, "child::new");
    if (r)
        return r;
    return perftramp_close(pt) == 0 ? 0 : 22;
}

static int child_asks(void)
{
    if (perftramp_after_fork_child(pt) != 0)
        return 30;
    int r = child_files_complete(N_LIVE, NULL); /* written by the call itself */
    return r ? r : (perftramp_close(pt) == 0 ? 0 : 31);
}

START_TEST(wrapping_child_gets_complete_files)
{
    fork_run(child_wraps);
    parent_files_unchanged();
    fork_run(child_asks);
    parent_files_unchanged();
    printf("PROOF: fork.lazy proven a child of a parent with %d live trampolines writes 0 files on exec or close; "
           "its first wrap writes %d map lines and %d LOADs; perftramp_after_fork_child writes %d at once\n",
           N_LIVE, N_LIVE + 1, N_LIVE + 1, N_LIVE);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fork_lazy");
    TCase *tc = tcase_create("lazy");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, exec_child_writes_nothing);
    tcase_add_test(tc, wrapping_child_gets_complete_files);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    if (failed)
        printf("PROOF: fork.lazy failed %d of 2 cases (see above)\n", failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
