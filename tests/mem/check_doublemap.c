/* SPDX-License-Identifier: MIT */
/* Code memory that is written at one address and executed at another.
 *
 * 1. Through perftramp, with a libffi stand-in: this file defines
 *    ffi_closure_alloc/ffi_closure_free over a real memfd double mapping,
 *    in three modes.  DOUBLE_MAP is a hardened libffi (RW and RX views:
 *    perftramp writes through one address and executes the other).
 *    MISALIGNED hands out closures at 8 mod 16, which is all libffi
 *    promises.  STATIC_TRAMPOLINES is a libffi with static trampolines:
 *    the code pointer is a shared trampoline, not our bytes, and the
 *    closure header holds what ffi_closure_free dereferences (the
 *    stand-in aborts when the header was written, where the real libffi
 *    crashed with SIGBUS); perftramp must fall back to its own memory.
 * 2. perftramp's own double mapping (pt_code_doublemap), directly: each
 *    way of getting memory (shared-anon, memfd, tmpfile), reached by
 *    refusing the ways before it with a seccomp filter in a child process,
 *    as SELinux, old kernels or sandboxes would; and a failure forced at
 *    every step, which must give a clean errno and leak nothing. */
#include "config.h"

#include "perftramp.h"
#include "emit/layout.h"
#include "mem/codemem.h"
#include "mem/icache.h"

#include <check.h>
#include "../lib/check_run.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ffi.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* ---- the libffi stand-in ------------------------------------------- */

enum mode { DOUBLE_MAP, MISALIGNED, STATIC_TRAMPOLINES };
static enum mode mode = DOUBLE_MAP;
static int live_mappings, alloc_calls, intact_frees;

struct mapping {
    void *w, *x;  /* what ffi_closure_alloc returned */
    void *mw, *mx; /* the mappings */
    size_t size;
};
static struct mapping maps[64];

/* What a static-trampoline libffi keeps in the closure header (its
 * ftramp pointer): perftramp must never write there. */
static const uint8_t header_canary = 0xa5;

static void decoy(void)
{
}

void *ffi_closure_alloc(size_t size, void **code)
{
    alloc_calls++;
    size_t skew = mode == MISALIGNED ? 8 : 0;
    size_t len = (size + skew + 4095) & ~(size_t)4095;
    int fd = memfd_create("ffi-stand-in", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)len) != 0)
        return NULL;
    uint8_t *w = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    uint8_t *x = mmap(NULL, len, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    close(fd);
    if (w == MAP_FAILED || x == MAP_FAILED)
        return NULL;
    for (size_t i = 0; i < 64; i++)
        if (!maps[i].w) {
            maps[i] = (struct mapping){w + skew, x + skew, w, x, len};
            live_mappings++;
            if (mode == STATIC_TRAMPOLINES) {
                memset(w, header_canary, sizeof(ffi_closure));
                *code = (void *)(uintptr_t)decoy;
            } else {
                *code = x + skew;
            }
            return w + skew;
        }
    return NULL;
}

void ffi_closure_free(void *w)
{
    for (size_t i = 0; i < 64; i++)
        if (maps[i].w == w) {
            if (mode == STATIC_TRAMPOLINES) {
                for (size_t k = 0; k < sizeof(ffi_closure); k++)
                    if (((uint8_t *)w)[k] != header_canary) {
                        fprintf(stderr, "ffi_closure_free: the closure header was written (byte %zu)\n", k);
                        abort(); /* the real libffi dereferences it: SIGBUS */
                    }
                intact_frees++;
            }
            munmap(maps[i].mw, maps[i].size);
            munmap(maps[i].mx, maps[i].size);
            maps[i] = (struct mapping){0};
            live_mappings--;
            return;
        }
    abort(); /* freeing what was never allocated */
}

static bool in_stand_in(uintptr_t a)
{
    for (size_t k = 0; k < 64; k++)
        if (maps[k].mw && ((a >= (uintptr_t)maps[k].mx && a < (uintptr_t)maps[k].mx + maps[k].size) ||
                           (a >= (uintptr_t)maps[k].mw && a < (uintptr_t)maps[k].mw + maps[k].size)))
            return true;
    return false;
}

static void use_mode(enum mode m)
{
    mode = m;
    pt_code_choice_reset(); /* CK_FORK=no runs every case in one process */
}

/* ---- helpers ----------------------------------------------------- */

static long add_5(long x)
{
    return x + 5;
}

static double scale(double a, int k)
{
    return a * k;
}

/* The /proc/self/maps line of the mapping holding addr: perms (4 chars),
 * inode and path.  false when none holds it. */
struct maps_line {
    char perms[5];
    unsigned long inode;
    char path[512];
};

static bool maps_of(uintptr_t addr, struct maps_line *out)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return false;
    char line[1024];
    bool found = false;
    while (!found && fgets(line, sizeof line, f)) {
        unsigned long lo, hi, off, inode;
        char perms[5], dev[16];
        int n = 0;
        if (sscanf(line, "%lx-%lx %4s %lx %15s %lu %n", &lo, &hi, perms, &off, dev, &inode, &n) < 6)
            continue;
        if (addr < lo || addr >= hi)
            continue;
        found = true;
        memcpy(out->perms, perms, 5);
        out->inode = inode;
        snprintf(out->path, sizeof out->path, "%s", line + n);
        out->path[strcspn(out->path, "\n")] = 0;
    }
    fclose(f);
    return found;
}

/* How many mappings' paths contain `what`. */
static int maps_count(const char *what)
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return -1;
    char line[1024];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, what) != NULL;
    fclose(f);
    return n;
}

static int open_fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    if (!d)
        return -1;
    int n = 0;
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Whether this process can alias shared memory with mremap(old_size 0),
 * the first way pt_code_doublemap tries.  The kernel can; valgrind
 * cannot (it refuses the call), so there the memfd comes first. */
static bool mremap_can_alias(void)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    void *a = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (a == MAP_FAILED)
        return false;
    void *b = mremap(a, 0, page, MREMAP_MAYMOVE);
    munmap(a, page);
    if (b == MAP_FAILED)
        return false;
    munmap(b, page);
    return true;
}

/* The RX view of our own memory when nothing is refused. */
static const char *first_way_path(void)
{
    return mremap_can_alias() ? "/dev/zero" : "/memfd:perftramp-code";
}

/* ---- 1. through perftramp ------------------------------------------ */

START_TEST(hardened_libffi_writes_through_w_executes_x)
{
    use_mode(DOUBLE_MAP);
    static struct perftramp_options opts;
    perftramp *pt = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt);
    static perftramp_fn t[5000];
    for (int i = 0; i < 5000; i++) {
        t[i] = perftramp_wrap(pt, i % 2 ? (perftramp_fn)add_5 : (perftramp_fn)scale, "doublemap");
        ck_assert_ptr_nonnull(t[i]);
        /* the trampoline is in an RX mapping, never the RW one */
        int in_x = 0;
        for (size_t k = 0; k < 64; k++)
            if (maps[k].x && (uintptr_t)t[i] >= (uintptr_t)maps[k].mx &&
                (uintptr_t)t[i] < (uintptr_t)maps[k].mx + maps[k].size)
                in_x = 1;
        ck_assert(in_x);
    }
    ck_assert_ptr_eq(pt_code_backend_chosen(), &pt_code_ffi); /* libffi stays the first choice */
    ck_assert_int_gt(live_mappings, 1);                        /* several arenas */
    for (int i = 0; i < 5000; i++) {
        if (i % 2)
            ck_assert_int_eq(((long (*)(long))t[i])(i), i + 5);
        else
            ck_assert(((double (*)(double, int))t[i])(1.5, i) == 1.5 * i);
    }
    /* release and reuse go through the writable alias too */
    ck_assert_int_eq(perftramp_release(pt, t[1]), 0);
    perftramp_fn again = perftramp_wrap(pt, (perftramp_fn)add_5, "again");
    ck_assert_ptr_eq(again, t[1]);
    ck_assert_int_eq(((long (*)(long))again)(1), 6);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_int_eq(live_mappings, 0); /* every arena freed */
}
END_TEST

/* ffi_closure_alloc guarantees 8 bytes; trampolines start at code_align. */
START_TEST(arena_base_is_aligned)
{
    use_mode(MISALIGNED);
    size_t align = pt_arch_host()->code_align;
    static struct perftramp_options opts;
    perftramp *pt = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt);
    size_t misaligned_closures = 0;
    for (int i = 0; i < 3000; i++) {
        perftramp_fn t = perftramp_wrap(pt, (perftramp_fn)add_5, "aligned");
        ck_assert_ptr_nonnull(t);
        ck_assert_msg((uintptr_t)t % align == 0, "trampoline %p not aligned to %zu", (void *)t, align);
        ck_assert_int_eq(((long (*)(long))t)(i), i + 5);
    }
    for (size_t k = 0; k < 64; k++)
        if (maps[k].x)
            misaligned_closures += (uintptr_t)maps[k].x % 16 == 8;
    ck_assert_uint_gt(misaligned_closures, 1); /* the stand-in really was at 8 mod 16 */
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_int_eq(live_mappings, 0);
}
END_TEST

START_TEST(static_trampolines_fall_back_to_own_memory)
{
    use_mode(STATIC_TRAMPOLINES);
    intact_frees = alloc_calls = 0;
    static struct perftramp_options opts;
    perftramp *pt = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt);
    static perftramp_fn t[3000];
    for (int i = 0; i < 3000; i++) {
        t[i] = perftramp_wrap(pt, (perftramp_fn)add_5, "own memory");
        ck_assert_msg(t[i] != NULL, "wrap %d: errno %d", i, errno);
        ck_assert(!in_stand_in((uintptr_t)t[i]));
        ck_assert_int_eq(((long (*)(long))t[i])(i), i + 5);
    }
    /* one probe closure, given back with its header intact; none used */
    ck_assert_int_eq(alloc_calls, 1);
    ck_assert_int_eq(intact_frees, 1);
    ck_assert_int_eq(live_mappings, 0);
    ck_assert_ptr_eq(pt_code_backend_chosen(), &pt_code_doublemap);
    /* executed from a read-execute shared view whose pages are also
     * mapped read-write elsewhere (same inode) */
    struct maps_line x;
    ck_assert(maps_of((uintptr_t)t[0], &x));
    printf("static trampolines: trampoline %p in \"%s\" %s\n", (void *)t[0], x.path, x.perms);
    ck_assert_str_eq(x.perms, "r-xs");
    /* shared-anon: perf takes it for anonymous memory */
    ck_assert_msg(strstr(x.path, first_way_path()) != NULL, "want %s", first_way_path());
    /* release traps and reuses through the writable view */
    ck_assert_int_eq(perftramp_release(pt, t[7]), 0);
    perftramp_fn again = perftramp_wrap(pt, (perftramp_fn)scale, "again");
    ck_assert_ptr_eq(again, t[7]);
    ck_assert(((double (*)(double, int))again)(2.5, 4) == 10.0);
    /* a second context asks libffi nothing: the choice was made once */
    perftramp *pt2 = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt2);
    ck_assert_ptr_nonnull(perftramp_wrap(pt2, (perftramp_fn)add_5, "second"));
    ck_assert_int_eq(alloc_calls, 1);
    ck_assert_int_eq(perftramp_close(pt2), 0);
    ck_assert_int_gt(maps_count(first_way_path()), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_int_eq(maps_count(first_way_path()), 0); /* every view unmapped */
    use_mode(DOUBLE_MAP);
}
END_TEST

static long add_7(long x)
{
    return x + 7;
}

/* MAP_SHARED code memory must not stay shared across fork: here the
 * child releases and refills slots and the parent releases one, and each
 * side's trampolines keep calling their own targets. */
START_TEST(fork_parts_parent_and_child)
{
    use_mode(STATIC_TRAMPOLINES);
    struct perftramp_options opts = {.flags = PERFTRAMP_ATFORK};
    perftramp *pt = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt);
    enum { N = 3000 }; /* two arenas on every table */
    static perftramp_fn t[N];
    for (int i = 0; i < N; i++)
        ck_assert_ptr_nonnull(t[i] = perftramp_wrap(pt, (perftramp_fn)add_5, "parent"));
    ck_assert_ptr_eq(pt_code_backend_chosen(), &pt_code_doublemap);
    int to_parent[2], to_child[2];
    ck_assert_int_eq(pipe(to_parent), 0);
    ck_assert_int_eq(pipe(to_child), 0);
    fflush(stdout);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        /* the child: free every odd trampoline, fill the slots with add_7 */
        int bad = 0;
        char c;
        for (int i = 1; i < N; i += 2)
            bad |= perftramp_release(pt, t[i]) != 0;
        for (int i = 1; i < N; i += 2)
            bad |= perftramp_wrap(pt, (perftramp_fn)add_7, "child") == NULL;
        bad |= write(to_parent[1], "c", 1) != 1;
        bad |= read(to_child[0], &c, 1) != 1; /* the parent released t[0] */
        for (int i = 0; i < N; i += 2)
            bad |= ((long (*)(long))t[i])(i) != i + 5;
        _exit(bad ? 3 : 0);
    }
    char c;
    ck_assert_int_eq(read(to_parent[0], &c, 1), 1);
    /* the child's traps and add_7 trampolines are not here */
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(((long (*)(long))t[i])(i), i + 5);
    ck_assert_int_eq(perftramp_release(pt, t[0]), 0); /* a trap, here only */
    ck_assert_int_eq(write(to_child[1], "p", 1), 1);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    for (int i = 1; i < N; i++)
        ck_assert_int_eq(((long (*)(long))t[i])(i), i + 5);
    ck_assert_int_eq(perftramp_close(pt), 0);
    for (int k = 0; k < 2; k++) {
        close(to_parent[k]);
        close(to_child[k]);
    }
    use_mode(DOUBLE_MAP);
}
END_TEST

START_TEST(probe_reads_libffi_without_writing_the_header)
{
    use_mode(STATIC_TRAMPOLINES);
    intact_frees = 0;
    ck_assert_int_eq(pt_ffi_closures_are_code(), 0);
    ck_assert_int_eq(intact_frees, 1);
    use_mode(DOUBLE_MAP);
    ck_assert_int_eq(pt_ffi_closures_are_code(), 1);
    use_mode(MISALIGNED);
    ck_assert_int_eq(pt_ffi_closures_are_code(), 1);
    ck_assert_int_eq(live_mappings, 0);
    use_mode(DOUBLE_MAP);
}
END_TEST

/* ---- 2. the double mapping itself ----------------------------------- */

/* A real trampoline written through b->w, called through b->x. */
static const char *runs_a_trampoline(const struct pt_code_block *b)
{
    const struct pt_arch *arch = pt_arch_host();
    struct pt_layout l;
    if (!arch || pt_layout_build(&l, arch, NULL) < 0)
        return "no host table";
    pt_layout_write(&l, b->w, (uint64_t)(uintptr_t)add_5, 1);
    pt_icache_flush(arch, b->x, l.size);
    return ((long (*)(long))b->x)(37) == 42 ? NULL : "the trampoline returned a wrong value";
}

/* What a child reports back: a failed check's text, or nothing. */
static char verdict[2048];

#define EXPECT(cond, ...)                                                                          \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            snprintf(verdict, sizeof verdict, __VA_ARGS__);                                        \
            return;                                                                                \
        }                                                                                          \
    } while (0)

/* seccomp: refuse some system calls with an errno, as a policy would.  A
 * rule matches syscall nr when every condition (low 32 bits of an
 * argument, masked, equal to a value) holds.  Test-only: no architecture
 * check, so not a security boundary. */
struct cond {
    int arg;
    uint32_t mask, value;
};
struct rule {
    long nr;
    int n_conds;
    struct cond c[2];
    int err;
};

static uint32_t arg_low_word(int i)
{
    return (uint32_t)(offsetof(struct seccomp_data, args) + 8 * (size_t)i +
                      (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__ ? 4 : 0));
}

static int refuse(const struct rule *r, size_t n)
{
    struct sock_filter prog[64];
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        int nc = r[i].n_conds;
        if (k + 3 + 3 * (size_t)nc >= sizeof prog / sizeof prog[0])
            return -1;
        prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr));
        prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (uint32_t)r[i].nr, 0,
                                                 (uint8_t)(3 * nc + 1));
        for (int c = 0; c < nc; c++) {
            prog[k++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS, arg_low_word(r[i].c[c].arg));
            prog[k++] = (struct sock_filter)BPF_STMT(BPF_ALU | BPF_AND | BPF_K, r[i].c[c].mask);
            prog[k++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, r[i].c[c].value, 0,
                                                     (uint8_t)(3 * (nc - 1 - c) + 1));
        }
        prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K,
                                                 SECCOMP_RET_ERRNO | ((uint32_t)r[i].err & SECCOMP_RET_DATA));
    }
    prog[k++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
    struct sock_fprog fprog = {.len = (unsigned short)k, .filter = prog};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
        return -1;
    return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &fprog);
}

/* The refusals, one per step of pt_code_doublemap. */
/* 32-bit machines: glibc's mmap is the mmap2 system call, and its ftruncate
 * (64-bit file offsets) ftruncate64 */
#ifdef SYS_mmap2
#define SYS_MMAP SYS_mmap2
#else
#define SYS_MMAP SYS_mmap
#endif
#ifdef SYS_ftruncate64
#define SYS_FTRUNCATE SYS_ftruncate64
#else
#define SYS_FTRUNCATE SYS_ftruncate
#endif
#define O_TMPFILE_BIT ((uint32_t)(O_TMPFILE & ~O_DIRECTORY))
#define MPROTECT_EXEC(e) {SYS_mprotect, 1, {{2, PROT_EXEC, PROT_EXEC}}, (e)}
#define MREMAP(e) {SYS_mremap, 0, {{0}}, (e)}
#define MMAP_SHARED_ANON(e) {SYS_MMAP, 1, {{3, MAP_SHARED | MAP_ANONYMOUS, MAP_SHARED | MAP_ANONYMOUS}}, (e)}
#define MMAP_FILE_RW(e) \
    {SYS_MMAP, 2, {{3, MAP_SHARED | MAP_ANONYMOUS, MAP_SHARED}, {2, PROT_WRITE, PROT_WRITE}}, (e)}
#define MMAP_FILE_RX(e) \
    {SYS_MMAP, 2, {{3, MAP_SHARED | MAP_ANONYMOUS, MAP_SHARED}, {2, PROT_EXEC, PROT_EXEC}}, (e)}
#define MEMFD(e) {SYS_memfd_create, 0, {{0}}, (e)}
/* open(2) with O_TMPFILE: glibc makes it openat (flags: argument 2), musl
 * open (argument 1) where the architecture has that system call */
#ifdef SYS_open
#define OPEN_TMPFILE(e) \
    {SYS_openat, 1, {{2, O_TMPFILE_BIT, O_TMPFILE_BIT}}, (e)}, {SYS_open, 1, {{1, O_TMPFILE_BIT, O_TMPFILE_BIT}}, (e)}
#define OPEN_TMPFILE_RULES 2
#else
#define OPEN_TMPFILE(e) {SYS_openat, 1, {{2, O_TMPFILE_BIT, O_TMPFILE_BIT}}, (e)}
#define OPEN_TMPFILE_RULES 1
#endif
#define FTRUNCATE(e) {SYS_FTRUNCATE, 0, {{0}}, (e)}

struct scenario {
    const char *name;
    struct rule rules[4];
    size_t n_rules;
    int nofile_headroom; /* >= 0: RLIMIT_NOFILE = open fds + this (a real EMFILE) */
    int want_errno;      /* 0: must succeed */
    const char *want_kind;
    const char *want_path; /* in the RX mapping's /proc/self/maps path */
};

static const char *tmpdir(void)
{
    const char *t = getenv("TMPDIR");
    return t && *t ? t : "/tmp";
}

/* How many perftramp-code.* names are in the temporary directory. */
static int named_leftovers(void)
{
    DIR *d = opendir(tmpdir());
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strncmp(e->d_name, "perftramp-code.", 15) == 0;
    closedir(d);
    return n;
}

/* Runs in the child: the filter is for good. */
static void scenario_body(const struct scenario *s)
{
    int fds = open_fds(), anon = maps_count("/dev/zero"), memfds = maps_count("perftramp-code");
    int leftovers = named_leftovers();
    EXPECT(fds > 0 && anon >= 0 && memfds >= 0, "cannot read /proc/self");
    struct rlimit nofile;
    EXPECT(getrlimit(RLIMIT_NOFILE, &nofile) == 0, "getrlimit: %s", strerror(errno));
    if (s->nofile_headroom >= 0) {
        /* every descriptor below the lowest free one is open: a limit
         * there makes the next open fail with EMFILE */
        int lowest = fcntl(0, F_DUPFD, 0);
        EXPECT(lowest >= 0, "F_DUPFD: %s", strerror(errno));
        close(lowest);
        struct rlimit rl = {(rlim_t)(lowest + s->nofile_headroom), nofile.rlim_max};
        EXPECT(setrlimit(RLIMIT_NOFILE, &rl) == 0, "setrlimit: %s", strerror(errno));
    }
    if (s->n_rules)
        EXPECT(refuse(s->rules, s->n_rules) == 0, "seccomp filter: %s", strerror(errno));
    struct pt_code_block b = {0};
    errno = 0;
    int r = pt_code_doublemap.alloc(&b, 65536, 16);
    int e = errno;
    EXPECT(setrlimit(RLIMIT_NOFILE, &nofile) == 0, "setrlimit: %s", strerror(errno)); /* the checks open files */
    if (s->want_errno) {
        EXPECT(r == -1 && e == s->want_errno, "alloc: %d, errno %d (%s), want -1 with %d (%s)", r, e,
               strerror(e), s->want_errno, strerror(s->want_errno));
        EXPECT(open_fds() == fds, "%d descriptors leaked", open_fds() - fds);
        EXPECT(maps_count("/dev/zero") == anon && maps_count("perftramp-code") == memfds, "a view leaked");
        EXPECT(named_leftovers() == leftovers, "a named temporary file was left in %s", tmpdir());
        return;
    }
    EXPECT(r == 0, "alloc failed: %s", strerror(e));
    const char *want_kind = s->want_kind, *want_path = s->want_path;
    if (!want_kind) { /* nothing refused: the first way that works here */
        want_kind = mremap_can_alias() ? "shared-anon" : "memfd";
        want_path = first_way_path();
    }
    EXPECT(strcmp(b.kind, want_kind) == 0, "memory kind %s, want %s", b.kind, want_kind);
    EXPECT((uintptr_t)b.w != b.x, "one address for writing and executing");
    EXPECT(b.x % 16 == 0 && b.bytes >= 65536, "x %#lx, %zu bytes", (unsigned long)b.x, b.bytes);
    struct maps_line lw, lx;
    EXPECT(maps_of((uintptr_t)b.w, &lw) && maps_of(b.x, &lx), "views not in /proc/self/maps");
    EXPECT(strcmp(lw.perms, "rw-s") == 0 && strcmp(lx.perms, "r-xs") == 0, "views %s and %s", lw.perms,
           lx.perms);
    EXPECT(lw.inode == lx.inode && strcmp(lw.path, lx.path) == 0, "views of different pages");
    EXPECT(strstr(lx.path, want_path) && strstr(lx.path, "(deleted)"), "RX view \"%s\", want %s, unlinked",
           lx.path, want_path);
    const char *why = runs_a_trampoline(&b);
    EXPECT(!why, "%s", why);
    EXPECT(named_leftovers() == leftovers, "a named temporary file was left in %s", tmpdir());
    EXPECT(open_fds() == fds, "%d descriptors kept open", open_fds() - fds);
    printf("  %s: %s, RX view \"%s\"\n", s->name, b.kind, lx.path);
    pt_code_free(&b);
    EXPECT(maps_count("/dev/zero") == anon && maps_count("perftramp-code") == memfds, "views not unmapped");
}

static void run_scenario(const struct scenario *s)
{
    fflush(stdout);
    int p[2];
    ck_assert_int_eq(pipe(p), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(p[0]);
        verdict[0] = 0;
        scenario_body(s);
        fflush(stdout);
        ssize_t n = write(p[1], verdict, strlen(verdict));
        _exit(n < 0 ? 2 : 0);
    }
    close(p[1]);
    char got[sizeof verdict] = {0};
    ssize_t n = read(p[0], got, sizeof got - 1);
    close(p[0]);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s: child died (status %#x)", s->name, status);
    ck_assert_msg(n <= 0, "%s: %s", s->name, got);
}

#define NO_LIMIT -1
static const struct scenario ways[] = {
    {"nothing refused", {{0}}, 0, NO_LIMIT, 0, NULL, NULL},
    {"executable shared anonymous memory refused (SELinux execmem)", {MPROTECT_EXEC(EACCES)}, 1, NO_LIMIT, 0,
     "memfd", "/memfd:perftramp-code"},
    {"mremap cannot alias", {MREMAP(EINVAL)}, 1, NO_LIMIT, 0, "memfd", "/memfd:perftramp-code"},
    {"no memfd_create either (Linux < 3.17, a sandbox)", {MPROTECT_EXEC(EACCES), MEMFD(ENOSYS)}, 2, NO_LIMIT, 0,
     "tmpfile", "/"},
    {"no O_TMPFILE: mkostemp + unlink", {MPROTECT_EXEC(EACCES), MEMFD(ENOSYS), OPEN_TMPFILE(EOPNOTSUPP)}, 2 + OPEN_TMPFILE_RULES,
     NO_LIMIT, 0, "tmpfile", "/perftramp-code."},
};

static const struct scenario failures[] = {
    {"every executable shared mapping refused", {MPROTECT_EXEC(EACCES), MMAP_FILE_RX(EACCES)}, 2, NO_LIMIT,
     EACCES, NULL, NULL},
    {"noexec everywhere, no memfd", {MPROTECT_EXEC(EPERM), MEMFD(ENOSYS), MMAP_FILE_RX(EPERM)}, 3, NO_LIMIT,
     EACCES, NULL, NULL},
    {"out of memory for the first view", {MMAP_SHARED_ANON(ENOMEM)}, 1, NO_LIMIT, ENOMEM, NULL, NULL},
    {"out of memory for a file view", {MPROTECT_EXEC(EACCES), MMAP_FILE_RW(ENOMEM)}, 2, NO_LIMIT, ENOMEM, NULL,
     NULL},
    {"out of memory for the RX file view", {MPROTECT_EXEC(EACCES), MMAP_FILE_RX(ENOMEM)}, 2, NO_LIMIT, ENOMEM,
     NULL, NULL},
    {"memfd_create out of descriptors", {MPROTECT_EXEC(EACCES), MEMFD(ENFILE)}, 2, NO_LIMIT, ENFILE, NULL, NULL},
    {"out of descriptors for real (RLIMIT_NOFILE)", {MPROTECT_EXEC(EACCES)}, 1, 0, EMFILE, NULL, NULL},
    {"O_TMPFILE out of descriptors", {MPROTECT_EXEC(EACCES), MEMFD(ENOSYS), OPEN_TMPFILE(EMFILE)}, 2 + OPEN_TMPFILE_RULES, NO_LIMIT,
     EMFILE, NULL, NULL},
    {"files cannot grow (ftruncate)", {MPROTECT_EXEC(EACCES), FTRUNCATE(EFBIG)}, 2, NO_LIMIT, EFBIG, NULL, NULL},
};

START_TEST(each_way_of_mapping)
{
    run_scenario(&ways[_i]);
}
END_TEST

START_TEST(each_failure_is_clean)
{
    run_scenario(&failures[_i]);
}
END_TEST

START_TEST(alignment)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    size_t aligns[] = {1, 8, 16, 64, page};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        struct pt_code_block b;
        ck_assert_int_eq(pt_code_doublemap.alloc(&b, 100, aligns[i]), 0);
        ck_assert_uint_eq(b.x % aligns[i], 0);
        ck_assert_uint_ge(b.bytes, 100);
        pt_code_free(&b);
    }
    size_t bad[] = {0, 24, page * 2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        struct pt_code_block b;
        errno = 0;
        ck_assert_int_eq(pt_code_doublemap.alloc(&b, 100, bad[i]), -1);
        ck_assert_int_eq(errno, EINVAL);
    }
}
END_TEST

/* The libffi backend aligns what ffi_closure_alloc gives (here 8 mod 16)
 * and never hands out the closure header. */
START_TEST(ffi_backend_alignment)
{
    use_mode(MISALIGNED);
    size_t aligns[] = {16, 64, 256};
    for (size_t i = 0; i < sizeof aligns / sizeof aligns[0]; i++) {
        struct pt_code_block b;
        ck_assert_int_eq(pt_code_ffi.alloc(&b, 1000, aligns[i]), 0);
        ck_assert_uint_eq((uintptr_t)b.base % 16, 8);
        ck_assert_uint_eq(b.x % aligns[i], 0);
        ck_assert_uint_ge(b.bytes, 1000);
        ck_assert_uint_ge((uintptr_t)b.w - (uintptr_t)b.base, sizeof(ffi_closure));
        ck_assert_ptr_null(runs_a_trampoline(&b));
        pt_code_free(&b);
    }
    ck_assert_int_eq(live_mappings, 0);
    use_mode(DOUBLE_MAP);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("doublemap");
    TCase *t = tcase_create("libffi");
    tcase_add_test(t, hardened_libffi_writes_through_w_executes_x);
    tcase_add_test(t, arena_base_is_aligned);
    tcase_add_test(t, static_trampolines_fall_back_to_own_memory);
    tcase_add_test(t, probe_reads_libffi_without_writing_the_header);
    tcase_add_test(t, fork_parts_parent_and_child);
    tcase_add_test(t, ffi_backend_alignment);
    suite_add_tcase(s, t);
    TCase *own = tcase_create("own double map");
    tcase_add_test(own, alignment);
    tcase_add_loop_test(own, each_way_of_mapping, 0, (int)(sizeof ways / sizeof ways[0]));
    tcase_add_loop_test(own, each_failure_is_clean, 0, (int)(sizeof failures / sizeof failures[0]));
    suite_add_tcase(s, own);
    int failed = pt_check_run(s);
    return failed ? 1 : 0;
}
