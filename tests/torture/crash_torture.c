/* SPDX-License-Identifier: MIT */
/* Killed mid-write, nothing lost that was written (docs/security.md,
 * "Killed"): trials of a four-thread producer with every output on
 * (crash_producer.c), each SIGKILLed at a moment chosen from the trial's
 * seed, either by the hook at the Nth write of one kind of output bytes,
 * cut where a kill can cut it (crash_hook.c: torn records on purpose), or
 * by this driver after a random delay.  After every trial
 * (crash_check.c): the jitdump holds a complete LOAD for every wrap and
 * publish that returned, its only possible tail is one uncommitted group
 * at its offset (validator, scanner and `perftramp check` agree); the
 * perf map holds a whole line for each, no torn line; every ELF arena is
 * complete with a symbol for every live trampoline, or incomplete and said
 * so by `perftramp check`; `perftramp clean` removes the dead process's
 * arenas.  Every 10th or 20th trial (from an offset the seed chooses)
 * runs under `perf record -k 1 --call-graph fp`: `perf inject --jit`
 * succeeds and every sample in a trampoline is named, and so is every one
 * perf names without inject (ELF arenas, or the perf map where they are
 * off); every 12th gives the dead one's pid to a new process (clone3
 * set_tid), which keeps its arena through `perftramp clean`.
 *
 * Environment: PT_CRASH_TRIALS (default 100; `make check-crash` runs
 * 1,000), PT_CRASH_SEED (default: random, printed: a failing trial is
 * replayed from the seed and its number; thread timing still varies),
 * PT_CRASH_JOBS (trials at once, default 2), PT_CRASH_PERF_EVERY (one
 * trial in N runs under perf, default 10; 0: none), PT_CRASH_ONLY (run only
 * this trial number), PT_CRASH_KEEP (keep a failed trial's directory). */
#define _GNU_SOURCE
#include "crash_check.h"
#include "torture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* An AddressSanitizer build (.ci/steps/15-distcheck.sh): its producer
 * needs ASan's runtime first among its libraries, and the hook cannot
 * interpose memcpy and mmap under ASan's own interceptors: every trial is
 * killed by the driver's timer instead (the plain `make check` runs the
 * hook). */
#if defined(__SANITIZE_ADDRESS__)
#define CRASH_HOOK_USABLE 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CRASH_HOOK_USABLE 0
#endif
#endif
#ifndef CRASH_HOOK_USABLE
#define CRASH_HOOK_USABLE 1
#endif

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* ---- what a trial does ---- */

struct plan {
    uint64_t trial, seed;
    bool elf;       /* ELF arenas on too (else the perf map names what perf samples) */
    bool timer;     /* killed by this driver after delay_ms; else by the hook */
    int event;      /* the hook's event (crash_event) */
    uint64_t nth;
    unsigned delay_ms;
    long spin_us;
    bool perf, reuse;
};

static struct plan make_plan(uint64_t seed, uint64_t trial, unsigned perf_every)
{
    uint64_t r = mix(seed ^ mix(trial));
    struct plan p = {.trial = trial, .seed = mix(r ^ 6)};
    /* every perf_every-th trial from an offset the seed chooses, with and
     * without ELF arenas in turn (perf names trampolines by the ELF arenas
     * in one, by the perf map in the other) */
    p.perf = perf_every && trial % perf_every == mix(seed) % perf_every;
    /* one trial in 12 gives its pid to a new process (not under perf) */
    p.reuse = !p.perf && trial % 12 == 5;
    p.elf = p.reuse || (p.perf ? trial / perf_every % 2 == 0 : (mix(r ^ 2) & 1) == 0);
    p.timer = !CRASH_HOOK_USABLE || mix(r ^ 3) % 10 < 3;
    p.spin_us = p.perf ? 500 : 5;
    /* the hook's target: each kind often, in ranges each trial reaches */
    /* perf_lo 0: not under perf, where the kill must come after samples (the
     * jitdump's header and an arena's headers are written before any) */
    static const struct {
        int event;
        unsigned weight, lo, hi, perf_lo, perf_hi;
        bool elf_only;
    } kinds[] = {
        {CRASH_EV_DUMP_COPY, 30, 1, 800, 200, 800, false},
        {CRASH_EV_MAP_WRITE, 20, 1, 800, 200, 800, false},
        {CRASH_EV_ANY, 15, 1, 3000, 800, 3000, false},
        {CRASH_EV_DUMP_WRITE, 5, 1, 1, 0, 0, false},
        {CRASH_EV_ELF_COPY, 15, 1, 3000, 1200, 3000, true},
        {CRASH_EV_ELF_WRITE, 10, 1, 3, 0, 0, true},
        {CRASH_EV_MAP_CROSS, 15, 1, 6, 2, 4, false},
    };
#define KIND_USED(k) ((p.elf || !kinds[k].elf_only) && (!p.perf || kinds[k].perf_lo))
    unsigned total = 0;
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        total += KIND_USED(k) ? kinds[k].weight : 0;
    unsigned pick = (unsigned)(mix(r ^ 4) % total);
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
        if (!KIND_USED(k))
            continue;
        if (pick >= kinds[k].weight) {
            pick -= kinds[k].weight;
            continue;
        }
        unsigned lo = p.perf ? kinds[k].perf_lo : kinds[k].lo, hi = p.perf ? kinds[k].perf_hi : kinds[k].hi;
        p.event = kinds[k].event;
        p.nth = lo + mix(r ^ 5) % (hi - lo + 1);
        break;
    }
    /* under perf, from the producer's start: after samples */
    p.delay_ms = p.perf ? 200 + (unsigned)(mix(r ^ 8) % 300) : (unsigned)(mix(r ^ 8) % 200);
    return p;
}

/* ---- totals, shared by the workers ---- */

struct totals {
    _Atomic uint64_t trials, failures, elf_trials, perf_trials, reuse_checks, reuse_skipped;
    /* kill points */
    _Atomic uint64_t in_dump_record, in_map_line, in_elf_write, between, before_start, hook_not_reached;
    _Atomic uint64_t by_event[CRASH_EV_COUNT];
    /* records */
    _Atomic uint64_t loads, loads_lost, uncommitted, lines, lines_lost, torn_lines, blank_lines;
    _Atomic uint64_t arenas, arenas_incomplete, symbols, symbols_lost, cleaned;
    /* perf */
    _Atomic uint64_t jit_named, jit_unnamed, jit_by_jitted, plain_named, plain_unnamed, plain_by_elf, plain_by_map,
        prologue;
    _Atomic uint64_t cli_runs;
};

static struct totals *tot;
static const char *builddir, *cli, *producer, *hook;
static bool perf_ok;
static char perf_version[32] = "6.1"; /* the installed perf's, when there is one */
static char perf_why[200];

/* ---- running a producer ---- */

static struct crash_progress *new_progress(const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || ftruncate(fd, sizeof(struct crash_progress)) < 0)
        return NULL;
    struct crash_progress *p = mmap(NULL, sizeof *p, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    close(fd);
    if (p == MAP_FAILED)
        return NULL;
    p->magic = CRASH_MAGIC;
    atomic_store(&p->kill_event, -1);
    return p;
}

/* Waits for child (the producer, or perf running it) to end, killing the
 * producer by SIGKILL `after` seconds if it still runs: seconds from now
 * when child is the producer, from the producer's start under perf (perf
 * itself is never killed: it writes perf.data when its workload ends).
 * Returns child's wait status. */
static int wait_killed(pid_t child, struct crash_progress *p, double after, bool under_perf, bool *killed_by_us)
{
    int status;
    double deadline = under_perf ? 0 : now_s() + after;
    for (;;) {
        pid_t w = waitpid(child, &status, WNOHANG);
        if (w == child)
            return status;
        pid_t pid = atomic_load(&p->pid);
        if (!deadline && pid > 0)
            deadline = now_s() + after;
        if (deadline && now_s() >= deadline && !*killed_by_us) {
            kill(under_perf ? pid : child, SIGKILL);
            *killed_by_us = true;
        }
        usleep(1000);
    }
}

/* In a new child: runs argv with stdout and stderr in out_path. */
static _Noreturn void exec_child(char *const argv[], const char *out_path)
{
    int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
    }
    execvp(argv[0], argv);
    _exit(127);
}

static pid_t spawn(char *const argv[], const char *out_path)
{
    pid_t pid = fork();
    if (pid == 0)
        exec_child(argv, out_path);
    return pid;
}

/* ---- perf ---- */

struct perf_count {
    uint64_t named, unnamed, by_jitted, by_elf, by_map, prologue;
    char example[200];
};

/* Reads `perf script -F ip,sym,dso` frames: in each sample, the frame
 * after crash_spin is the trampoline that called it. */
static int perf_frames(const char *data, struct perf_count *c)
{
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid == 0) {
        dup2(pfd[1], 1);
        int null = open("/dev/null", O_WRONLY);
        dup2(null, 2);
        close(pfd[0]);
        close(pfd[1]);
        execlp("perf", "perf", "script", "-i", data, "-F", "ip,sym,dso", (char *)NULL);
        _exit(127);
    }
    close(pfd[1]);
    FILE *f = fdopen(pfd[0], "r");
    char *line = NULL;
    size_t cap = 0;
    bool after_spin = false;
    while (getline(&line, &cap, f) > 0) {
        char *s = line;
        while (*s == ' ' || *s == '\t')
            s++;
        if (s == line || !*s || *s == '\n') {
            after_spin = false; /* a sample's header or the blank line after it */
            continue;
        }
        char *sym = strchr(s, ' ');
        char *dso = strrchr(s, '(');
        if (!sym || !dso || dso < sym)
            continue;
        sym++;
        size_t sym_len = (size_t)(dso - sym);
        while (sym_len && sym[sym_len - 1] == ' ')
            sym_len--;
        if (after_spin) {
            after_spin = false;
            char kind;
            unsigned t;
            uint64_t id;
            if (crash_parse(sym, sym_len, &kind, &t, &id)) {
                c->named++;
                c->by_jitted += strstr(dso, "jitted-") != NULL;
                c->by_elf += strstr(dso, "perftramp-") != NULL;
                c->by_map += strstr(dso, "perf-") != NULL || strstr(dso, "[JIT]") != NULL;
            } else if (sym_len == 17 && memcmp(sym, "crash_thread_main", 17) == 0) {
                c->prologue++; /* sampled before crash_spin set up its frame: fp skips its caller */
            } else if (sym_len == 15 && memcmp(sym, "crash_calibrate", 15) == 0) {
                /* the producer timing its loop, before any trampoline */
            } else {
                c->unnamed++;
                if (!c->example[0])
                    snprintf(c->example, sizeof c->example, "%s", s);
            }
            continue;
        }
        after_spin = sym_len == 10 && memcmp(sym, "crash_spin", 10) == 0;
    }
    free(line);
    fclose(f);
    int status;
    waitpid(pid, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : -1;
}

static int check_perf(const char *dir, const struct plan *pl, char *why, size_t why_len)
{
    char data[4200], jit[4200], text[4096];
    snprintf(data, sizeof data, "%s/perf.data", dir);
    snprintf(jit, sizeof jit, "%s/perf.jit.data", dir);
    int rc = crash_run((char *const[]){"perf", "inject", "--jit", "-i", data, "-o", jit, NULL}, text, sizeof text);
    if (rc != 0) {
        snprintf(why, why_len, "perf inject --jit: exit %d: %.400s", rc, text);
        return -1;
    }
    struct perf_count j = {0}, plain = {0};
    if (perf_frames(jit, &j) < 0 || perf_frames(data, &plain) < 0) {
        snprintf(why, why_len, "perf script failed on %s", dir);
        return -1;
    }
    atomic_fetch_add(&tot->jit_named, j.named);
    atomic_fetch_add(&tot->jit_unnamed, j.unnamed);
    atomic_fetch_add(&tot->jit_by_jitted, j.by_jitted);
    atomic_fetch_add(&tot->plain_named, plain.named);
    atomic_fetch_add(&tot->plain_unnamed, plain.unnamed);
    atomic_fetch_add(&tot->plain_by_elf, plain.by_elf);
    atomic_fetch_add(&tot->plain_by_map, plain.by_map);
    atomic_fetch_add(&tot->prologue, j.prologue);
    if (j.named == 0 || j.unnamed || plain.named == 0 || plain.unnamed) {
        snprintf(why, why_len,
                 "perf: trampoline frames after inject %" PRIu64 " named, %" PRIu64 " not; without inject (%s) %" PRIu64
                 " named, %" PRIu64 " not%s%s",
                 j.named, j.unnamed, pl->elf ? "ELF arenas" : "perf map", plain.named, plain.unnamed,
                 j.example[0] || plain.example[0] ? "; e.g. " : "", j.example[0] ? j.example : plain.example);
        return -1;
    }
    return 0;
}

/* ---- perftramp clean, and a live process with a dead one's pid ---- */

static size_t count_files(const char *dir, pid_t pid)
{
    char pattern[64];
    snprintf(pattern, sizeof pattern, "perftramp-%d-", (int)pid);
    size_t n = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, pattern, strlen(pattern)) == 0;
    if (d)
        closedir(d);
    return n;
}

static int clean(const char *edir, char *why, size_t why_len)
{
    char text[1024];
    atomic_fetch_add(&tot->cli_runs, 1);
    int rc = crash_run((char *const[]){(char *)cli, "clean", (char *)edir, NULL}, text, sizeof text);
    if (rc != 0)
        snprintf(why, why_len, "perftramp clean %s: exit %d: %s", edir, rc, text);
    return rc == 0 ? 0 : -1;
}

/* A process started at `pid` (clone3 with set_tid, root only) running
 * argv: its pid, or -1 with errno (EEXIST: taken meanwhile). */
static pid_t spawn_at(pid_t pid, char *const argv[], const char *out_path)
{
    struct clone_args args = {.exit_signal = SIGCHLD, .set_tid = (uint64_t)(uintptr_t)&pid, .set_tid_size = 1};
    long r = syscall(SYS_clone3, &args, sizeof args);
    if (r == 0)
        exec_child(argv, out_path);
    return (pid_t)r;
}

/* The dead producer's pid given to a new process that opens an ELF arena
 * in the same directory: its own open removes the dead one's files, and
 * `perftramp clean` keeps its file while it lives. */
static int check_reuse(const char *dir, pid_t pid, char *why, size_t why_len)
{
    char edir[4200], prog_path[4200], out[4200];
    snprintf(edir, sizeof edir, "%s/elf", dir);
    snprintf(prog_path, sizeof prog_path, "%s/hold.progress", dir);
    snprintf(out, sizeof out, "%s/hold.out", dir);
    struct crash_progress *p = new_progress(prog_path);
    if (!p)
        return snprintf(why, why_len, "hold.progress: %s", strerror(errno)), -1;
    usleep(60000); /* past PT_PROC_START_SLACK_NS after the dead one's last write */
    pid_t h = spawn_at(pid, (char *const[]){(char *)producer, (char *)dir, prog_path, "hold", "0", NULL}, out);
    if (h < 0) {
        atomic_fetch_add(&tot->reuse_skipped, 1);
        munmap(p, sizeof *p);
        return 0; /* not root, or the pid taken meanwhile: counted, not failed */
    }
    int r = 0;
    double end = now_s() + 10;
    while (!atomic_load(&p->opened) && now_s() < end && waitpid(h, NULL, WNOHANG) == 0)
        usleep(2000);
    if (!atomic_load(&p->opened)) {
        snprintf(why, why_len, "the process given pid %d did not open its ELF arena", (int)pid);
        r = -1;
    } else if (count_files(edir, pid) != 1) {
        snprintf(why, why_len, "pid %d reused: %zu files of that pid after the new process opened, want its one",
                 (int)pid, count_files(edir, pid));
        r = -1;
    } else if (clean(edir, why, why_len) < 0) {
        r = -1;
    } else if (count_files(edir, pid) != 1) {
        snprintf(why, why_len, "perftramp clean removed the arena of live pid %d (a reused pid)", (int)pid);
        r = -1;
    }
    kill(h, SIGKILL);
    waitpid(h, NULL, 0);
    munmap(p, sizeof *p);
    atomic_fetch_add(&tot->reuse_checks, r == 0);
    return r;
}

/* ---- one trial ---- */

static void classify_kill(const struct plan *pl, const struct crash_progress *p, const struct crash_files *fl,
                          bool killed_by_us)
{
    int ev = atomic_load(&p->kill_event);
    if (!atomic_load(&p->pid)) {
        atomic_fetch_add(&tot->before_start, 1);
        return;
    }
    if (ev < 0) {
        if (!pl->timer && killed_by_us)
            atomic_fetch_add(&tot->hook_not_reached, 1);
        atomic_fetch_add(fl->uncommitted ? &tot->in_dump_record : &tot->between, 1);
        return;
    }
    atomic_fetch_add(&tot->by_event[ev], 1);
    bool cut = p->kill_done > 0 && p->kill_done < p->kill_len;
    if (!cut)
        atomic_fetch_add(&tot->between, 1);
    else if (ev == CRASH_EV_DUMP_COPY || ev == CRASH_EV_DUMP_WRITE)
        atomic_fetch_add(&tot->in_dump_record, 1);
    else if (ev == CRASH_EV_MAP_WRITE || ev == CRASH_EV_MAP_CROSS)
        atomic_fetch_add(&tot->in_map_line, 1);
    else
        atomic_fetch_add(&tot->in_elf_write, 1);
}

static int run_trial(const struct plan *pl, char *why, size_t why_len)
{
    char *dir = tt_mkdtemp();
    char edir[4200], prog_path[4200], out[4200], data[4200], kill_env[128], prog_env[4300], preload[4200];
    snprintf(edir, sizeof edir, "%s/elf", dir);
    snprintf(prog_path, sizeof prog_path, "%s/progress", dir);
    snprintf(out, sizeof out, "%s/out.txt", dir);
    snprintf(data, sizeof data, "%s/perf.data", dir);
    mkdir(edir, 0700);
    struct crash_progress *p = new_progress(prog_path);
    if (!p) {
        snprintf(why, why_len, "progress file: %s", strerror(errno));
        return -1;
    }
    /* without the hook (an ASan build) the same variable, empty */
    snprintf(preload, sizeof preload, "LD_PRELOAD=%s", CRASH_HOOK_USABLE ? hook : "");
    snprintf(prog_env, sizeof prog_env, "CRASH_PROGRESS=%s", prog_path);
    snprintf(kill_env, sizeof kill_env, "CRASH_KILL=%s:%" PRIu64 ":%" PRIu64, pl->timer ? "none" : crash_event_name(pl->event),
             pl->nth, pl->seed);
    char spin[32];
    snprintf(spin, sizeof spin, "%ld", pl->spin_us);
    char *argv[40];
    int n = 0;
    if (pl->perf) {
        static char *const rec[] = {"perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-F", "1999",
                                    "--call-graph", "fp", "-o"};
        for (size_t i = 0; i < sizeof rec / sizeof rec[0]; i++)
            argv[n++] = rec[i];
        argv[n++] = data;
        argv[n++] = "--";
    }
    argv[n++] = "env";
    argv[n++] = preload;
    argv[n++] = prog_env;
    argv[n++] = kill_env;
    argv[n++] = (char *)producer;
    argv[n++] = dir;
    argv[n++] = prog_path;
    argv[n++] = pl->elf ? "all" : "noelf";
    argv[n++] = spin;
    argv[n] = NULL;
    pid_t child = spawn(argv, out);
    bool killed_by_us = false;
    int status = wait_killed(child, p, pl->timer ? pl->delay_ms / 1000.0 : pl->perf ? 20 : 4, pl->perf, &killed_by_us);
    pid_t pid = atomic_load(&p->pid);
    int r = 0;
    char text[2048] = "";
    {
        size_t len;
        unsigned char *o = tt_slurp(out, &len);
        if (o) {
            snprintf(text, sizeof text, "%.*s", (int)(len < sizeof text - 1 ? len : sizeof text - 1), (char *)o);
            free(o);
        }
    }
    if (!pl->perf && !(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)) {
        snprintf(why, why_len, "the producer was not SIGKILLed: status %#x: %.500s", status, text);
        r = -1;
    } else if (strstr(text, "output stopped") || strstr(text, "crash_producer:")) {
        snprintf(why, why_len, "the producer said: %.500s", text);
        r = -1;
    }
    struct crash_files fl;
    memset(&fl, 0, sizeof fl);
    if (r == 0 && pid > 0) {
        atomic_fetch_add(&tot->cli_runs, 1);
        r = crash_check_files(dir, pid, p, pl->elf, cli, perf_version, &fl, why, why_len);
    }
    classify_kill(pl, p, &fl, killed_by_us);
    atomic_fetch_add(&tot->loads, fl.loads);
    atomic_fetch_add(&tot->loads_lost, fl.loads_lost);
    atomic_fetch_add(&tot->uncommitted, fl.uncommitted > 0);
    atomic_fetch_add(&tot->lines, fl.lines);
    atomic_fetch_add(&tot->lines_lost, fl.lines_lost);
    atomic_fetch_add(&tot->torn_lines, fl.torn_lines);
    atomic_fetch_add(&tot->blank_lines, fl.blank);
    atomic_fetch_add(&tot->arenas, fl.arenas);
    atomic_fetch_add(&tot->arenas_incomplete, fl.arenas_incomplete);
    atomic_fetch_add(&tot->symbols, fl.symbols);
    atomic_fetch_add(&tot->symbols_lost, fl.symbols_lost);
    if (r == 0 && pl->perf && pid > 0) {
        atomic_fetch_add(&tot->perf_trials, 1);
        r = check_perf(dir, pl, why, why_len);
    }
    if (r == 0 && pl->reuse && pid > 0)
        r = check_reuse(dir, pid, why, why_len);
    if (r == 0 && pl->elf && pid > 0) {
        size_t before = count_files(edir, pid);
        if (clean(edir, why, why_len) < 0) {
            r = -1;
        } else if (count_files(edir, pid) != 0) {
            snprintf(why, why_len, "perftramp clean left %zu files of dead pid %d", count_files(edir, pid), (int)pid);
            r = -1;
        } else {
            atomic_fetch_add(&tot->cleaned, before);
        }
    }
    if (pid > 0) {
        char map[64];
        snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)pid);
        unlink(map);
    }
    munmap(p, sizeof *p);
    if (r == 0 || !getenv("PT_CRASH_KEEP"))
        tt_rmtree(dir);
    else
        fprintf(stderr, "kept %s\n", dir);
    free(dir);
    return r;
}

/* ---- the report ---- */

static void report(uint64_t seed, uint64_t trials, double secs, unsigned jobs, unsigned perf_every)
{
    uint64_t t = atomic_load(&tot->trials), failed = atomic_load(&tot->failures);
    printf("\n=== crash torture: %" PRIu64 " trials, seed %" PRIu64 ", %u at once, %.0f s (%.0f ms a trial)\n", t, seed,
           jobs, secs, t ? secs * 1000 * jobs / (double)t : 0.0);
    printf("| trials run | %" PRIu64 " (%" PRIu64 " with ELF arenas; %" PRIu64 " under perf, 1 in %u) |\n", t,
           atomic_load(&tot->elf_trials), atomic_load(&tot->perf_trials), perf_every);
    printf("| killed inside a jitdump record (a group's copy cut) | %" PRIu64 " |\n", atomic_load(&tot->in_dump_record));
    printf("| killed inside a perf map write (cut at a page) | %" PRIu64 " |\n", atomic_load(&tot->in_map_line));
    printf("| killed inside an ELF arena write | %" PRIu64 " |\n", atomic_load(&tot->in_elf_write));
    printf("| killed between records | %" PRIu64 " |\n", atomic_load(&tot->between));
    printf("| killed before the producer ran | %" PRIu64 " |\n", atomic_load(&tot->before_start));
    printf("| hook kills by event |");
    for (int e = 0; e < CRASH_EV_COUNT; e++)
        printf(" %s %" PRIu64 "%s", crash_event_name(e), atomic_load(&tot->by_event[e]), e + 1 < CRASH_EV_COUNT ? "," : "");
    printf(" (%" PRIu64 " not reached: killed by the driver) |\n", atomic_load(&tot->hook_not_reached));
    printf("| jitdump LOADs kept / lost | %" PRIu64 " / %" PRIu64 " (%" PRIu64 " uncommitted last groups) |\n",
           atomic_load(&tot->loads), atomic_load(&tot->loads_lost), atomic_load(&tot->uncommitted));
    printf("| perf map lines kept / lost / torn | %" PRIu64 " / %" PRIu64 " / %" PRIu64 " (%" PRIu64
           " empty padding lines) |\n",
           atomic_load(&tot->lines), atomic_load(&tot->lines_lost), atomic_load(&tot->torn_lines),
           atomic_load(&tot->blank_lines));
    printf("| ELF arenas complete / incomplete; symbols kept / lost | %" PRIu64 " / %" PRIu64 "; %" PRIu64 " / %" PRIu64
           " |\n",
           atomic_load(&tot->arenas) - atomic_load(&tot->arenas_incomplete), atomic_load(&tot->arenas_incomplete),
           atomic_load(&tot->symbols), atomic_load(&tot->symbols_lost));
    printf("| perftramp clean | %" PRIu64 " dead files removed; a live process with a reused pid kept its arena %" PRIu64
           " times (%" PRIu64 " not tried: the pid was taken) |\n",
           atomic_load(&tot->cleaned), atomic_load(&tot->reuse_checks), atomic_load(&tot->reuse_skipped));
    printf("| perf: trampoline frames named after inject | %" PRIu64 "/%" PRIu64 " (%" PRIu64
           " by jitted .so; %" PRIu64 " skipped: sampled in crash_spin's prologue) |\n",
           atomic_load(&tot->jit_named), atomic_load(&tot->jit_named) + atomic_load(&tot->jit_unnamed),
           atomic_load(&tot->jit_by_jitted), atomic_load(&tot->prologue));
    printf("| perf: named without inject | %" PRIu64 "/%" PRIu64 " (%" PRIu64 " by an ELF arena, %" PRIu64
           " by the perf map) |\n",
           atomic_load(&tot->plain_named), atomic_load(&tot->plain_named) + atomic_load(&tot->plain_unnamed),
           atomic_load(&tot->plain_by_elf), atomic_load(&tot->plain_by_map));
    printf("| failed trials | %" PRIu64 " |\n", failed);
    (void)trials;
}

int main(void)
{
    builddir = getenv("PT_BUILDDIR");
    if (!builddir)
        builddir = ".";
    static char cli_b[4200], prod_b[4200], hook_b[4200];
    snprintf(cli_b, sizeof cli_b, "%s/tools/perftramp", builddir);
    snprintf(prod_b, sizeof prod_b, "%s/tests/torture/crash_producer", builddir);
    snprintf(hook_b, sizeof hook_b, "%s/tests/torture/.libs/crash_hook.so", builddir);
    cli = cli_b;
    producer = prod_b;
    hook = hook_b;
    static const char *const ids[] = {"crash.jitdump", "crash.perfmap", "crash.elf"};
    for (size_t i = 0; i < 3; i++)
        if (access(i == 0 ? cli : i == 1 ? producer : hook, X_OK | R_OK) != 0) {
            for (size_t k = 0; k < 3; k++)
                printf("PROOF: %s not-run %s is not built\n", ids[k], i == 0 ? cli : i == 1 ? producer : hook);
            printf("SKIP: %s is not built\n", i == 0 ? cli : i == 1 ? producer : hook);
            return 77;
        }
    const char *e = getenv("PT_CRASH_TRIALS");
    uint64_t trials = e ? strtoull(e, NULL, 10) : 100;
    e = getenv("PT_CRASH_JOBS");
    unsigned jobs = e ? (unsigned)atoi(e) : 2;
    e = getenv("PT_CRASH_PERF_EVERY");
    unsigned perf_every = e ? (unsigned)atoi(e) : 10;
    uint64_t seed;
    e = getenv("PT_CRASH_SEED");
    if (e)
        seed = strtoull(e, NULL, 10);
    else
        seed = mix((uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32));
    e = getenv("PT_CRASH_ONLY");
    int64_t only = e ? (int64_t)strtoull(e, NULL, 10) : -1;
    if (jobs < 1)
        jobs = 1;
    char text[2048];
    int prc = crash_run((char *const[]){"perf", "record", "-q", "-k", "1", "-e", "cpu-clock", "-o", "/dev/null", "--",
                                        "true", NULL},
                        text, sizeof text);
    perf_ok = prc == 0;
    unsigned major, minor;
    if (crash_run((char *const[]){"perf", "version", NULL}, text, sizeof text) == 0 &&
        sscanf(text, "perf version %u.%u", &major, &minor) == 2)
        snprintf(perf_version, sizeof perf_version, "%u.%u", major, minor);
    snprintf(perf_why, sizeof perf_why, "perf record -k 1 -e cpu-clock true: exit %d: %.120s", prc, text);
    if (!perf_ok)
        perf_every = 0;
    else if (!perf_every)
        snprintf(perf_why, sizeof perf_why, "PT_CRASH_PERF_EVERY=0");
    if (!CRASH_HOOK_USABLE)
        printf("NOTRUN: the kill hook: an AddressSanitizer build (its runtime must come first, its interceptors "
               "hold memcpy and mmap): every trial killed by a timer\n");
    printf("crash torture: %" PRIu64 " trials, seed %" PRIu64 " (PT_CRASH_SEED=%" PRIu64 " PT_CRASH_ONLY=<trial> replays one), "
           "%u at once\n",
           trials, seed, seed, jobs);
    fflush(stdout);
    tot = mmap(NULL, sizeof *tot, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (tot == MAP_FAILED)
        return 99;
    double start = now_s();
    pid_t workers[64];
    unsigned nw = jobs < 64 ? jobs : 64;
    for (unsigned w = 0; w < nw; w++) {
        workers[w] = fork();
        if (workers[w] != 0)
            continue;
        for (uint64_t t = w; t < trials; t += nw) {
            if (only >= 0 && t != (uint64_t)only)
                continue;
            struct plan pl = make_plan(seed, t, perf_every);
            char why[2048];
            int r = run_trial(&pl, why, sizeof why);
            atomic_fetch_add(&tot->trials, 1);
            atomic_fetch_add(&tot->elf_trials, pl.elf);
            if (r != 0) {
                atomic_fetch_add(&tot->failures, 1);
                printf("FAIL trial %" PRIu64 " (seed %" PRIu64 ", %s, %s %s #%" PRIu64 ", %u ms%s): %s\n", t, seed,
                       pl.elf ? "all outputs" : "no ELF", pl.timer ? "timer" : "hook",
                       pl.timer ? "" : crash_event_name(pl.event), pl.nth, pl.delay_ms, pl.perf ? ", perf" : "", why);
                fflush(stdout);
            }
        }
        _exit(0);
    }
    for (unsigned w = 0; w < nw; w++)
        waitpid(workers[w], NULL, 0);
    double secs = now_s() - start;
    report(seed, trials, secs, nw, perf_every);
    uint64_t t = atomic_load(&tot->trials), ok = t - atomic_load(&tot->failures);
    uint64_t et = atomic_load(&tot->elf_trials);
    bool perf_seen = atomic_load(&tot->perf_trials) > 0;
    /* under perf, each output named frames: none seen is a failure */
    bool jit_named = atomic_load(&tot->jit_by_jitted) > 0, map_named = atomic_load(&tot->plain_by_map) > 0,
         elf_named = atomic_load(&tot->plain_by_elf) > 0;
    if (!perf_seen) {
        printf("PROOF: crash.jitdump not-run no trial ran under perf: %s\n", perf_why);
        printf("PROOF: crash.perfmap not-run no trial ran under perf: %s\n", perf_why);
    } else {
        printf("PROOF: crash.jitdump %s trials %" PRIu64 "/%" PRIu64 ": %" PRIu64 " complete LOADs kept, %" PRIu64
               " lost; %" PRIu64 " uncommitted last groups, each reported at its offset by perftramp check; killed "
               "inside a group's copy %" PRIu64 " times; perf inject named %" PRIu64 "/%" PRIu64
               " trampoline frames in %" PRIu64 " trials under perf\n",
               ok == t && t && jit_named ? "proven" : "failed", ok, t, atomic_load(&tot->loads),
               atomic_load(&tot->loads_lost),
               atomic_load(&tot->uncommitted), atomic_load(&tot->in_dump_record), atomic_load(&tot->jit_named),
               atomic_load(&tot->jit_named) + atomic_load(&tot->jit_unnamed), atomic_load(&tot->perf_trials));
        printf("PROOF: crash.perfmap %s trials %" PRIu64 "/%" PRIu64 ": %" PRIu64 " whole lines kept, %" PRIu64
               " lost, %" PRIu64 " torn; killed inside a write cut at a page %" PRIu64 " times; perf named %" PRIu64
               " trampoline frames by the map\n",
               ok == t && t && map_named ? "proven" : "failed", ok, t, atomic_load(&tot->lines),
               atomic_load(&tot->lines_lost),
               atomic_load(&tot->torn_lines), atomic_load(&tot->in_map_line), atomic_load(&tot->plain_by_map));
    }
    printf("PROOF: crash.elf %s elf-trials %" PRIu64 "/%" PRIu64 ": %" PRIu64 " arenas complete, %" PRIu64
           " incomplete (perftramp check said so); %" PRIu64 " symbols kept, %" PRIu64
           " lost; killed inside an arena write %" PRIu64 " times; perftramp clean removed %" PRIu64
           " dead files, kept a live reused pid's arena %" PRIu64 " times; perf named %" PRIu64
           " trampoline frames by an arena\n",
           et && atomic_load(&tot->failures) == 0 && atomic_load(&tot->reuse_checks) > 0 && (elf_named || !perf_seen)
               ? "proven"
               : "failed",
           atomic_load(&tot->failures) ? 0 : et, et, atomic_load(&tot->arenas) - atomic_load(&tot->arenas_incomplete),
           atomic_load(&tot->arenas_incomplete), atomic_load(&tot->symbols), atomic_load(&tot->symbols_lost),
           atomic_load(&tot->in_elf_write), atomic_load(&tot->cleaned), atomic_load(&tot->reuse_checks),
           atomic_load(&tot->plain_by_elf));
    return atomic_load(&tot->failures) || t == 0 ? 1 : 0;
}
