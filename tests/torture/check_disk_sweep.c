/* SPDX-License-Identifier: MIT */
/* Full disks and vanishing directories with every output on (perf map,
 * jitdump, ELF arenas, GDB, unwinder), swept: ENOSPC on a tmpfs of N
 * pages for N from 1 to 96 (all the files share it), EFBIG after N bytes
 * of each file (RLIMIT_FSIZE, SIGXFSZ ignored) for N from 0 to 3,000, and
 * the ELF directory made read-only (a read-only bind mount) or removed
 * while the process runs.  In every case: the process goes on, every
 * trampoline keeps working, each output that stopped says so exactly once
 * on stderr and in perftramp_output_error, and what it wrote before stays
 * valid (the jitdump for the validator, the scanner and `perftramp check`,
 * the map whole line by line, each ELF arena complete for `perftramp
 * check`).  Each case runs in a child (limits, mounts) that reports back
 * through a pipe. */
#define _GNU_SOURCE
#include "crash_check.h"
#include "dumpscan.h"
#include "read/elf_arena_check.h"
#include "read/jitdump_reader.h"
#include "torture.h"

#include <check.h>
#include "../lib/check_run.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_WRAPS 2500
#define ALL_OUTPUTS (PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP | PERFTRAMP_UNWIND | PERFTRAMP_GDB | PERFTRAMP_ELF)
#define FILE_OUTPUTS (PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP | PERFTRAMP_ELF)

struct report {
    int ok, skipped;
    char why[600];
    int error[3];        /* perf map, jitdump, ELF: the errno that stopped each (0: none) */
    int said[3];         /* lines on stderr saying so */
    long wraps;
    size_t loads, lines, arenas, arenas_complete;
};

static const unsigned file_bits[3] = {PERFTRAMP_PERF_MAP, PERFTRAMP_JITDUMP, PERFTRAMP_ELF};
static const char *const file_words[3] = {"perfmap", "jitdump", "elf"};

__attribute__((format(printf, 2, 3))) static void child_fail(struct report *r, const char *fmt, ...)
{
    if (!r->ok)
        return;
    r->ok = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

/* Runs one case in a child (its limits and mounts stay there) and returns
 * what it found. */
typedef void (*case_fn)(long arg, const char *dir, struct report *r);

static void run_case(case_fn fn, long arg, const char *dir, struct report *r)
{
    int pfd[2];
    ck_assert_int_eq(pipe(pfd), 0);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        struct report mine = {.ok = 1};
        close(pfd[0]);
        fn(arg, dir, &mine);
        tt_send_report(pfd[1], &mine, sizeof mine);
    }
    close(pfd[1]);
    tt_read_report(pfd[0], child, r, sizeof *r);
}

static long target(long a, long b)
{
    return a * 3 + b;
}
typedef long (*fn2)(long, long);

/* Wraps while `more` says so (up to MAX_WRAPS), checking each output's
 * state after each wrap; calls every trampoline at the end. */
static perftramp_fn tr[MAX_WRAPS];

static void wrap_some(perftramp *pt, struct report *r, long upto, bool until_all_failed)
{
    char name[64];
    for (long i = r->wraps; i < upto && i < MAX_WRAPS; i++) {
        snprintf(name, sizeof name, "disk::sweep_%ld", i);
        tr[i] = i % 3 ? perftramp_wrap(pt, (perftramp_fn)target, name)
                      : perftramp_wrap_at(pt, (perftramp_fn)target, name, "sweep.tiny", (unsigned)i + 1);
        if (!tr[i]) {
            child_fail(r, "wrap %ld failed: %s", i, strerror(errno));
            return;
        }
        r->wraps = i + 1;
        bool all = true;
        for (int k = 0; k < 3; k++) {
            int e = perftramp_output_error(pt, file_bits[k]);
            if (r->error[k] && e != r->error[k])
                child_fail(r, "%s: error %d, then %d", file_words[k], r->error[k], e);
            r->error[k] = e;
            all &= e != 0;
        }
        if (until_all_failed && all && i > 50)
            break;
    }
    for (long i = 0; i < r->wraps; i++)
        if (((fn2)tr[i])(i, 1) != i * 3 + 1) {
            child_fail(r, "trampoline %ld stopped working", i);
            return;
        }
}

/* stderr goes to a pipe (the files may sit on a full disk, and
 * RLIMIT_FSIZE limits every file): one line per output that stopped. */
static int capture_stderr(void)
{
    int p[2];
    if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
        return -1;
    dup2(p[1], 2);
    close(p[1]);
    return p[0];
}

static void count_said(int fd, struct report *r)
{
    char buf[8192];
    ssize_t n = read(fd, buf, sizeof buf - 1);
    buf[n > 0 ? n : 0] = 0;
    for (int k = 0; k < 3; k++) {
        char what[64];
        snprintf(what, sizeof what, "perftramp: the %s output stopped: ", file_words[k]);
        for (char *p = buf; (p = strstr(p, what)); p++)
            r->said[k]++;
    }
}

/* What the outputs left in dir (the dump, the arenas in dir/elf) and
 * /tmp/perf-<pid>.map, checked as they are after the failures; with_cli:
 * by `perftramp check` too (not where /tmp is the small tmpfs: a process
 * started there under valgrind finds no room for its log, and the
 * library's validator, which the command runs, has read the dump). */
static void check_left(const char *dir, bool with_cli, struct report *r)
{
    char dump[4200], map[64], edir[4200];
    snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    snprintf(edir, sizeof edir, "%s/elf", dir);
    struct stat st;
    if (stat(dump, &st) == 0 && st.st_size > 0) {
        struct ds_dump_stats ds;
        if (ds_scan_jitdump(dump, NULL, NULL, &ds) != 0)
            child_fail(r, "dump: %s", ds.error);
        else if (ds.torn_tail || ds.uncommitted)
            child_fail(r, "dump: a torn or uncommitted tail in a live process (%zu, %zu bytes)", ds.torn_tail,
                       ds.uncommitted);
        r->loads = ds.loads;
        char why[300];
        struct pt_jd_summary sum;
        if (ds_validate_jitdump(dump, &sum, why, sizeof why) != 0)
            child_fail(r, "validator: %s", why);
        const char *b = getenv("PT_BUILDDIR");
        char cli[4200], text[4096];
        snprintf(cli, sizeof cli, "%s/tools/perftramp", b ? b : ".");
        int rc = with_cli ? crash_run((char *const[]){cli, "check", dump, NULL}, text, sizeof text) : 0;
        if (rc != 0)
            child_fail(r, "perftramp check %s: exit %d: %.300s", dump, rc, text);
    }
    struct ds_map_stats ms;
    if (ds_scan_map(map, NULL, NULL, &ms) == -1)
        child_fail(r, "map: %s", ms.error);
    else if (ms.torn_tail)
        child_fail(r, "map: a torn last line of %zu bytes", ms.torn_tail);
    r->lines = ms.lines;
    DIR *d = opendir(edir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        char path[4500];
        snprintf(path, sizeof path, "%s/%s", edir, e->d_name);
        size_t len;
        uint8_t *data = tt_slurp(path, &len);
        struct pt_arena_report ar;
        pt_elf_arena_check(data ? data : (const uint8_t *)"", data ? len : 0, &ar);
        free(data);
        r->arenas++;
        r->arenas_complete += ar.state == PT_ARENA_COMPLETE;
        if (ar.state != PT_ARENA_COMPLETE)
            child_fail(r, "%s: %s: %s (a live process's arena)", path, pt_arena_state_name(ar.state), ar.why);
    }
    if (d)
        closedir(d);
}

static perftramp *open_all(const char *dir, struct report *r)
{
    char edir[4200];
    snprintf(edir, sizeof edir, "%s/elf", dir);
    if (mkdir(edir, 0700) < 0 && errno != EEXIST && errno != ENOSPC) {
        child_fail(r, "mkdir %s: %s", edir, strerror(errno));
        return NULL;
    }
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = ALL_OUTPUTS, .jitdump_dir = dir,
                                                               .elf_dir = edir});
    if (!pt)
        child_fail(r, "perftramp_open: %s", strerror(errno));
    return pt;
}

/* Each output either works or stopped with `want` (or ENOSPC/EFBIG's
 * cousin for a directory that could not be made), and said so once. */
static void assert_said_once(const struct report *r, const char *what)
{
    for (int k = 0; k < 3; k++) {
        ck_assert_msg(r->said[k] == (r->error[k] != 0), "%s: %s stopped with errno %d and said so %d times", what,
                      file_words[k], r->error[k], r->said[k]);
    }
}

/* ---- ENOSPC: a tmpfs of N pages over /tmp, in the child's own mount namespace ---- */

static void enospc_child(long pages, const char *dir, struct report *r)
{
    (void)dir; /* /tmp, mounted over */
    char opts[64];
    snprintf(opts, sizeof opts, "size=%ld,mode=1777", pages * 4096);
    if (unshare(CLONE_NEWNS) != 0 || mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
        mount("tmpfs", "/tmp", "tmpfs", 0, opts) != 0) {
        r->skipped = 1;
        snprintf(r->why, sizeof r->why, "cannot mount a small tmpfs here: %s", strerror(errno));
        return;
    }
    int err = capture_stderr();
    perftramp *pt = open_all("/tmp", r);
    if (!pt)
        return;
    wrap_some(pt, r, MAX_WRAPS, true);
    check_left("/tmp", false, r);
    count_said(err, r);
    for (int k = 0; k < 3; k++)
        if (r->error[k] && r->error[k] != ENOSPC)
            child_fail(r, "%s stopped with %s, want ENOSPC", file_words[k], strerror(r->error[k]));
    perftramp_close(pt);
}

START_TEST(enospc_sweep)
{
    static const long sizes[] = {1, 2, 3, 4, 5, 6, 7, 8, 10, 12, 14, 16, 20, 24, 32, 40, 48, 56, 64, 80, 96};
    size_t stopped[3] = {0}, cases = 0, loads = 0, lines = 0, arenas = 0;
    for (size_t c = 0; c < sizeof sizes / sizeof sizes[0]; c++) {
        struct report r;
        run_case(enospc_child, sizes[c], "/tmp", &r);
        if (r.skipped) {
            printf("SKIP: ENOSPC sweep: %s\n", r.why);
            printf("PROOF: disk.enospc-sweep not-run %s\n", r.why);
            return;
        }
        char what[64];
        snprintf(what, sizeof what, "tmpfs of %ld pages", sizes[c]);
        ck_assert_msg(r.ok, "%s: %s", what, r.why);
        assert_said_once(&r, what);
        for (int k = 0; k < 3; k++)
            stopped[k] += r.error[k] != 0;
        cases++;
        loads += r.loads;
        lines += r.lines;
        arenas += r.arenas_complete;
    }
    /* the small disks stop every file output */
    ck_assert_uint_gt(stopped[0], 0);
    ck_assert_uint_gt(stopped[1], 0);
    ck_assert_uint_gt(stopped[2], 0);
    printf("PROOF: disk.enospc-sweep proven sizes %zu/%zu: tmpfs of 1 to 96 pages, every output on: the map stopped "
           "in %zu, the jitdump in %zu, the ELF arenas in %zu, each said so once (stderr, perftramp_output_error); "
           "%zu complete LOADs, %zu whole lines, %zu complete arenas left, all valid; every trampoline worked\n",
           cases, cases, stopped[0], stopped[1], stopped[2], loads, lines, arenas);
}
END_TEST

/* ---- EFBIG after N bytes of each file ---- */

static void efbig_child(long bytes, const char *dir, struct report *r)
{
    int err = capture_stderr();
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {.rlim_cur = (rlim_t)bytes, .rlim_max = RLIM_INFINITY};
    char edir[4200];
    snprintf(edir, sizeof edir, "%s/elf", dir);
    mkdir(edir, 0700);
    setrlimit(RLIMIT_FSIZE, &rl);
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = ALL_OUTPUTS, .jitdump_dir = dir,
                                                               .elf_dir = edir});
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    if (!pt) {
        /* the header (40 bytes) does not fit: the open fails, with the
         * errno (the map it opened first stays, empty) */
        int e = errno;
        unlink(map);
        if (bytes < 40 && e == EFBIG) {
            r->error[1] = EFBIG;
            return;
        }
        child_fail(r, "perftramp_open: %s", strerror(e));
        return;
    }
    wrap_some(pt, r, 300, true);
    rl.rlim_cur = RLIM_INFINITY;
    setrlimit(RLIMIT_FSIZE, &rl); /* the checks write too */
    check_left(dir, true, r);
    count_said(err, r);
    for (int k = 0; k < 3; k++)
        if (r->error[k] && r->error[k] != EFBIG)
            child_fail(r, "%s stopped with %s, want EFBIG", file_words[k], strerror(r->error[k]));
    perftramp_close(pt);
    unlink(map);
}

START_TEST(efbig_sweep)
{
    size_t cases = 0, open_refused = 0, loads = 0, lines = 0;
    for (long bytes = 0; bytes <= 3000; bytes += bytes < 200 ? 13 : 97) {
        char *dir = tt_mkdtemp();
        struct report r;
        run_case(efbig_child, bytes, dir, &r);
        char what[64];
        snprintf(what, sizeof what, "RLIMIT_FSIZE %ld", bytes);
        ck_assert_msg(r.ok, "%s: %s", what, r.why);
        if (r.wraps == 0) {
            open_refused++;
        } else {
            assert_said_once(&r, what);
            ck_assert_msg(r.error[0] && r.error[1] && r.error[2], "%s: an output never stopped", what);
        }
        cases++;
        loads += r.loads;
        lines += r.lines;
        tt_rmtree(dir);
        free(dir);
    }
    printf("PROOF: disk.efbig-sweep proven limits %zu/%zu: RLIMIT_FSIZE from 0 to 3000 bytes, every output on: "
           "every file output stopped with EFBIG and said so once (%zu limits below the jitdump header fail the "
           "open instead); %zu complete LOADs and %zu whole lines left, all valid; every trampoline worked\n",
           cases, cases, open_refused, loads, lines);
}
END_TEST

/* ---- the ELF directory made read-only, or removed, mid-run ----
 *
 * Read-only: the directory is a tmpfs of its own, remounted read-only
 * after perftramp_open and before the first arena (Linux refuses to make
 * a file system read-only while a file on it is open for writing, EBUSY:
 * once an arena exists, its directory cannot become read-only under it).
 * Removed: after 200 wraps, inside the first arena; the next arena needs
 * a new file there. */
static void dir_child(long remove_it, const char *dir, struct report *r)
{
    char edir[4200];
    snprintf(edir, sizeof edir, "%s/elf", dir);
    if (!remove_it && (mkdir(edir, 0700) != 0 || unshare(CLONE_NEWNS) != 0 ||
                       mount("none", "/", "none", MS_REC | MS_PRIVATE, NULL) != 0 ||
                       mount("tmpfs", edir, "tmpfs", 0, "size=4m,mode=0700") != 0)) {
        r->skipped = 1;
        snprintf(r->why, sizeof r->why, "cannot mount a tmpfs of its own here: %s", strerror(errno));
        return;
    }
    int err = capture_stderr();
    perftramp *pt = open_all(dir, r);
    if (!pt)
        return;
    if (remove_it) {
        wrap_some(pt, r, 200, false);
        tt_rmtree(edir); /* the dump's directory stays: only the arenas' goes */
    } else if (mount("none", edir, "none", MS_REMOUNT | MS_RDONLY, "size=4m,mode=0700") != 0) {
        r->skipped = 1;
        snprintf(r->why, sizeof r->why, "cannot remount %.300s read-only: %s", edir, strerror(errno));
        return;
    }
    /* past the first arena's slots: the next arena needs a new file */
    wrap_some(pt, r, MAX_WRAPS, false);
    int want = remove_it ? ENOENT : EROFS;
    if (r->error[2] != want)
        child_fail(r, "elf: error %d (%s), want %s", r->error[2], strerror(r->error[2]), strerror(want));
    if (r->error[0] || r->error[1])
        child_fail(r, "the map (%d) or the jitdump (%d) stopped: their files were open before", r->error[0],
                   r->error[1]);
    check_left(dir, true, r);
    count_said(err, r);
    perftramp_close(pt);
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    unlink(map);
}

START_TEST(elf_dir_read_only_or_removed)
{
    for (int remove_it = 0; remove_it <= 1; remove_it++) {
        char *dir = tt_mkdtemp();
        struct report r;
        run_case(dir_child, remove_it, dir, &r);
        tt_rmtree(dir);
        free(dir);
        if (r.skipped) {
            printf("SKIP: %s\n", r.why);
            printf("PROOF: disk.dir-gone not-run %s\n", r.why);
            return;
        }
        const char *what = remove_it ? "ELF directory removed" : "ELF directory read-only";
        ck_assert_msg(r.ok, "%s: %s", what, r.why);
        assert_said_once(&r, what);
        printf("%s mid-run: ELF arenas stopped with %s after %ld wraps in all, said once; map and jitdump went on "
               "(%zu lines, %zu LOADs); every trampoline worked\n",
               what, strerror(r.error[2]), r.wraps, r.lines, r.loads);
    }
    printf("PROOF: disk.dir-gone proven the ELF directory made read-only (EROFS) and removed (ENOENT) mid-run: the "
           "arenas stopped and said so once, the other outputs and every trampoline went on, what was written "
           "stayed valid\n");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("disk-sweep");
    TCase *tc = tcase_create("sweep");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, enospc_sweep);
    tcase_add_test(tc, efbig_sweep);
    tcase_add_test(tc, elf_dir_read_only_or_removed);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
