/* SPDX-License-Identifier: MIT */
/* 8 threads x 20k wrap/call/release on one context.  Every trampoline
 * must reach its own target while others are created and released around
 * it; no slot may be handed out twice; with perf map and jitdump on, the
 * files must hold exactly one well-formed entry per wrap afterwards. */
#include "torture.h"
#include "dumpscan.h"
#include "read/jitdump_reader.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define N_THREADS 8
#define N_WRAPS 20000
#define WINDOW 16 /* trampolines each thread keeps live at once */

struct worker {
    perftramp *pt;
    unsigned id;
    uintptr_t *addrs;  /* address returned by each wrap */
    perftramp_fn live[WINDOW];
    int failures;
    char why[160];
};

static void tt_name(char *buf, size_t n, unsigned thread, unsigned i)
{
    snprintf(buf, n, "torture_t%u_w%u", thread, i);
}

/* After wrap i, live[j] holds the latest wrap with index == j (mod WINDOW). */
static unsigned window_index(unsigned i, unsigned j)
{
    return i - (i + WINDOW - j) % WINDOW;
}

static void *worker_main(void *arg)
{
    struct worker *w = arg;
    char name[64];
    for (unsigned i = 0; i < N_WRAPS && !w->failures; i++) {
        unsigned k = w->id + i;
        perftramp_fn *slot = &w->live[i % WINDOW];
        if (*slot && perftramp_release(w->pt, *slot) != 0) {
            snprintf(w->why, sizeof w->why, "release %u: errno %d", i, errno);
            w->failures++;
            break;
        }
        tt_name(name, sizeof name, w->id, i);
        *slot = perftramp_wrap(w->pt, TT_FN(k), name);
        if (!*slot) {
            snprintf(w->why, sizeof w->why, "wrap %u: errno %d", i, errno);
            w->failures++;
            break;
        }
        w->addrs[i] = (uintptr_t)*slot;
        /* every live trampoline of this thread still reaches its target */
        for (unsigned j = 0; j < WINDOW && j <= i; j++) {
            unsigned wi = window_index(i, j);
            unsigned kj = w->id + wi;
            long got = tt_call(w->live[j], (long)wi, (long)w->id);
            if (got != tt_expect(kj, (long)wi, (long)w->id)) {
                snprintf(w->why, sizeof w->why, "thread %u wrap %u: trampoline %p reached the wrong target", w->id,
                         wi, (void *)w->live[j]);
                w->failures++;
                break;
            }
        }
    }
    return NULL;
}

static int cmp_uptr(const void *a, const void *b)
{
    uintptr_t x = *(const uintptr_t *)a, y = *(const uintptr_t *)b;
    return x < y ? -1 : x > y;
}

/* Runs the workers; leaves each one's last WINDOW trampolines live. */
static void run_workers(perftramp *pt, struct worker *w)
{
    pthread_t th[N_THREADS];
    for (unsigned t = 0; t < N_THREADS; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].pt = pt;
        w[t].id = t;
        w[t].addrs = calloc(N_WRAPS, sizeof *w[t].addrs);
        ck_assert_ptr_nonnull(w[t].addrs);
        ck_assert_int_eq(pthread_create(&th[t], NULL, worker_main, &w[t]), 0);
    }
    for (unsigned t = 0; t < N_THREADS; t++)
        ck_assert_int_eq(pthread_join(th[t], NULL), 0);
    for (unsigned t = 0; t < N_THREADS; t++)
        ck_assert_msg(w[t].failures == 0, "%s", w[t].why);
    /* the trampolines live at the end are pairwise distinct */
    uintptr_t all[N_THREADS * WINDOW];
    size_t n = 0;
    for (unsigned t = 0; t < N_THREADS; t++)
        for (unsigned j = 0; j < WINDOW; j++)
            all[n++] = (uintptr_t)w[t].live[j];
    qsort(all, n, sizeof all[0], cmp_uptr);
    for (size_t i = 1; i < n; i++)
        ck_assert_msg(all[i] != all[i - 1], "slot %p handed out twice", (void *)all[i]);
    for (unsigned t = 0; t < N_THREADS; t++)
        for (unsigned j = 0; j < WINDOW; j++) {
            unsigned wi = window_index(N_WRAPS - 1, j);
            ck_assert_int_eq(tt_call(w[t].live[j], 3, 4), tt_expect(t + wi, 3, 4));
        }
}

START_TEST(threads_no_outputs)
{
    struct perftramp_options o = {0};
    perftramp *pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    struct worker w[N_THREADS];
    run_workers(pt, w);
    for (unsigned t = 0; t < N_THREADS; t++)
        for (unsigned j = 0; j < WINDOW; j++)
            ck_assert_int_eq(perftramp_release(pt, w[t].live[j]), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    for (unsigned t = 0; t < N_THREADS; t++)
        free(w[t].addrs);
}
END_TEST

/* Looks up a wrap by name: "torture_t<T>_w<I>". */
static bool parse_name(const char *name, size_t len, unsigned *t, unsigned *i)
{
    char buf[64];
    if (len >= sizeof buf)
        return false;
    memcpy(buf, name, len);
    buf[len] = 0;
    int used = 0;
    if (sscanf(buf, "torture_t%u_w%u%n", t, i, &used) != 2 || (size_t)used != len)
        return false;
    return *t < N_THREADS && *i < N_WRAPS;
}

struct seen {
    struct worker *w;
    uint8_t *map_seen, *dump_seen;
    char why[200];
    int bad;
};

static int on_map_line(void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
    struct seen *s = arg;
    unsigned t, i;
    (void)size;
    if (!parse_name(name, len, &t, &i)) {
        snprintf(s->why, sizeof s->why, "map: unexpected name '%.*s'", (int)(len > 60 ? 60 : len), name);
        return -1;
    }
    if (s->map_seen[t * N_WRAPS + i]++) {
        snprintf(s->why, sizeof s->why, "map: %.*s twice", (int)len, name);
        return -1;
    }
    if (start != s->w[t].addrs[i]) {
        snprintf(s->why, sizeof s->why, "map: %.*s at %#llx, wrap returned %#lx", (int)len, name,
                 (unsigned long long)start, (unsigned long)s->w[t].addrs[i]);
        return -1;
    }
    return 0;
}

static int on_load(void *arg, const struct ds_load *l)
{
    struct seen *s = arg;
    unsigned t, i;
    if (!parse_name(l->name, strlen(l->name), &t, &i)) {
        snprintf(s->why, sizeof s->why, "dump: unexpected name '%.60s'", l->name);
        return -1;
    }
    if (s->dump_seen[t * N_WRAPS + i]++) {
        snprintf(s->why, sizeof s->why, "dump: %s twice", l->name);
        return -1;
    }
    if (l->code_addr != s->w[t].addrs[i]) {
        snprintf(s->why, sizeof s->why, "dump: %s at %#llx, wrap returned %#lx", l->name,
                 (unsigned long long)l->code_addr, (unsigned long)s->w[t].addrs[i]);
        return -1;
    }
    return 0;
}

START_TEST(threads_with_outputs)
{
    char *dir = tt_mkdtemp();
    struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP, .jitdump_dir = dir};
    perftramp *pt = perftramp_open(&o);
    if (!pt && errno == ENOTSUP) {
        printf("SKIP threads_with_outputs: perf map/jitdump not in this build (ENOTSUP)\n");
        tt_rmtree(dir);
        free(dir);
        return;
    }
    ck_assert_msg(pt != NULL, "open: errno %d", errno);
    struct worker w[N_THREADS];
    run_workers(pt, w);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);

    char map[64], dump[4096];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    snprintf(dump, sizeof dump, "%s/jit-%d.dump", dir, (int)getpid());
    struct seen s = {.w = w};
    s.map_seen = calloc(N_THREADS * N_WRAPS, 1);
    s.dump_seen = calloc(N_THREADS * N_WRAPS, 1);
    struct ds_map_stats ms;
    int r = ds_scan_map(map, on_map_line, &s, &ms);
    ck_assert_msg(r == 0, "perf map: %s", r == -1 && s.why[0] ? s.why : ms.error);
    ck_assert_msg(ms.torn_tail == 0, "perf map: torn last line (%zu bytes)", ms.torn_tail);
    struct ds_dump_stats dst;
    r = ds_scan_jitdump(dump, on_load, &s, &dst);
    ck_assert_msg(r == 0, "jitdump: %s", s.why[0] ? s.why : dst.error);
    ck_assert_msg(dst.torn_tail == 0, "jitdump: %zu torn bytes at the end", dst.torn_tail);
    ck_assert_uint_eq(dst.loads, N_THREADS * N_WRAPS);
    ck_assert_uint_eq(ms.lines, N_THREADS * N_WRAPS);
    for (size_t k = 0; k < N_THREADS * N_WRAPS; k++) {
        ck_assert_msg(s.map_seen[k] == 1, "map: wrap %zu missing", k);
        ck_assert_msg(s.dump_seen[k] == 1, "dump: wrap %zu missing", k);
    }
    char why[300];
    struct pt_jd_summary sum;
    size_t errors = ds_validate_jitdump(dump, &sum, why, sizeof why);
    ck_assert_msg(errors == 0, "validator: %zu errors, first: %s", errors, why);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], N_THREADS * N_WRAPS);
    ck_assert_uint_eq(sum.trailing_bytes, 0);
    ds_run_cli_check(dump);
    free(s.map_seen);
    free(s.dump_seen);
    for (unsigned t = 0; t < N_THREADS; t++)
        free(w[t].addrs);
    unlink(map);
    tt_rmtree(dir);
    free(dir);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("wrap_release");
    tcase_set_timeout(tc, 1200);
    tcase_add_test(tc, threads_no_outputs);
    tcase_add_test(tc, threads_with_outputs);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
