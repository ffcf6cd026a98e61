/* SPDX-License-Identifier: MIT */
/* perftramp_set_outputs, perftramp_wrap_at (jitdump DEBUG_INFO),
 * perftramp_publish and PERFTRAMP_SIGNAL, with real components: the
 * library's jitdump validator, the perf map file, libgcc's
 * _Unwind_Backtrace through hand-written frameless code placed far from
 * the heap, and a real signal. */
#define _GNU_SOURCE 1 /* dladdr */
#include "config.h"

#include "api/context.h"
#include "read/jitdump_reader.h"
#include "../lib/perf_test_util.h"

#include <check.h>
#include "../lib/check_run.h"
#include <dlfcn.h>
#include <errno.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h> /* mallinfo2: the heap measure below */
#endif
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <unwind.h>

typedef long (*fn1)(long);
static long plus_one(long x)
{
    return x + 1;
}

static char *dir;
static char dump_path[1024], map_path[1024];

static void setup(void)
{
    dir = ptt_tempdir();
    ck_assert_ptr_nonnull(dir);
    snprintf(dump_path, sizeof dump_path, "%s/jit-%ld.dump", dir, (long)getpid());
    snprintf(map_path, sizeof map_path, "/tmp/perf-%ld.map", (long)getpid());
    unlink(map_path);
}

static void teardown(void)
{
    unlink(map_path);
    ptt_rmdir(dir);
    free(dir);
}

static perftramp *open_flags(unsigned flags)
{
    struct perftramp_options o = {.outputs = 0, .jitdump_dir = dir, .flags = flags};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    return pt;
}

/* No outputs, packed slots, names kept for a later replay: the default */
static perftramp *open_none(void)
{
    return open_flags(0);
}

/* Ready for any later output: names kept, slots spaced for a jitdump's
 * unwinding info (what every context was before they became opt-in) */
static perftramp *open_switchable(void)
{
    return open_flags(PERFTRAMP_KEEP_NAMES | PERFTRAMP_WIDE_SLOTS);
}

static size_t validate(const char *what, struct pt_jd_summary *sum)
{
    size_t len;
    uint8_t *d = ptt_read_file(dump_path, &len);
    ck_assert_msg(d != NULL, "%s: read %s: %s", what, dump_path, strerror(errno));
    size_t errors = pt_jitdump_validate(d, len, sum, NULL, NULL);
    free(d);
    return errors;
}

/* ---- toggling while 4 threads wrap and release --------------------- */

#define N_THREADS 4
#define N_LIVE 64
static pthread_mutex_t live_lock = PTHREAD_MUTEX_INITIALIZER;
static atomic_uint_fast64_t next_id;
static bool live[1u << 20]; /* by id: wrapped and not released */
static atomic_bool stop;

struct worker {
    perftramp *pt;
    fn1 t[N_LIVE];
    uint64_t id[N_LIVE];
};

static void *worker(void *arg)
{
    struct worker *w = arg;
    unsigned seed = (unsigned)(uintptr_t)w;
    while (!atomic_load(&stop)) {
        size_t k = (size_t)rand_r(&seed) % N_LIVE;
        pthread_mutex_lock(&live_lock);
        if (w->t[k]) {
            ck_assert_int_eq(perftramp_release(w->pt, (perftramp_fn)w->t[k]), 0);
            live[w->id[k]] = false;
            w->t[k] = NULL;
        } else {
            uint64_t id = atomic_fetch_add(&next_id, 1);
            if (id >= sizeof live) {
                pthread_mutex_unlock(&live_lock);
                break;
            }
            char name[32];
            snprintf(name, sizeof name, "t%" PRIu64, id);
            w->t[k] = (fn1)perftramp_wrap(w->pt, (perftramp_fn)plus_one, name);
            ck_assert_ptr_nonnull(w->t[k]);
            w->id[k] = id;
            live[id] = true;
        }
        pthread_mutex_unlock(&live_lock);
        ck_assert_int_eq(w->t[k] ? w->t[k](1) : 2, 2);
    }
    return NULL;
}

START_TEST(test_toggle_under_threads)
{
    perftramp *pt = open_switchable();
    struct worker w[N_THREADS];
    pthread_t th[N_THREADS];
    memset(w, 0, sizeof w);
    atomic_store(&stop, false);
    for (int i = 0; i < N_THREADS; i++) {
        w[i].pt = pt;
        ck_assert_int_eq(pthread_create(&th[i], NULL, worker, &w[i]), 0);
    }
    static bool seen[1u << 20];
    size_t total_lines = 0, total_loads = 0;
    for (int round = 0; round < 10; round++) {
        usleep(20000);
        unlink(map_path);
        /* ids are drawn and wrapped under live_lock: every id below
         * `before` was wrapped before the enable, every id from `after`
         * on after it */
        pthread_mutex_lock(&live_lock);
        uint64_t before = atomic_load(&next_id);
        pthread_mutex_unlock(&live_lock);
        ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
        ck_assert_uint_eq(perftramp_outputs(pt), PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP);
        pthread_mutex_lock(&live_lock);
        uint64_t after = atomic_load(&next_id);
        pthread_mutex_unlock(&live_lock);
        usleep(20000);
        /* disable with the workers held: the live set is known exactly */
        pthread_mutex_lock(&live_lock);
        ck_assert_int_eq(perftramp_set_outputs(pt, 0), 0);
        ck_assert_uint_eq(perftramp_outputs(pt), 0);
        uint64_t end = atomic_load(&next_id);
        memset(seen, 0, sizeof seen);
        FILE *f = fopen(map_path, "r");
        ck_assert_msg(f != NULL, "round %d: no map", round);
        char line[256];
        size_t lines = 0;
        uintptr_t last_replayed = 0;
        bool later_seen = false;
        while (fgets(line, sizeof line, f)) {
            uintptr_t addr;
            size_t size;
            uint64_t id;
            if (line[0] == '\n')
                continue; /* padding before a 4 KiB boundary (outputs/perfmap.c) */
            ck_assert_msg(sscanf(line, "%" SCNxPTR " %zx t%" SCNu64, &addr, &size, &id) == 3, "line %s", line);
            ck_assert_msg(id < end, "round %d: t%" PRIu64 " wrapped after the disable", round, id);
            ck_assert_msg(!seen[id], "round %d: t%" PRIu64 " twice in the map", round, id);
            seen[id] = true;
            lines++;
            if (id < before) {
                /* the replay: before anything wrapped after it, in address order */
                ck_assert_msg(!later_seen, "round %d: replayed t%" PRIu64 " after a later wrap", round, id);
                ck_assert_msg(addr > last_replayed, "round %d: replay not in address order", round);
                last_replayed = addr;
            } else if (id >= after) {
                later_seen = true;
            }
        }
        fclose(f);
        for (uint64_t id = 0; id < end; id++)
            ck_assert_msg(!live[id] || seen[id], "round %d: live t%" PRIu64 " missing from the map", round, id);
        pthread_mutex_unlock(&live_lock);
        struct pt_jd_summary sum;
        ck_assert_uint_eq(validate("toggle", &sum), 0);
        ck_assert(sum.closed);
        ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], lines);
        ck_assert_uint_eq(sum.loads_with_unwind, lines);
        total_lines += lines;
        total_loads += sum.by_id[PT_JD_LOAD];
    }
    atomic_store(&stop, true);
    for (int i = 0; i < N_THREADS; i++)
        pthread_join(th[i], NULL);
    ck_assert_int_eq(perftramp_close(pt), 0);
    printf("PROOF: dynamic.toggle proven toggles 10/10 under 4 threads, %zu map lines, %zu LOADs validated\n",
           total_lines, total_loads);
}
END_TEST

/* ---- unwinder and gdb on and off, failure leaves nothing changed ---- */

START_TEST(test_enable_bad_and_unwind)
{
    perftramp *pt = open_none();
    ck_assert_int_eq(perftramp_set_outputs(pt, 0x100), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_set_outputs(NULL, 0), -1);
    fn1 t = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "u");
    ck_assert_ptr_nonnull(t);
    /* a jitdump directory that does not exist: the enable fails whole */
    free(pt->jitdump_dir);
    pt->jitdump_dir = strdup("/nonexistent/perftramp");
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), -1);
    ck_assert_int_eq(errno, ENOENT);
    ck_assert_uint_eq(perftramp_outputs(pt), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
#ifdef HAVE_LIBGCC_UNWINDER
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_UNWIND | PERFTRAMP_GDB), 0);
    ck_assert_uint_eq(perftramp_outputs(pt), PERFTRAMP_UNWIND | PERFTRAMP_GDB);
    ck_assert_ptr_nonnull(pt->slots.arenas[0]->unwind_handle);
    ck_assert_int_eq(perftramp_set_outputs(pt, 0), 0);
    ck_assert_ptr_null(pt->slots.arenas[0]->unwind_handle);
#else
    /* no unwinder in the process (Debian's musl-gcc): refused whole */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_UNWIND | PERFTRAMP_GDB), -1);
    ck_assert_int_eq(errno, ENOTSUP);
    ck_assert_uint_eq(perftramp_outputs(pt), 0);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_GDB), 0);
    ck_assert_int_eq(perftramp_set_outputs(pt, 0), 0);
#endif
    ck_assert_int_eq(t(41), 42);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* ---- PERFTRAMP_ELF switched on and off ------------------------------- */

/* The path of the mapping holding `addr`, "" for an anonymous one. */
static void mapping_of(uintptr_t addr, char *path, size_t n)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[1024];
    path[0] = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t lo, hi;
        int off = 0;
        if (sscanf(line, "%" SCNxPTR "-%" SCNxPTR " %*s %*s %*s %*s %n", &lo, &hi, &off) < 2 || addr < lo || addr >= hi)
            continue;
        snprintf(path, n, "%s", off ? line + off : "");
        path[strcspn(path, "\n")] = 0;
        break;
    }
    fclose(f);
}

static bool in_elf_file(perftramp_fn t, const char *elf_dir)
{
    char path[1024];
    mapping_of((uintptr_t)t, path, sizeof path);
    return strncmp(path, elf_dir, strlen(elf_dir)) == 0 && strstr(path, "/perftramp-") != NULL;
}

START_TEST(test_elf_switch)
{
    char elf_dir[1100];
    snprintf(elf_dir, sizeof elf_dir, "%s/elf", dir);
    ck_assert_int_eq(mkdir(elf_dir, 0700), 0);
    struct perftramp_options o = {.outputs = 0, .jitdump_dir = dir, .elf_dir = elf_dir, .flags = PERFTRAMP_KEEP_NAMES};
    perftramp *pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    perftramp_fn a = perftramp_wrap(pt, (perftramp_fn)plus_one, "elf::a");
    ck_assert_ptr_nonnull(a);
    ck_assert(!in_elf_file(a, elf_dir));
    /* enabled: new arenas are files; the trampoline made before stays in
     * ordinary memory, and the perf map still gets it (replayed) */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_ELF | PERFTRAMP_PERF_MAP), 0);
    ck_assert_uint_eq(perftramp_outputs(pt), PERFTRAMP_ELF | PERFTRAMP_PERF_MAP);
    perftramp_fn b = perftramp_wrap(pt, (perftramp_fn)plus_one, "elf::b");
    ck_assert_ptr_nonnull(b);
    ck_assert(!in_elf_file(a, elf_dir));
    ck_assert_msg(in_elf_file(b, elf_dir), "a trampoline wrapped after enabling PERFTRAMP_ELF is not in an ELF file");
    char b_file[1024];
    mapping_of((uintptr_t)b, b_file, sizeof b_file);
    ck_assert_int_eq(((fn1)a)(1), 2);
    ck_assert_int_eq(((fn1)b)(2), 3);
    size_t len = 0;
    uint8_t *map = ptt_read_file(map_path, &len);
    ck_assert_ptr_nonnull(map);
    ck_assert_ptr_nonnull(memmem(map, len, " elf::a\n", 8));
    ck_assert_ptr_nonnull(memmem(map, len, " elf::b\n", 8));
    free(map);
    /* the file names b in its symbol table */
    uint8_t *bytes = ptt_read_file(b_file, &len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_ptr_nonnull(memmem(bytes, len, "elf::b", 7));
    free(bytes);
    /* disabled: new trampolines in ordinary memory, b still runs from its file */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_uint_eq(perftramp_outputs(pt), PERFTRAMP_PERF_MAP);
    perftramp_fn c = perftramp_wrap(pt, (perftramp_fn)plus_one, "elf::c");
    ck_assert_ptr_nonnull(c);
    ck_assert(!in_elf_file(c, elf_dir));
    ck_assert(in_elf_file(b, elf_dir));
    ck_assert_int_eq(((fn1)b)(3), 4);
    ck_assert_int_eq(((fn1)c)(4), 5);
    /* enabled again: a new file for the next arena */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_ELF), 0);
    perftramp_fn d = perftramp_wrap(pt, (perftramp_fn)plus_one, "elf::d");
    ck_assert_ptr_nonnull(d);
    ck_assert(in_elf_file(d, elf_dir));
    char d_file[1024];
    mapping_of((uintptr_t)d, d_file, sizeof d_file);
    ck_assert_str_ne(d_file, b_file);
    ck_assert_int_eq(((fn1)d)(5), 6);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", elf_dir);
    ck_assert_int_eq(system(cmd), 0);
}
END_TEST

/* ---- names at a later switch: kept by default ----------------------- */

static bool file_has(const char *path, const char *text)
{
    size_t len = 0;
    uint8_t *d = ptt_read_file(path, &len);
    bool found = d && memmem(d, len, text, strlen(text)) != NULL;
    free(d);
    return found;
}

#define N_LATER 100

/* The names of the dump's LOADs, in file order, NUL-separated in one
 * buffer (freed by the caller); *n their count. */
static char *dump_load_names(const char *path, size_t *n)
{
    size_t len;
    uint8_t *d = ptt_read_file(path, &len);
    ck_assert_msg(d != NULL, "read %s: %s", path, strerror(errno));
    struct pt_jd_iter it;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    char *names = calloc(len + 1, 1);
    size_t used = 0;
    struct pt_jd_record r;
    *n = 0;
    while (pt_jd_next(&it, &r) > 0)
        if (r.id == PT_JD_LOAD && !r.malformed) {
            memcpy(names + used, r.name, r.name_len + 1);
            used += r.name_len + 1;
            ++*n;
        }
    free(d);
    return names;
}

/* `perftramp check` (the CLI, as a user runs it) finds the dump valid. */
static void cli_check(const char *path)
{
    const char *b = getenv("PT_BUILDDIR");
    ck_assert_msg(b != NULL, "PT_BUILDDIR (make check sets it) locates tools/perftramp");
    char cmd[3200], out[1100];
    snprintf(out, sizeof out, "%s/check.out", dir);
    snprintf(cmd, sizeof cmd, "'%s/tools/perftramp' check '%s' > '%s' 2>&1", b, path, out);
    int st = system(cmd);
    size_t len = 0;
    char *text = (char *)ptt_read_file(out, &len);
    ck_assert_msg(st == 0 && text && strstr(text, ": valid (0 errors"), "perftramp check %s: status 0x%x\n%.600s",
                  path, st, text ? text : "(no output)");
    free(text);
    unlink(out);
}

/* Every name of wraps [from, to) ("later::f<k>") is among the dump's LOAD
 * names and the map's lines, and neither names anything by placeholder. */
static void assert_named(const char *what, int from, int to, size_t loads_expected)
{
    size_t n, len;
    char *loads = dump_load_names(dump_path, &n);
    ck_assert_msg(n == loads_expected, "%s: %zu LOADs, want %zu", what, n, loads_expected);
    char *map = (char *)ptt_read_file(map_path, &len);
    ck_assert_msg(map != NULL, "%s: no map %s", what, map_path);
    for (int k = from; k < to; k++) {
        char name[32], line_end[40];
        snprintf(name, sizeof name, "later::f%d", k);
        snprintf(line_end, sizeof line_end, " %s\n", name);
        ck_assert_msg(strstr(map, line_end), "%s: the map lacks %s", what, name);
        const char *p = loads;
        while (*p && strcmp(p, name) != 0)
            p += strlen(p) + 1;
        ck_assert_msg(*p, "%s: no LOAD named %s", what, name);
    }
    ck_assert_msg(!strstr(map, "[perftramp@"), "%s: a placeholder in the map", what);
    for (const char *p = loads; *p; p += strlen(p) + 1)
        ck_assert_msg(strncmp(p, "[perftramp@", 11) != 0, "%s: a LOAD named %s", what, p);
    free(map);
    free(loads);
}

static void wrap_later(perftramp *pt, int from, int to, perftramp_fn *t)
{
    for (int k = from; k < to; k++) {
        char name[32];
        snprintf(name, sizeof name, "later::f%d", k);
        t[k] = perftramp_wrap(pt, (perftramp_fn)plus_one, name);
        ck_assert_ptr_nonnull(t[k]);
    }
}

/* A new user's sequence (no flag, no callback): open with no output, wrap,
 * switch the map and a jitdump on later: every trampoline by its name.
 * Then the map off and on around more wraps: those wrapped while it was
 * on keep no copy, and its file names them at the next switch. */
START_TEST(test_names_after_later_switch)
{
    perftramp_fn t[N_LATER + 20];
    perftramp *pt = open_none();
    wrap_later(pt, 0, N_LATER, t);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
    assert_named("switched on after 100 wraps", 0, N_LATER, N_LATER);
    cli_check(dump_path);
    /* wrapped with the map on: no copy (the map holds the name) */
    wrap_later(pt, N_LATER, N_LATER + 10, t);
    /* the map off, wraps that keep a copy again, then a new dump alone */
    ck_assert_int_eq(perftramp_set_outputs(pt, 0), 0);
    wrap_later(pt, N_LATER + 10, N_LATER + 20, t);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_JITDUMP), 0);
    size_t n;
    char *loads = dump_load_names(dump_path, &n);
    ck_assert_uint_eq(n, N_LATER + 20);
    for (const char *p = loads; *p; p += strlen(p) + 1)
        ck_assert_msg(strncmp(p, "later::f", 8) == 0, "a LOAD named %s after the map was switched off", p);
    free(loads);
    cli_check(dump_path);
    /* the map on again: its old lines and the copies name every one */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(((fn1)t[N_LATER + 19])(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
    assert_named("the map on again", 0, N_LATER + 20, N_LATER + 20);
    printf("PROOF: dynamic.names-later proven no flag: a switch after %d wraps names all %d in the map and the "
           "jitdump (perftramp check: valid), and every one again after the map was switched off and on\n",
           N_LATER, N_LATER);
}
END_TEST

/* A forked child names a trampoline wrapped while the map was on by the
 * parent's map as it was at the fork: the parent releasing it and
 * wrapping another at the same address before the child writes its files
 * must not rename the child's (PERFTRAMP_ATFORK: the prepare handler
 * takes the map's size). */
START_TEST(test_names_fork_snapshot)
{
    struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP, .flags = PERFTRAMP_ATFORK};
    perftramp *pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    perftramp_fn a = perftramp_wrap(pt, (perftramp_fn)plus_one, "fork::before");
    ck_assert_ptr_nonnull(a);
    int go[2];
    ck_assert_int_eq(pipe(go), 0);
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        char c;
        bool ok = read(go[0], &c, 1) == 1; /* the parent has wrapped again */
        perftramp_fn own = perftramp_wrap(pt, (perftramp_fn)plus_one, "fork::child"); /* writes the child's map */
        char path[64], line[80];
        snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
        snprintf(line, sizeof line, "%" PRIxPTR " ", (uintptr_t)a);
        size_t len = 0;
        char *map = (char *)ptt_read_file(path, &len);
        char *at = map ? strstr(map, line) : NULL;
        ok = ok && own && at && strncmp(strchr(at + strlen(line), ' ') + 1, "fork::before\n", 13) == 0;
        if (!ok)
            fprintf(stderr, "the child's map:\n%s", map ? map : "(none)\n");
        free(map);
        unlink(path);
        _exit(ok ? 0 : 1);
    }
    ck_assert_int_eq(perftramp_release(pt, a), 0);
    perftramp_fn b = perftramp_wrap(pt, (perftramp_fn)plus_one, "fork::after");
    ck_assert_ptr_eq(b, a); /* the slot again */
    ck_assert_int_eq(write(go[1], "x", 1), 1);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    close(go[0]);
    close(go[1]);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0,
                  "the child's map names its trampoline by the parent's later wrap at the same address");
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* The perf map failing on a wrap's own line (EFBIG under RLIMIT_FSIZE,
 * in a child: the limit is the process's): that wrap keeps a copy after
 * all, and the next switch names it. */
START_TEST(test_names_map_failed_line)
{
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct perftramp_options o = {.outputs = PERFTRAMP_PERF_MAP, .jitdump_dir = dir};
        perftramp *pt = perftramp_open(&o);
        char map[64], dump[1100];
        snprintf(map, sizeof map, "/tmp/perf-%ld.map", (long)getpid());
        snprintf(dump, sizeof dump, "%s/jit-%ld.dump", dir, (long)getpid());
        struct stat st;
        int bad = !pt || !perftramp_wrap(pt, (perftramp_fn)plus_one, "mapfail::a") || stat(map, &st) != 0;
        struct rlimit rl = {.rlim_cur = bad ? RLIM_INFINITY : (rlim_t)st.st_size + 4, .rlim_max = RLIM_INFINITY};
        bad |= setrlimit(RLIMIT_FSIZE, &rl) != 0;
        bad |= (!perftramp_wrap(pt, (perftramp_fn)plus_one, "mapfail::b")) << 1;
        bad |= (perftramp_output_error(pt, PERFTRAMP_PERF_MAP) != EFBIG) << 2;
        rl.rlim_cur = RLIM_INFINITY;
        bad |= (setrlimit(RLIMIT_FSIZE, &rl) != 0 || perftramp_set_outputs(pt, PERFTRAMP_JITDUMP) != 0) << 3;
        bad |= (!file_has(dump, "mapfail::a") || !file_has(dump, "mapfail::b") || file_has(dump, "[perftramp@")) << 4;
        perftramp_close(pt);
        unlink(map);
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "status 0x%x (bits: 1 setup, 2 wrap, 4 the map did "
                  "not fail with EFBIG, 8 the switch, 16 the dump lacks a name)", status);
}
END_TEST

/* ---- names of a context that keeps none (PERFTRAMP_FORGET_NAMES) ------ */

static perftramp_fn named_by_callback;
static size_t name_cb(void *user_data, perftramp_fn tramp, char *buf, size_t size)
{
    ck_assert_ptr_eq(user_data, &named_by_callback);
    if (tramp != named_by_callback)
        return 0;
    return (size_t)snprintf(buf, size, "cb::a");
}

#ifdef __GLIBC__
/* malloc's bytes in use (its own count: the slots' code is elsewhere) */
static double heap_bytes(void)
{
    struct mallinfo2 mi = mallinfo2();
    return (double)(mi.uordblks + mi.hblkhd);
}

/* Whether mallinfo2 sees a 64 KiB block: not under ASan or valgrind,
 * whose allocators it does not know. */
static bool malloc_counts(void)
{
    double before = heap_bytes();
    void *volatile block = malloc(64 << 10);
    bool counted = block && heap_bytes() - before >= (64 << 10);
    free(block);
    return counted;
}

/* Heap bytes per wrap over 1000 wraps of a context opened with flags:
 * what it keeps besides the code. */
static double heap_per_wrap(unsigned flags)
{
    perftramp *pt = open_flags(flags);
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "first")); /* the first arena */
    double before = heap_bytes();
    for (int k = 0; k < 1000; k++)
        ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "some::name_of_twenty"));
    double per = (heap_bytes() - before) / 1000;
    ck_assert_int_eq(perftramp_close(pt), 0);
    return per;
}
#endif

/* The opt-outs: PERFTRAMP_FORGET_NAMES keeps no copy (the memory floor:
 * a replay names from the callback, the map, else the placeholder); a
 * name callback set with no flag keeps none either while it is set; both
 * flags at once are refused. */
START_TEST(test_names_not_kept)
{
    struct perftramp_options both = {.flags = PERFTRAMP_KEEP_NAMES | PERFTRAMP_FORGET_NAMES};
    errno = 0;
    ck_assert_ptr_null(perftramp_open(&both));
    ck_assert_int_eq(errno, EINVAL);
    char heap[128] = "heap per wrap not measured (no mallinfo2 in this libc)";
#ifdef __GLIBC__
    if (malloc_counts()) {
        double kept = heap_per_wrap(0), forgot = heap_per_wrap(PERFTRAMP_FORGET_NAMES);
        ck_assert_msg(forgot < 2 && kept >= 24,
                      "heap per wrap: %.1f B by default, %.1f B with PERFTRAMP_FORGET_NAMES", kept, forgot);
        snprintf(heap, sizeof heap, "heap %.1f B a wrap (%.1f B by default)", forgot, kept);
    } else {
        snprintf(heap, sizeof heap, "heap per wrap not measured (this malloc, a sanitizer's or valgrind's, "
                                    "counts nothing for mallinfo2)");
    }
#endif

    perftramp *cb = open_none();
    ck_assert_int_eq(perftramp_set_name_callback(cb, name_cb, &named_by_callback), 0);
    perftramp_fn x = perftramp_wrap(cb, (perftramp_fn)plus_one, "d::x"); /* no copy: the callback names it */
    ck_assert_ptr_nonnull(x);
    ck_assert_int_eq(perftramp_set_name_callback(cb, NULL, NULL), 0);
    ck_assert_int_eq(perftramp_set_outputs(cb, PERFTRAMP_PERF_MAP), 0);
    char x_placeholder[64];
    snprintf(x_placeholder, sizeof x_placeholder, " [perftramp@%p]\n", (void *)x);
    ck_assert_msg(file_has(map_path, x_placeholder), "wrapped under a callback, then removed: no %s", x_placeholder);
    ck_assert_int_eq(perftramp_close(cb), 0);
    unlink(map_path);

    perftramp *pt = open_flags(PERFTRAMP_FORGET_NAMES);
    perftramp_fn a = perftramp_wrap(pt, (perftramp_fn)plus_one, "d::a");
    perftramp_fn b = perftramp_wrap(pt, (perftramp_fn)plus_one, "d::b");
    ck_assert_ptr_nonnull(a);
    ck_assert_ptr_nonnull(b);
    /* packed: the code's size apart (rounded to the table's alignment),
     * not a jitdump's unwind span */
    size_t align = pt->arch->code_align;
    ck_assert_uint_eq((uintptr_t)b - (uintptr_t)a, (pt->layout.size + align - 1) / align * align);
    named_by_callback = a;
    ck_assert_int_eq(perftramp_set_name_callback(NULL, name_cb, NULL), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_set_name_callback(pt, name_cb, &named_by_callback), 0);
    /* the replay: a's name from the callback, b's the placeholder */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
    char placeholder[64];
    snprintf(placeholder, sizeof placeholder, " [perftramp@%p]\n", (void *)b);
    ck_assert(file_has(map_path, " cb::a\n"));
    ck_assert_msg(file_has(map_path, placeholder), "no %s in the map", placeholder);
    ck_assert(!file_has(map_path, "d::a"));
    /* wrapped while the map is on: the map names it */
    perftramp_fn c = perftramp_wrap(pt, (perftramp_fn)plus_one, "d::c");
    ck_assert_ptr_nonnull(c);
    ck_assert_int_eq(perftramp_set_name_callback(pt, NULL, NULL), 0);
    /* the jitdump again, the map still on: its lines name the replay */
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
    ck_assert(file_has(dump_path, "d::c"));
    ck_assert(file_has(dump_path, "cb::a"));
    /* a forked child's map: the parent's lines name its trampolines */
    fflush(NULL);
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        char path[64];
        snprintf(path, sizeof path, "/tmp/perf-%ld.map", (long)getpid());
        int ok = perftramp_after_fork_child(pt) == 0 && file_has(path, " d::c\n") && file_has(path, " cb::a\n");
        unlink(path);
        _exit(ok ? 0 : 1);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "the child's map lacks the parent's names");
    ck_assert_int_eq(((fn1)a)(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
    /* a packed context's jitdump: valid, every trampoline loaded, none
     * with unwinding info (it would overlap the next slot) */
    struct pt_jd_summary sum;
    ck_assert_uint_eq(validate("packed", &sum), 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 3);
    ck_assert_uint_eq(sum.loads_with_unwind, 0);
    printf("PROOF: dynamic.names-not-kept proven PERFTRAMP_FORGET_NAMES: replay names from the callback, the perf "
           "map (own and a fork's parent's) and the placeholder, packed slots %zu B apart, %s\n",
           (size_t)((uintptr_t)b - (uintptr_t)a), heap);
}
END_TEST

/* ---- source lines --------------------------------------------------- */

START_TEST(test_wrap_at_debug_info)
{
    perftramp *pt = open_flags(PERFTRAMP_KEEP_NAMES); /* file and line travel with a kept name */
    fn1 t = (fn1)perftramp_wrap_at(pt, (perftramp_fn)plus_one, "fib", "hot.tiny", 7);
    ck_assert_ptr_nonnull(t);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_JITDUMP), 0); /* the replay carries the line */
    ck_assert_ptr_nonnull(perftramp_wrap_at(pt, (perftramp_fn)plus_one, "g", "hot.tiny", 12));
    ck_assert_ptr_nonnull(perftramp_wrap_at(pt, (perftramp_fn)plus_one, "nofile", NULL, 3));
    ck_assert_int_eq(perftramp_close(pt), 0);
    size_t len;
    uint8_t *d = ptt_read_file(dump_path, &len);
    ck_assert_ptr_nonnull(d);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(pt_jitdump_validate(d, len, &sum, NULL, NULL), 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_DEBUG_INFO], 2);
    struct pt_jd_iter it;
    struct pt_jd_record r;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    unsigned found = 0;
    uint64_t debug_addr = 0, debug_end = 0;
    unsigned debug_line = 0;
    while (pt_jd_next(&it, &r) == 1) {
        if (r.id == PT_JD_DEBUG_INFO) {
            uint64_t entry_addr;
            uint32_t line;
            memcpy(&entry_addr, r.body + 16, 8);
            memcpy(&line, r.body + 24, 4);
            /* the code's start and its end, the same file:line: the
             * range perf inject's line table gives that line */
            ck_assert_uint_eq(r.nr_entry, 2);
            ck_assert_uint_eq(entry_addr, r.code_addr);
            ck_assert_str_eq((const char *)r.body + 32, "hot.tiny");
            const uint8_t *e2 = r.body + 32 + sizeof "hot.tiny";
            uint32_t line2;
            memcpy(&debug_end, e2, 8);
            memcpy(&line2, e2 + 8, 4);
            ck_assert_uint_eq(line2, line);
            ck_assert_str_eq((const char *)e2 + 16, "hot.tiny");
            debug_addr = r.code_addr;
            debug_line = line;
        } else if (r.id == PT_JD_LOAD) {
            if (strcmp(r.name, "fib") == 0 || strcmp(r.name, "g") == 0)
                ck_assert_uint_eq(debug_end, r.code_addr + r.code_size);
            if (strcmp(r.name, "fib") == 0) {
                ck_assert_uint_eq(debug_addr, r.code_addr);
                ck_assert_uint_eq(debug_line, 7);
                found++;
            } else if (strcmp(r.name, "g") == 0) {
                ck_assert_uint_eq(debug_addr, r.code_addr);
                ck_assert_uint_eq(debug_line, 12);
                found++;
            }
            debug_addr = 0;
        }
    }
    free(d);
    ck_assert_uint_eq(found, 2);
    printf("PROOF: dynamic.debug-info proven 2/2 DEBUG_INFO records with file:line before their LOAD\n");
}
END_TEST

/* ---- publish: a frameless function, far from the heap ---------------- */

/* x86-64: sub $8,%rsp; call *%rdi; add $8,%rsp; ret  (Intel SDM encodings:
 * 48 83 /5 ib, FF /2, 48 83 /0 ib, C3).  No frame pointer: only the rows
 * can unwind it.  DWARF: rsp = 7 (System V psABI). */
static const uint8_t frameless_x86[] = {0x48, 0x83, 0xec, 0x08, 0xff, 0xd7, 0x48, 0x83, 0xc4, 0x08, 0xc3};
static const struct perftramp_cfi frameless_rows[] = {
    {.offset = 4, .op = PERFTRAMP_CFI_DEF_CFA_OFFSET, .value = 16},
    {.offset = 10, .op = PERFTRAMP_CFI_DEF_CFA_OFFSET, .value = 8},
};

#ifdef HAVE_LIBGCC_UNWINDER
struct trace {
    void *ip[64];
    int n;
};
static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    struct trace *t = arg;
    if (t->n < 64)
        t->ip[t->n++] = (void *)_Unwind_GetIP(ctx);
    return _URC_NO_REASON;
}
static struct trace last_trace;
/* (callback and reaches_main: the x86-64 frameless function's only) */
static void __attribute__((noinline, unused)) callback(void)
{
    last_trace.n = 0;
    _Unwind_Backtrace(collect, &last_trace);
}

/* Whether the trace passes the code and then reaches `main`. */
__attribute__((unused)) static bool reaches_main(const uint8_t *code, size_t size)
{
    bool through = false;
    for (int i = 0; i < last_trace.n; i++) {
        uintptr_t ip = (uintptr_t)last_trace.ip[i];
        if (ip > (uintptr_t)code && ip <= (uintptr_t)code + size)
            through = true;
        Dl_info info;
        if (through && dladdr(last_trace.ip[i], &info) && info.dli_sname && strcmp(info.dli_sname, "main") == 0)
            return true;
    }
    return false;
}
#endif

static uint8_t *far_code(void)
{
#if UINTPTR_MAX <= 0xffffffffu
    /* a 32-bit process: 4-byte absolute pointers reach every address, and
     * no page is 2 GiB from the heap in both directions; any page */
    uint8_t *any = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_msg(any != MAP_FAILED, "mmap: %s", strerror(errno));
    return any;
#else
    void *heap_block = malloc(16);
    uintptr_t heap = (uintptr_t)heap_block;
    free(heap_block);
    /* A page more than 2 GiB from the heap, by fixed (no-replace) requests
     * at growing distances on both sides: valgrind ignores a mere hint and
     * places the mapping near the heap, and ASan reserves terabytes around
     * its heap, so the near candidates can be taken (EEXIST). */
    static const unsigned gib[] = {3, 8, 64, 512, 4096, 8192, 16384};
    uint8_t *p = MAP_FAILED;
    int last_errno = 0;
    for (size_t k = 0; k < 2 * sizeof gib / sizeof gib[0] && p == MAP_FAILED; k++) {
        uintptr_t d = (uintptr_t)gib[k / 2] << 30;
        if (k % 2 && heap <= d + (1ull << 32))
            continue; /* below the heap only while above the low 4 GiB */
        uintptr_t at = ((k % 2) ? heap - d : heap + d) & ~(uintptr_t)0xfff;
        p = mmap((void *)at, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
                 MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
        last_errno = errno;
        if (p != MAP_FAILED && p != (uint8_t *)at) { /* an old kernel took it as a hint */
            munmap(p, 4096);
            p = MAP_FAILED;
        }
    }
    ck_assert_msg(p != MAP_FAILED, "no page 3 GiB to 16 TiB from the heap: %s", strerror(last_errno));
    intptr_t dist = (intptr_t)((uintptr_t)p - (uintptr_t)heap);
    ck_assert_msg(dist > (2ll << 30) || dist < -(2ll << 30), "code %p only %ld bytes from the heap", (void *)p, (long)dist);
    return p;
#endif
}

START_TEST(test_publish_frameless)
{
#ifndef __x86_64__
    printf("SKIP: the native frameless function is x86-64's (tests/arch runs the others)\n");
    return;
#elif !defined(HAVE_LIBGCC_UNWINDER)
    printf("NOTRUN: publish.frameless-x86_64: libgcc's unwinder does not link here (tests/musl/musl.sh)\n");
    return;
#else
    uint8_t *code = far_code();
    memcpy(code, frameless_x86, sizeof frameless_x86);
    typedef void (*through_fn)(void (*)(void));
    perftramp *pt = open_none();
    struct perftramp_code c = {.addr = code, .size = sizeof frameless_x86, .name = "frameless",
                               .cfi = frameless_rows, .n_cfi = 2, .file = "frameless.S", .line = 1};
    ck_assert_int_eq(perftramp_publish(pt, &c), 0);
    /* without the unwinder output libgcc cannot pass it: no frame pointer */
    ((through_fn)code)(callback);
    bool without = reaches_main(code, sizeof frameless_x86);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_UNWIND | PERFTRAMP_JITDUMP | PERFTRAMP_PERF_MAP), 0);
    ((through_fn)code)(callback);
    bool with = reaches_main(code, sizeof frameless_x86);
    ck_assert_msg(with, "_Unwind_Backtrace through published frameless code did not reach main (%d frames)",
                  last_trace.n);
    ck_assert_msg(!without, "reached main without the registration: the test proves nothing");
    ck_assert_int_eq(perftramp_unpublish(pt, code), 0);
    ((through_fn)code)(callback);
    ck_assert_msg(!reaches_main(code, sizeof frameless_x86), "still unwound after unpublish");
    ck_assert_int_eq(perftramp_unpublish(pt, code), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_close(pt), 0);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(validate("publish", &sum), 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 1);
    ck_assert_uint_eq(sum.loads_with_unwind, 1);
    ck_assert_uint_eq(sum.by_id[PT_JD_DEBUG_INFO], 1);
    munmap(code, 4096);
    printf("PROOF: publish.frameless-x86_64 proven _Unwind_Backtrace reached main through rows only, code %s\n",
           "64 GiB from the heap");
#endif
}
END_TEST

/* Bad input: a clear errno, nothing published. */
START_TEST(test_publish_bad_input)
{
    uint8_t *code = far_code();
    memcpy(code, frameless_x86, sizeof frameless_x86);
    perftramp *pt = open_none();
#ifdef HAVE_LIBGCC_UNWINDER
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP | PERFTRAMP_UNWIND), 0);
#else
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
#endif
    struct perftramp_cfi unsorted[] = {frameless_rows[1], frameless_rows[0]};
    struct perftramp_cfi outside[] = {{.offset = sizeof frameless_x86, .op = PERFTRAMP_CFI_DEF_CFA_OFFSET, .value = 8}};
    struct perftramp_cfi bad_op[] = {{.offset = 4, .op = 99, .value = 16}};
    struct perftramp_cfi bad_reg[] = {{.offset = 4, .op = PERFTRAMP_CFI_OFFSET, .reg = 4000, .value = -16}};
    struct perftramp_cfi bad_align[] = {{.offset = 4, .op = PERFTRAMP_CFI_OFFSET, .reg = 6, .value = -3}};
    struct {
        const char *what;
        struct perftramp_code c;
        int err;
    } cases[] = {
        {"unsorted", {.addr = code, .size = 11, .name = "f", .cfi = unsorted, .n_cfi = 2}, EINVAL},
        {"outside", {.addr = code, .size = 11, .name = "f", .cfi = outside, .n_cfi = 1}, EINVAL},
        {"unknown op", {.addr = code, .size = 11, .name = "f", .cfi = bad_op, .n_cfi = 1}, EINVAL},
        {"unknown register", {.addr = code, .size = 11, .name = "f", .cfi = bad_reg, .n_cfi = 1}, EINVAL},
        {"misaligned offset", {.addr = code, .size = 11, .name = "f", .cfi = bad_align, .n_cfi = 1}, EINVAL},
        {"NULL name", {.addr = code, .size = 11, .name = NULL}, EINVAL},
        {"size 0", {.addr = code, .size = 0, .name = "f"}, EINVAL},
        {"rows NULL", {.addr = code, .size = 11, .name = "f", .n_cfi = 1}, EINVAL},
        {"reserved", {.addr = code, .size = 11, .name = "f", .reserved = 1}, EINVAL},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        errno = 0;
        ck_assert_msg(perftramp_publish(pt, &cases[k].c) == -1, "%s accepted", cases[k].what);
        ck_assert_msg(errno == cases[k].err, "%s: errno %d", cases[k].what, errno);
        ck_assert_msg(perftramp_unpublish(pt, code) == -1, "%s: half-published", cases[k].what);
    }
    struct perftramp_code ok = {.addr = code, .size = 11, .name = "f", .cfi = frameless_rows, .n_cfi = 2};
    ck_assert_int_eq(perftramp_publish(pt, &ok), 0);
    struct perftramp_code over = {.addr = code + 10, .size = 4, .name = "over"};
    ck_assert_int_eq(perftramp_publish(pt, &over), -1);
    ck_assert_int_eq(errno, EEXIST);
    ck_assert_int_eq(perftramp_publish(NULL, &ok), -1);
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_close(pt), 0);
    /* the map holds the one good region only */
    FILE *f = fopen(map_path, "r");
    ck_assert_ptr_nonnull(f);
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n++;
    fclose(f);
    ck_assert_int_eq(n, 1);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(validate("bad input", &sum), 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 1);
    munmap(code, 4096);
    printf("PROOF: publish.bad-input proven 11/11 bad inputs refused with their errno, nothing half-published\n");
}
END_TEST

/* ---- enable after 100,000 trampolines ------------------------------- */

START_TEST(test_enable_100k)
{
    perftramp *pt = open_none();
    for (int i = 0; i < 100000; i++) {
        char name[32];
        snprintf(name, sizeof name, "f%d", i);
        ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, name));
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    ck_assert_int_eq(perftramp_set_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), 0);
    clock_gettime(CLOCK_MONOTONIC, &b);
    double ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
    ck_assert_int_eq(perftramp_close(pt), 0);
    struct pt_jd_summary sum;
    ck_assert_uint_eq(validate("100k", &sum), 0);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 100000);
    /* the `make bench` key (bench/run.sh runs this test case alone:
     * CK_RUN_CASE=enable100k); no assertion on the time here */
    printf("enable_ms_100k: %.1f\n# enable_ms_100k: perftramp_set_outputs(perf map + jitdump) with 100000 live "
           "trampolines, 100000 LOADs validated\n", ms);
}
END_TEST

/* ---- PERFTRAMP_SIGNAL ------------------------------------------------ */

static bool wait_outputs(perftramp *pt, unsigned want)
{
    for (int i = 0; i < 500; i++) {
        if (perftramp_outputs(pt) == want)
            return true;
        usleep(10000);
    }
    return false;
}

START_TEST(test_signal_switch)
{
    unsetenv("PERFTRAMP");
    struct perftramp_options o = {.jitdump_dir = dir, .flags = PERFTRAMP_SIGNAL, .signal = SIGUSR2};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "open: %s", strerror(errno));
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "before"));
    ck_assert_uint_eq(perftramp_outputs(pt), 0);
    ck_assert_int_eq(raise(SIGUSR2), 0);
    ck_assert_msg(wait_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), "the signal switched nothing on");
    ck_assert_int_eq(access(map_path, F_OK), 0);
    ck_assert_int_eq(raise(SIGUSR2), 0);
    ck_assert_msg(wait_outputs(pt, 0), "the second signal switched nothing off");
    struct pt_jd_summary sum;
    ck_assert_uint_eq(validate("signal", &sum), 0);
    ck_assert(sum.closed);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 1);
    ck_assert_int_eq(perftramp_close(pt), 0);
    /* bad options */
    struct perftramp_options bad = {.flags = PERFTRAMP_SIGNAL, .signal = SIGKILL};
    ck_assert_ptr_null(perftramp_open(&bad));
    ck_assert_int_eq(errno, EINVAL);
    struct perftramp_options nosig = {.signal = SIGUSR2};
    ck_assert_ptr_null(perftramp_open(&nosig));
    ck_assert_int_eq(errno, EINVAL);
    printf("PROOF: dynamic.signal proven 2/2 switches by SIGUSR2 (on: map + jitdump, off: CLOSE written)\n");
}
END_TEST

/* fork: the child has no helper thread until its first wrap (with
 * PERFTRAMP_ATFORK) starts one; a signal before that waits for it.  The
 * child's switch then works, closing does not hang, and the parent's
 * switch is untouched. */
START_TEST(test_signal_after_fork)
{
    unsetenv("PERFTRAMP");
    struct perftramp_options o = {.jitdump_dir = dir, .flags = PERFTRAMP_SIGNAL | PERFTRAMP_ATFORK, .signal = SIGUSR2};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "open: %s", strerror(errno));
    ck_assert_ptr_nonnull(perftramp_wrap(pt, (perftramp_fn)plus_one, "before"));
    /* One switch on and off first: the parent's helper thread is then up and
     * idle at the fork.  A fork while a new thread is still starting can hang
     * the child in pthread_create under ASan (its thread registry lock); seen
     * once in CI's ASan pass, never without the sanitizer. */
    ck_assert_int_eq(raise(SIGUSR2), 0);
    ck_assert(wait_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP));
    ck_assert_int_eq(raise(SIGUSR2), 0);
    ck_assert(wait_outputs(pt, 0));
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        int rc = 0;
        if (raise(SIGUSR2) != 0)
            rc |= 1;
        usleep(200000);
        if (perftramp_outputs(pt) != 0) /* no helper yet */
            rc |= 2;
        if (!perftramp_wrap(pt, (perftramp_fn)plus_one, "child"))
            rc |= 4;
        if (!wait_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP)) /* the waiting signal, acted on */
            rc |= 8;
        if (raise(SIGUSR2) != 0 || !wait_outputs(pt, 0))
            rc |= 16;
        if (perftramp_close(pt) != 0)
            rc |= 32;
        _exit(rc);
    }
    int st = 0;
    ck_assert_int_eq(waitpid(c, &st, 0), c);
    char child_map[64];
    snprintf(child_map, sizeof child_map, "/tmp/perf-%ld.map", (long)c);
    bool child_map_written = access(child_map, F_OK) == 0;
    unlink(child_map);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the child's switch: status 0x%x (bits: 1 raise, 2 on "
                  "before its helper, 4 wrap, 8 not on after the wrap, 16 not off, 32 close)", st);
    ck_assert_msg(child_map_written, "the child's switch wrote no map of its own");
    ck_assert_uint_eq(perftramp_outputs(pt), 0);
    ck_assert_int_eq(raise(SIGUSR2), 0);
    ck_assert_msg(wait_outputs(pt, PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP), "the parent's switch after fork");
    ck_assert_int_eq(raise(SIGUSR2), 0);
    ck_assert(wait_outputs(pt, 0));
    ck_assert_int_eq(perftramp_close(pt), 0);
    printf("PROOF: dynamic.signal-fork proven child: signal before its first wrap waits, wrap starts the helper, "
           "on/off/close; parent's switch unchanged\n");
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("dynamic");
    TCase *tc = tcase_create("dynamic");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_toggle_under_threads);
    tcase_add_test(tc, test_enable_bad_and_unwind);
    tcase_add_test(tc, test_elf_switch);
    tcase_add_test(tc, test_wrap_at_debug_info);
    tcase_add_test(tc, test_names_after_later_switch);
    tcase_add_test(tc, test_names_fork_snapshot);
    tcase_add_test(tc, test_names_map_failed_line);
    tcase_add_test(tc, test_names_not_kept);
    tcase_add_test(tc, test_publish_frameless);
    tcase_add_test(tc, test_publish_bad_input);
    tcase_add_test(tc, test_signal_switch);
    tcase_add_test(tc, test_signal_after_fork);
    suite_add_tcase(s, tc);
    /* its own case: bench/run.sh runs it alone (CK_RUN_CASE=enable100k) */
    TCase *big = tcase_create("enable100k");
    tcase_add_checked_fixture(big, setup, teardown);
    tcase_set_timeout(big, 300);
    tcase_add_test(big, test_enable_100k);
    suite_add_tcase(s, big);
    return s;
}

int main(void)
{
    return pt_check_run(suite()) ? 1 : 0;
}
