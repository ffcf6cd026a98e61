/* SPDX-License-Identifier: MIT */
/* fork() while other threads wrap and release.  With PERFTRAMP_ATFORK the
 * prepare handler holds the context lock across the fork, so the child
 * inherits a consistent context; perftramp_after_fork_child (run by the
 * handler) gives it its own jit-<pid>.dump and perf-<pid>.map holding
 * exactly the trampolines live in it.  Checked: the child's files are
 * valid and agree with each other; every trampoline they list works in
 * the child and reaches the target its name says; the parent's files hold
 * nothing of the child's and no entry twice. */
#define _GNU_SOURCE
#include "dumpscan.h"
#include "read/jitdump_reader.h"
#include "torture.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N_THREADS 4
#define WINDOW 8
#define MAX_WRAPS 100000

static perftramp *pt;
static atomic_bool stop;
static atomic_long wraps_done[N_THREADS];
static char *dir;

struct worker {
    unsigned id;
    int failures;
    char why[160];
};

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    perftramp_fn live[WINDOW] = {0};
    char name[48];
    for (long i = 0; i < MAX_WRAPS && !atomic_load(&stop); i++) {
        perftramp_fn *slot = &live[i % WINDOW];
        if (*slot && perftramp_release(pt, *slot) != 0) {
            snprintf(w->why, sizeof w->why, "release: %s", strerror(errno));
            w->failures++;
            break;
        }
        snprintf(name, sizeof name, "fork::t%u_w%ld", w->id, i);
        *slot = perftramp_wrap(pt, TT_FN(w->id + (unsigned)i), name);
        if (!*slot || tt_call(*slot, i, 3) != tt_expect(w->id + (unsigned)i, i, 3)) {
            snprintf(w->why, sizeof w->why, "wrap %ld: %s", i, *slot ? "wrong target" : strerror(errno));
            w->failures++;
            break;
        }
        atomic_fetch_add(&wraps_done[w->id], 1);
    }
    return NULL;
}

/* name -> (thread, index); the child's own trampolines are "child::<i>" */
static bool parse_fork_name(const char *s, size_t len, unsigned *t, long *i)
{
    char buf[64];
    int used = 0;
    if (len >= sizeof buf)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    return sscanf(buf, "fork::t%u_w%ld%n", t, i, &used) == 2 && (size_t)used == len && *t < N_THREADS;
}

/* ---- in the child: no Check assertions, a reason on failure ---------- */

struct child_scan {
    uint64_t addr[N_THREADS * WINDOW + 64];
    char names[N_THREADS * WINDOW + 64][48];
    size_t n, pre_fork, own;
    char why[200];
};

static int child_load(void *arg, const struct ds_load *l)
{
    struct child_scan *c = arg;
    if (c->n == sizeof c->addr / sizeof c->addr[0]) {
        snprintf(c->why, sizeof c->why, "more LOADs than can be live");
        return -1;
    }
    unsigned t;
    long i;
    size_t len = strlen(l->name);
    if (parse_fork_name(l->name, len, &t, &i)) {
        /* a pre-fork trampoline: it must work here and reach its target */
        if (tt_call((perftramp_fn)(uintptr_t)l->code_addr, 5, 6) != tt_expect(t + (unsigned)i, 5, 6)) {
            snprintf(c->why, sizeof c->why, "%s at %#llx does not reach its target in the child", l->name,
                     (unsigned long long)l->code_addr);
            return -1;
        }
        c->pre_fork++;
    } else if (strncmp(l->name, "child::", 7) == 0) {
        c->own++;
    } else {
        snprintf(c->why, sizeof c->why, "unexpected LOAD '%.60s'", l->name);
        return -1;
    }
    c->addr[c->n] = l->code_addr;
    snprintf(c->names[c->n], sizeof c->names[0], "%s", l->name);
    c->n++;
    return 0;
}

struct map_vs_dump {
    struct child_scan *c;
    size_t k;
    char why[200];
};

static int child_map_line(void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
    struct map_vs_dump *m = arg;
    (void)size;
    if (m->k >= m->c->n || start != m->c->addr[m->k] || strlen(m->c->names[m->k]) != len ||
        memcmp(name, m->c->names[m->k], len) != 0) {
        snprintf(m->why, sizeof m->why, "map line %zu '%.*s' does not match the dump", m->k, (int)(len > 60 ? 60 : len),
                 name);
        return -1;
    }
    m->k++;
    return 0;
}

/* Runs in the child; returns NULL when all is well. */
static const char *child_checks(char *why, size_t n)
{
    /* A map left at our path by a dead process that had this pid is
     * emptied by the library when the child opens its own (perfmap.c):
     * the line-by-line comparison below relies on that. */
    /* the child is single-threaded: the workers did not come along */
    for (int i = 0; i < 3; i++) {
        char name[32];
        snprintf(name, sizeof name, "child::%d", i);
        perftramp_fn t = perftramp_wrap(pt, TT_FN(7), name);
        if (!t || tt_call(t, 1, 1) != tt_expect(7, 1, 1))
            return "wrap in the child failed";
    }
    if (perftramp_output_error(pt, PERFTRAMP_JITDUMP) || perftramp_output_error(pt, PERFTRAMP_PERF_MAP))
        return "an output failed in the child";
    char dump[4200], map[64];
    snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    static struct child_scan c;
    struct ds_dump_stats ds;
    if (ds_scan_jitdump(dump, child_load, &c, &ds) != 0) {
        snprintf(why, n, "child dump: %s", c.why[0] ? c.why : ds.error);
        return why;
    }
    if (ds.pid != (uint32_t)getpid())
        return "the child's dump carries another pid";
    /* each worker had WINDOW-1 or WINDOW trampolines live at the fork */
    if (c.own != 3 || c.pre_fork < N_THREADS * (WINDOW - 1) || c.pre_fork > N_THREADS * WINDOW) {
        snprintf(why, n, "child dump: %zu pre-fork LOADs (want %d..%d live ones), %zu own", c.pre_fork,
                 N_THREADS * (WINDOW - 1), N_THREADS * WINDOW, c.own);
        return why;
    }
    char vwhy[300];
    struct pt_jd_summary sum;
    if (ds_validate_jitdump(dump, &sum, vwhy, sizeof vwhy) != 0) {
        snprintf(why, n, "child dump, validator: %.150s", vwhy);
        return why;
    }
    struct map_vs_dump m = {&c, 0, ""};
    struct ds_map_stats ms;
    if (ds_scan_map(map, child_map_line, &m, &ms) != 0 || ms.torn_tail || m.k != c.n) {
        snprintf(why, n, "child map: %s (%zu of %zu lines)", m.why[0] ? m.why : ms.error, m.k, c.n);
        return why;
    }
    if (perftramp_close(pt) != 0)
        return "close in the child failed";
    unlink(map);
    return NULL;
}

/* ---- in the parent --------------------------------------------------- */

struct parent_scan {
    uint8_t *seen[N_THREADS];
    pid_t child;
    const char *what;
};

static int parent_entry(struct parent_scan *p, const char *name, size_t len)
{
    unsigned t;
    long i;
    ck_assert_msg(parse_fork_name(name, len, &t, &i), "%s: '%.*s' is not the parent's", p->what,
                  (int)(len > 60 ? 60 : len), name);
    ck_assert_msg(p->seen[t][i]++ == 0, "%s: '%.*s' twice", p->what, (int)len, name);
    return 0;
}

static int parent_load(void *arg, const struct ds_load *l)
{
    struct parent_scan *p = arg;
    ck_assert_uint_eq(l->pid, (uint32_t)getpid());
    return parent_entry(p, l->name, strlen(l->name));
}

static int parent_line(void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
    (void)start;
    (void)size;
    return parent_entry(arg, name, len);
}

START_TEST(fork_while_threads_wrap)
{
    dir = tt_mkdtemp();
    struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP, .jitdump_dir = dir,
                                  .flags = PERFTRAMP_ATFORK};
    pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "open: %s", strerror(errno));
    atomic_store(&stop, false);
    pthread_t th[N_THREADS];
    static struct worker w[N_THREADS]; /* outlives a failed assertion while threads run */
    for (unsigned t = 0; t < N_THREADS; t++) {
        w[t] = (struct worker){.id = t};
        atomic_store(&wraps_done[t], 0);
        ck_assert_int_eq(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    /* fork in the thick of it: every worker has filled its window */
    pid_t children[3];
    for (int k = 0; k < 3; k++) {
        for (unsigned t = 0; t < N_THREADS; t++)
            while (atomic_load(&wraps_done[t]) < (k + 1) * 200 && !w[t].failures)
                sched_yield();
        int pfd[2];
        ck_assert_int_eq(pipe(pfd), 0);
        pid_t child = fork();
        ck_assert_int_ge(child, 0);
        if (child == 0) {
            char why[300];
            const char *bad = child_checks(why, sizeof why);
            if (bad) {
                ssize_t r = write(pfd[1], bad, strlen(bad));
                (void)r;
                _exit(1);
            }
            _exit(0);
        }
        close(pfd[1]);
        int status;
        char msg[300] = "";
        ssize_t r = read(pfd[0], msg, sizeof msg - 1);
        msg[r > 0 ? r : 0] = 0;
        close(pfd[0]);
        ck_assert_int_eq(waitpid(child, &status, 0), child);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %#x: %s", k, status, msg);
        children[k] = child;
    }
    atomic_store(&stop, true);
    for (unsigned t = 0; t < N_THREADS; t++) {
        ck_assert_int_eq(pthread_join(th[t], NULL), 0);
        ck_assert_msg(w[t].failures == 0, "worker %u: %s", t, w[t].why);
    }
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);

    /* the parent's files: every parent wrap exactly once, nothing else */
    char dump[4200], map[64];
    snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    long total = 0;
    struct parent_scan p = {.what = "parent dump"};
    for (unsigned t = 0; t < N_THREADS; t++) {
        p.seen[t] = calloc(MAX_WRAPS, 1);
        total += atomic_load(&wraps_done[t]);
    }
    struct ds_dump_stats ds;
    ck_assert_msg(ds_scan_jitdump(dump, parent_load, &p, &ds) == 0, "parent dump: %s", ds.error);
    ck_assert_uint_eq(ds.loads, (size_t)total);
    ck_assert_uint_eq(ds.torn_tail, 0);
    ck_assert_uint_eq(ds.closes, 1);
    char why[300];
    struct pt_jd_summary sum;
    ck_assert_msg(ds_validate_jitdump(dump, &sum, why, sizeof why) == 0, "parent dump, validator: %s", why);
    for (unsigned t = 0; t < N_THREADS; t++)
        memset(p.seen[t], 0, MAX_WRAPS);
    p.what = "parent map";
    struct ds_map_stats ms;
    ck_assert_msg(ds_scan_map(map, parent_line, &p, &ms) == 0, "parent map: %s", ms.error);
    ck_assert_uint_eq(ms.lines, (size_t)total);
    ck_assert_uint_eq(ms.torn_tail, 0);
    for (unsigned t = 0; t < N_THREADS; t++)
        free(p.seen[t]);
    printf("fork: 3 children forked while %d threads wrapped; parent wrote %ld entries, each once\n", N_THREADS,
           total);
    unlink(map);
    for (int k = 0; k < 3; k++) {
        snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)children[k]);
        unlink(map);
    }
    tt_rmtree(dir);
    free(dir);
}
END_TEST

/* The child's own file names are predictable too: whatever is planted at
 * /tmp/perf-<childpid>.map and <dir>/jit-<childpid>.dump before
 * perftramp_after_fork_child runs is refused like at open, the parent's
 * files are not touched, and pre-fork trampolines keep working. */
START_TEST(fork_child_paths_planted)
{
    dir = tt_mkdtemp();
    struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP, .jitdump_dir = dir};
    pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    perftramp_fn before = perftramp_wrap(pt, TT_FN(1), "fork::t0_w1");
    ck_assert_ptr_nonnull(before);
    char victim[4200], dump[4200], map[64];
    snprintf(victim, sizeof victim, "%s/victim", dir);
    snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(victim, "w");
    ck_assert_ptr_nonnull(f);
    fputs("precious", f);
    fclose(f);
    size_t dump_len, map_len;
    unsigned char *dump_before = tt_slurp(dump, &dump_len), *map_before = tt_slurp(map, &map_len);
    ck_assert(dump_before && map_before);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        char cdump[4200], cmap[64];
        snprintf(cdump, sizeof cdump, "%s/jit-%d.dump", dir, (int)getpid());
        snprintf(cmap, sizeof cmap, "/tmp/perf-%d.map", (int)getpid());
        int bad = 0;
        if (symlink(victim, cdump) != 0 || symlink(victim, cmap) != 0)
            _exit(100);
        if (perftramp_after_fork_child(pt) != 0)
            bad |= 1;
        if (perftramp_output_error(pt, PERFTRAMP_JITDUMP) != ELOOP ||
            perftramp_output_error(pt, PERFTRAMP_PERF_MAP) != ELOOP)
            bad |= 2;
        perftramp_fn mine = perftramp_wrap(pt, TT_FN(2), "child::0");
        if (tt_call(before, 3, 4) != tt_expect(1, 3, 4) || !mine || tt_call(mine, 3, 4) != tt_expect(2, 3, 4))
            bad |= 4;
        if (perftramp_close(pt) != 0)
            bad |= 8;
        unlink(cdump);
        unlink(cmap);
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    size_t len;
    unsigned char *v = tt_slurp(victim, &len);
    ck_assert_msg(v && len == 8 && memcmp(v, "precious", 8) == 0, "the victim was written through the child's path");
    free(v);
    unsigned char *d = tt_slurp(dump, &len);
    ck_assert_msg(d && len == dump_len && memcmp(d, dump_before, len) == 0, "the child wrote the parent's dump");
    free(d);
    d = tt_slurp(map, &len);
    ck_assert_msg(d && len == map_len && memcmp(d, map_before, len) == 0, "the child wrote the parent's map");
    free(d);
    free(dump_before);
    free(map_before);
    ck_assert_int_eq(tt_call(before, 1, 1), tt_expect(1, 1, 1));
    ck_assert_int_eq(perftramp_close(pt), 0);
    unlink(map);
    tt_rmtree(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("fork");
    TCase *tc = tcase_create("threads");
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, fork_while_threads_wrap);
    tcase_add_test(tc, fork_child_paths_planted);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
