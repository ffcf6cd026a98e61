/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_PERF_MAP: /tmp/perf-<pid>.map lines, the name policy (control
 * bytes escaped, long names cut with a marker), refusal of planted files,
 * errors, fork. */
#include "api/context.h"
#include "outputs/perf_name.h"
#include "../lib/perf_test_util.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

typedef long (*fn1)(long);
static long plus_one(long x)
{
    return x + 1;
}

static char map_path[64];

static void map_path_for(pid_t pid, char *out, size_t n)
{
    snprintf(out, n, "/tmp/perf-%ld.map", (long)pid);
}

static void setup(void)
{
    map_path_for(getpid(), map_path, sizeof map_path);
    unlink(map_path);
}

static void teardown(void)
{
    unlink(map_path);
}

static perftramp *open_map(void)
{
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = PERFTRAMP_PERF_MAP});
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    return pt;
}

/* Splits the map into lines; checks each parses as "START SIZE name". */
struct line {
    uintptr_t start;
    size_t size;
    char name[PT_PERF_NAME_MAX + 1];
};
static size_t read_lines(const char *p, struct line *out, size_t max)
{
    size_t len;
    uint8_t *d = ptt_read_file(p, &len);
    ck_assert_msg(d != NULL, "%s: %s", p, strerror(errno));
    ck_assert_msg(len == 0 || d[len - 1] == '\n', "map does not end with a newline");
    size_t n = 0, i = 0;
    while (i < len) {
        uint8_t *nl = memchr(d + i, '\n', len - i);
        ck_assert_ptr_nonnull(nl);
        size_t l = (size_t)(nl - (d + i));
        char *s = (char *)d + i;
        for (size_t k = 0; k < l; k++)
            ck_assert_msg((unsigned char)s[k] >= 0x20 && s[k] != 0x7f, "control byte 0x%02x in a line",
                          (unsigned char)s[k]);
        ck_assert_uint_lt(n, max);
        char *end;
        out[n].start = (uintptr_t)strtoull(s, &end, 16);
        ck_assert(*end == ' ');
        ck_assert(strncmp(s, "0x", 2) != 0);
        out[n].size = (size_t)strtoull(end + 1, &end, 16);
        ck_assert(*end == ' ');
        size_t name_len = l - (size_t)(end + 1 - s);
        ck_assert_uint_le(name_len, PT_PERF_NAME_MAX);
        memcpy(out[n].name, end + 1, name_len);
        out[n].name[name_len] = 0;
        n++;
        i += l + 1;
    }
    free(d);
    return n;
}

START_TEST(lines_and_hostile_names)
{
    static char long_ascii[5000], long_utf8[5000];
    memset(long_ascii, 'a', sizeof long_ascii - 1);
    /* 3-byte UTF-8 characters (U+20AC) placed so the cut lands inside one */
    size_t k = 0;
    while (k + 3 < sizeof long_utf8 - 1) {
        long_utf8[k++] = (char)0xe2;
        long_utf8[k++] = (char)0x82;
        long_utf8[k++] = (char)0xac;
    }
    long_utf8[k] = 0;
    const char *names[] = {"py::main", "evil\nffffffff 10 forged", "cr\rlf", "tab\there", "\x01\x1f\x7f",
                           "", "caf\xc3\xa9::\xe2\x82\xac", long_ascii, long_utf8};
    const char *want[] = {"py::main", "evil\\x0affffffff 10 forged", "cr\\x0dlf", "tab\\x09here",
                          "\\x01\\x1f\\x7f", NULL /* "": below */, "caf\xc3\xa9::\xe2\x82\xac", NULL, NULL};
    enum { N = sizeof names / sizeof names[0] };
    perftramp *pt = open_map();
    struct stat st;
    ck_assert_int_eq(stat(map_path, &st), 0);
    ck_assert_int_eq(st.st_mode & 0777, 0600);
    int fd = ptt_fd_of(map_path);
    ck_assert_int_ge(fd, 0);
    ck_assert(fcntl(fd, F_GETFD) & FD_CLOEXEC);
    ck_assert(fcntl(fd, F_GETFL) & O_APPEND);
    fn1 t[N];
    for (int i = 0; i < (int)N; i++) {
        t[i] = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, names[i]);
        ck_assert_ptr_nonnull(t[i]);
        /* each line is in the file when wrap returns */
        static struct line lines[16];
        ck_assert_uint_eq(read_lines(map_path, lines, 16), (size_t)i + 1);
    }
    static struct line lines[16];
    ck_assert_uint_eq(read_lines(map_path, lines, 16), N);
    for (int i = 0; i < (int)N; i++) {
        ck_assert_uint_eq(lines[i].start, (uintptr_t)t[i]);
        ck_assert_uint_eq(lines[i].size, pt->layout.size);
        ck_assert_int_eq(t[i](i), i + 1);
        if (want[i])
            ck_assert_str_eq(lines[i].name, want[i]);
    }
    /* an empty name gets the placeholder, never a blank name */
    char anon[64];
    snprintf(anon, sizeof anon, "[anonymous@0x%" PRIxPTR "]", (uintptr_t)t[5]);
    ck_assert_str_eq(lines[5].name, anon);
    /* long names: exactly the limit, whole characters, the cut marker */
    size_t cut = strlen(PT_PERF_NAME_CUT);
    size_t la = strlen(lines[N - 2].name), lu = strlen(lines[N - 1].name);
    ck_assert_uint_eq(la, PT_PERF_NAME_MAX);
    ck_assert_str_eq(lines[N - 2].name + la - cut, PT_PERF_NAME_CUT);
    ck_assert_uint_le(lu, PT_PERF_NAME_MAX);
    ck_assert_uint_gt(lu, PT_PERF_NAME_MAX - 3 - cut);
    ck_assert_str_eq(lines[N - 1].name + lu - cut, PT_PERF_NAME_CUT);
    ck_assert_uint_eq((lu - cut) % 3, 0); /* no character split */
    ck_assert_int_eq(memcmp(lines[N - 1].name, long_utf8, lu - cut), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_int_eq(stat(map_path, &st), 0); /* perf reads it after we exit */
}
END_TEST

START_TEST(name_policy_limits)
{
    char out[PT_PERF_NAME_MAX + 1];
    static char in[PT_PERF_NAME_MAX + 2];
    /* exactly the limit: kept whole */
    memset(in, 'x', PT_PERF_NAME_MAX);
    in[PT_PERF_NAME_MAX] = 0;
    ck_assert_uint_eq(pt_perf_name(out, in), PT_PERF_NAME_MAX);
    ck_assert_int_eq(memcmp(out, in, PT_PERF_NAME_MAX), 0);
    /* one more: cut with the marker */
    in[PT_PERF_NAME_MAX] = 'y';
    in[PT_PERF_NAME_MAX + 1] = 0;
    ck_assert_uint_eq(pt_perf_name(out, in), PT_PERF_NAME_MAX);
    ck_assert_str_eq(out + PT_PERF_NAME_MAX - 3, PT_PERF_NAME_CUT);
    /* an escape never split: newlines up to the limit */
    memset(in, '\n', PT_PERF_NAME_MAX + 1);
    size_t n = pt_perf_name(out, in);
    ck_assert_uint_le(n, PT_PERF_NAME_MAX);
    ck_assert_uint_eq((n - 3) % 4, 0);
    ck_assert(strchr(out, '\n') == NULL);
}
END_TEST

START_TEST(planted_map_is_refused)
{
    char victim[200];
    const char *tmp = getenv("TMPDIR");
    snprintf(victim, sizeof victim, "%s/perftramp-victim-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    int fd = mkstemp(victim);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, "precious", 8), 8);
    close(fd);
    ck_assert_int_eq(symlink(victim, map_path), 0);
    perftramp *pt = open_map();
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), ELOOP);
    fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "x");
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(t(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
    struct stat st;
    ck_assert_int_eq(stat(victim, &st), 0);
    ck_assert_int_eq(st.st_size, 8);
    unlink(map_path);
    unlink(victim);

    ck_assert_int_eq(mkfifo(map_path, 0600), 0);
    pt = open_map(); /* must not block on the FIFO */
    int e = perftramp_output_error(pt, PERFTRAMP_PERF_MAP);
    ck_assert_msg(e == ENXIO || e == EPERM, "FIFO: %s", strerror(e));
    ck_assert_int_eq(perftramp_close(pt), 0);
    unlink(map_path);

    if (geteuid() == 0) {
        FILE *f = fopen(map_path, "w");
        fputs("theirs\n", f);
        fclose(f);
        ck_assert_int_eq(chown(map_path, 65534, 65534), 0);
        pt = open_map();
        ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), EPERM);
        ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "x"));
        ck_assert_int_eq(perftramp_close(pt), 0);
        ck_assert_int_eq(stat(map_path, &st), 0);
        ck_assert_int_eq(st.st_size, 7);
    } else {
        printf("planted_map_is_refused: not root, foreign-owner case not planted\n");
    }
}
END_TEST

/* Appends: a second context (or another library) in the same process
 * shares the file, nothing is truncated. */
START_TEST(two_writers_append)
{
    perftramp *a = open_map(), *b = open_map();
    for (int i = 0; i < 50; i++) {
        ck_assert_ptr_nonnull(perftramp_wrap(a, (perftramp_fn)plus_one, "a::f"));
        ck_assert_ptr_nonnull(perftramp_wrap(b, (perftramp_fn)plus_one, "b::f"));
    }
    static struct line lines[128];
    ck_assert_uint_eq(read_lines(map_path, lines, 128), 100);
    ck_assert_int_eq(perftramp_close(a), 0);
    ck_assert_int_eq(perftramp_close(b), 0);
}
END_TEST

/* Writes one line to our own map path, stamped `age_s` seconds ago. */
static void plant_line(const char *line, int age_s)
{
    int fd = open(map_path, O_WRONLY | O_CREAT | O_APPEND, 0600);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, line, strlen(line)), (ssize_t)strlen(line));
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    now.tv_sec -= age_s;
    struct timespec times[2] = {now, now};
    ck_assert_int_eq(futimens(fd, times), 0);
    close(fd);
}

START_TEST(stale_map_of_a_dead_pid_is_emptied)
{
    /* a map from before this process started: a dead process had our pid */
    plant_line("7f0000001000 10 dead::stranger\n", 3600);
    perftramp *pt = open_map();
    fn1 f = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "ours::f");
    ck_assert_ptr_nonnull(f);
    static struct line lines[4];
    ck_assert_uint_eq(read_lines(map_path, lines, 4), 1);
    ck_assert_str_eq(lines[0].name, "ours::f");
    ck_assert_uint_eq(lines[0].start, (uintptr_t)f);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(map_shared_with_a_live_writer_is_kept)
{
    /* written since we started: another JIT of this process */
    plant_line("7f0000001000 10 other_jit::g\n", 0);
    perftramp *pt = open_map();
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "ours::f"));
    static struct line lines[4];
    ck_assert_uint_eq(read_lines(map_path, lines, 4), 2);
    ck_assert_str_eq(lines[0].name, "other_jit::g");
    ck_assert_str_eq(lines[1].name, "ours::f");
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(efbig_disables_map)
{
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        int bad = 0;
        perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = PERFTRAMP_PERF_MAP});
        if (!pt || !perftramp_wrap(pt, (perftramp_fn)plus_one, "fits"))
            _exit(100);
        char own[64];
        map_path_for(getpid(), own, sizeof own);
        struct stat st;
        stat(own, &st);
        struct rlimit rl = {.rlim_cur = (rlim_t)st.st_size + 4, .rlim_max = RLIM_INFINITY};
        setrlimit(RLIMIT_FSIZE, &rl);
        fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "does not fit");
        if (!t || t(1) != 2)
            bad |= 1;
        int e = perftramp_output_error(pt, PERFTRAMP_PERF_MAP);
        if (e != EFBIG && e != ENOSPC)
            bad |= 2;
        if (perftramp_close(pt) != 0)
            bad |= 4;
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    char own[64];
    map_path_for(child, own, sizeof own);
    unlink(own);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
}
END_TEST

START_TEST(fork_child_gets_own_map)
{
    perftramp *pt = open_map();
    fn1 a = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "live::a");
    fn1 gone = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "released::b");
    ck_assert_int_eq(perftramp_release(pt, (perftramp_fn)gone), 0);
    size_t before_len, after_len;
    uint8_t *before = ptt_read_file(map_path, &before_len);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int bad = 0;
        if (perftramp_after_fork_child(pt) != 0)
            bad |= 1;
        if (a(1) != 2)
            bad |= 2;
        if (!perftramp_wrap(pt, (perftramp_fn)plus_one, "child::c"))
            bad |= 4;
        if (perftramp_close(pt) != 0)
            bad |= 8;
        free(before); /* the parent's copy: the child frees it too (valgrind checks children) */
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    char cpath[64];
    map_path_for(child, cpath, sizeof cpath);
    static struct line lines[8];
    size_t n = read_lines(cpath, lines, 8);
    unlink(cpath);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status 0x%x", status);
    ck_assert_uint_eq(n, 2);
    ck_assert_str_eq(lines[0].name, "live::a");
    ck_assert_uint_eq(lines[0].start, (uintptr_t)a);
    ck_assert_str_eq(lines[1].name, "child::c");
    uint8_t *after = ptt_read_file(map_path, &after_len);
    ck_assert_uint_eq(after_len, before_len);
    ck_assert_int_eq(memcmp(after, before, before_len), 0);
    free(before);
    free(after);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

static Suite *perfmap_suite(void)
{
    Suite *s = suite_create("perfmap");
    TCase *t = tcase_create("perfmap");
    tcase_add_checked_fixture(t, setup, teardown);
    tcase_add_test(t, lines_and_hostile_names);
    tcase_add_test(t, name_policy_limits);
    tcase_add_test(t, planted_map_is_refused);
    tcase_add_test(t, two_writers_append);
    tcase_add_test(t, stale_map_of_a_dead_pid_is_emptied);
    tcase_add_test(t, map_shared_with_a_live_writer_is_kept);
    tcase_add_test(t, efbig_disables_map);
    tcase_add_test(t, fork_child_gets_own_map);
    suite_add_tcase(s, t);
    return s;
}

int main(void)
{
    int failed = pt_check_run(perfmap_suite());
    return failed ? 1 : 0;
}
