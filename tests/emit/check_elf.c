/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_ELF without perf: the files, names that stay true, the
 * lifetime rules and the faults.  Every fault disables the output with
 * its errno (perftramp_output_error) and the trampolines keep working from
 * the usual memory.  (tests/perf/elf_perf.sh proves what perf sees.) */
#include "config.h"

#include "api/context.h"
#include "emit/eh_frame.h"
#include "emit/elf_image.h"
#include "mem/elf_arena.h"
#include "outputs/gdb_chunk.h"
#include "read/elf_arena_check.h"
#include "read/elf_reader.h"

#include <check.h>
#include "../lib/check_run.h"
#include "../lib/every_table.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

static long add1(long x)
{
    return x + 1;
}

static char dir[256];

static void setup(void)
{
    snprintf(dir, sizeof dir, "%s/perftramp-check-elf-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void teardown(void)
{
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    ck_assert_int_eq(system(cmd), 0);
}

static perftramp *open_elf(const char *d)
{
    struct perftramp_options o = {.outputs = PERFTRAMP_ELF, .elf_dir = d};
    perftramp *pt = perftramp_open(&o);
    ck_assert_ptr_nonnull(pt);
    return pt;
}

static long (*wrap(perftramp *pt, const char *name))(long)
{
    perftramp_fn f = perftramp_wrap(pt, (perftramp_fn)add1, name);
    ck_assert_ptr_nonnull(f);
    return (long (*)(long))f;
}

static int count_maps(const char *needle)
{
    FILE *f = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    int n = 0;
    while (fgets(line, sizeof line, f))
        n += strstr(line, needle) != NULL;
    fclose(f);
    return n;
}

static bool file_exists(const char *name)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    return access(p, F_OK) == 0;
}

START_TEST(env_words)
{
    unsigned bits;
    ck_assert_int_eq(pt_parse_outputs("elf", &bits), 0);
    ck_assert_uint_eq(bits, PERFTRAMP_ELF);
    ck_assert_int_eq(pt_parse_outputs("perfmap,elf", &bits), 0);
    ck_assert_uint_eq(bits, PERFTRAMP_ELF | PERFTRAMP_PERF_MAP);
    ck_assert_int_eq(pt_parse_outputs("all", &bits), 0);
    ck_assert_uint_eq(bits & PERFTRAMP_ELF, 0); /* all: the four that leave nothing behind */
}
END_TEST

START_TEST(file_written_and_trampolines_run)
{
    perftramp *pt = open_elf(dir);
    long (*f)(long) = wrap(pt, "py::a");
    ck_assert_int_eq(f(41), 42);
    char name[64];
    snprintf(name, sizeof name, "perftramp-%ld-0.so", (long)getpid());
    ck_assert(file_exists(name));
    /* the executable view, and the writable one merged with the name
     * tables' view (adjacent in memory and in the file) */
    ck_assert_int_eq(count_maps(name), 2);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert(file_exists(name)); /* stays after close: perf reads it later */
}
END_TEST

START_TEST(released_slot_not_recycled)
{
    perftramp *pt = open_elf(dir);
    perftramp_fn a = (perftramp_fn)wrap(pt, "py::a");
    ck_assert_int_eq(perftramp_release(pt, a), 0);
    perftramp_fn b = (perftramp_fn)wrap(pt, "py::b");
    ck_assert_ptr_ne((void *)a, (void *)b); /* a's address keeps its name in the file */
    ck_assert_int_eq(perftramp_close(pt), 0);
    /* without ELF, the slot comes back at once */
    struct perftramp_options o = {.outputs = 0};
    pt = perftramp_open(&o);
    a = perftramp_wrap(pt, (perftramp_fn)add1, "a");
    ck_assert_int_eq(perftramp_release(pt, a), 0);
    ck_assert_ptr_eq((void *)perftramp_wrap(pt, (perftramp_fn)add1, "b"), (void *)a);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* Names longer than the .strtab room (PT_ELF_STR_ROOM a slot) fill it,
 * then go past it with pwrite: readelf must find every one, whole, with
 * its own address, and some file must have grown past its page-rounded
 * room (the pwrite path really ran). */
START_TEST(long_names_past_the_room)
{
    enum { N = 600, LEN = 200 };
    perftramp *pt = open_elf(dir);
    for (int i = 0; i < N; i++) {
        char name[LEN + 1];
        snprintf(name, sizeof name, "py::long_%04d_", i);
        memset(name + strlen(name), 'x', LEN - strlen(name));
        name[LEN] = 0;
        ck_assert_int_eq(wrap(pt, name)(i), i + 1);
    }
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd,
             "cd '%s' && for f in perftramp-*.so; do readelf -sW \"$f\" | sed \"s|^|$f |\"; done | "
             "awk '$5 == \"FUNC\" && $9 ~ /^py::long_[0-9][0-9][0-9][0-9]_x+$/ && length($9) == %d { print $1, $3 }' | sort -u | wc -l",
             dir, LEN);
    FILE *r = popen(cmd, "r");
    ck_assert_ptr_nonnull(r);
    int found = -1;
    ck_assert_int_eq(fscanf(r, "%d", &found), 1);
    pclose(r);
    ck_assert_int_eq(found, N); /* N names, N distinct (file, address) pairs */
    snprintf(cmd, sizeof cmd, "cd '%s' && for f in perftramp-*.so; do echo $(($(stat -c %%s \"$f\") %% %ld)); done | grep -vc '^0$'",
             dir, sysconf(_SC_PAGESIZE));
    r = popen(cmd, "r");
    ck_assert_ptr_nonnull(r);
    int grown = -1;
    ck_assert_int_eq(fscanf(r, "%d", &grown), 1);
    pclose(r);
    ck_assert_int_ge(grown, 1);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* Runs `cmd` (in the test directory) and reads its whole output. */
static char *run_in_dir(const char *cmd)
{
    char full[1200];
    snprintf(full, sizeof full, "cd '%s' && { %s; } 2>&1", dir, cmd);
    FILE *r = popen(full, "r");
    ck_assert_ptr_nonnull(r);
    size_t cap = 1 << 16, len = 0, n;
    char *out = malloc(cap);
    ck_assert_ptr_nonnull(out);
    while ((n = fread(out + len, 1, cap - 1 - len, r)) > 0) {
        len += n;
        if (len == cap - 1) {
            cap *= 2;
            out = realloc(out, cap);
            ck_assert_ptr_nonnull(out);
        }
    }
    out[len] = 0;
    pclose(r);
    return out;
}

/* "<symbol> <addr2line of its first byte> <addr2line of its last byte>"
 * for every symbol of every arena file, one a line */
#define LINES_OF_EVERY_SYMBOL                                                                                    \
    "for f in perftramp-*.so; do nm -S \"$f\" > syms.txt; "                                                      \
    "while read a s t n; do printf '0x%s\\n0x%x\\n' $a $((0x$a + 0x$s - 1)); done < syms.txt | "               \
    "addr2line -e \"$f\" | paste -d ' ' - - | paste -d ' ' syms.txt - | cut -d ' ' -f 4-; done; rm -f syms.txt"

/* Every arena file: readelf decodes its DWARF without a complaint and
 * eu-elflint accepts it (when installed). */
static void dwarf_clean(void)
{
    char *out = run_in_dir("for f in perftramp-*.so; do readelf --debug-dump=info,abbrev,rawline,decodedline \"$f\"; "
                           "done | grep -i 'warning\\|error\\|corrupt' | head -n 3");
    ck_assert_msg(*out == 0, "readelf: %s", out);
    free(out);
    out = run_in_dir("if command -v eu-elflint > /dev/null; then for f in perftramp-*.so; do "
                     "eu-elflint --gnu-ld \"$f\" > lint.out || { echo \"$f:\"; head -n 3 lint.out; }; done; "
                     "rm -f lint.out; else echo 'eu-elflint: not installed, not run' >&2; fi");
    ck_assert_msg(*out == 0 || strstr(out, "not installed"), "eu-elflint: %s", out);
    if (*out)
        printf("%s", out);
    free(out);
}

/* perftramp_wrap_at: every slot with a file resolves to its file:line in
 * the arena file (first and last byte, addr2line reading .debug_line),
 * every slot without one to none; readelf and eu-elflint stay clean. */
START_TEST(source_lines_in_the_file)
{
    enum { N = 40 };
    perftramp *pt = open_elf(dir);
    for (int i = 0; i < N; i++) {
        char name[32], file[32];
        snprintf(name, sizeof name, "py::f%02d", i);
        snprintf(file, sizeof file, "/src/mod%02d.py", i);
        /* every third slot without a source position (wrap, or line 0) */
        perftramp_fn f = i % 3 == 1   ? perftramp_wrap(pt, (perftramp_fn)add1, name)
                         : i % 3 == 2 ? perftramp_wrap_at(pt, (perftramp_fn)add1, name, file, 0)
                                      : perftramp_wrap_at(pt, (perftramp_fn)add1, name, file, 100 + (unsigned)i);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(((long (*)(long))f)(i), i + 1);
    }
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    char *out = run_in_dir(LINES_OF_EVERY_SYMBOL);
    int with = 0, without = 0;
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
        int i;
        char first[300], last[300];
        ck_assert_msg(sscanf(l, "py::f%d %299s %299s", &i, first, last) == 3, "line '%s'", l);
        char want[64];
        if (i % 3 == 0)
            snprintf(want, sizeof want, "/src/mod%02d.py:%d", i, 100 + i);
        else
            snprintf(want, sizeof want, "??:?");
        ck_assert_msg(strcmp(first, want) == 0 && strcmp(last, want) == 0, "py::f%02d: %s %s, want %s", i, first,
                      last, want);
        *(i % 3 == 0 ? &with : &without) += 1;
    }
    free(out);
    ck_assert_int_eq(with, (N + 2) / 3);
    ck_assert_int_eq(without, N - (N + 2) / 3);
    dwarf_clean();
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* File names long enough to fill the .debug_info/.debug_line rooms: the
 * first slots resolve, the later ones get no line (never a wrong one),
 * the file stays valid DWARF and ELF, and the output stays on. */
START_TEST(lines_past_the_room)
{
    enum { N = 600, LEN = 300 }; /* past the room of a first arena of ~1000 packed slots */
    perftramp *pt = open_elf(dir);
    char file[LEN + 1];
    memset(file, 'd', LEN);
    file[0] = '/';
    memcpy(file + LEN - 3, ".py", 4);
    for (int i = 0; i < N; i++) {
        char name[32];
        snprintf(name, sizeof name, "py::g%03d", i);
        perftramp_fn f = perftramp_wrap_at(pt, (perftramp_fn)add1, name, file, 1 + (unsigned)i);
        ck_assert_ptr_nonnull(f);
        ck_assert_int_eq(((long (*)(long))f)(i), i + 1);
    }
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    char *out = run_in_dir(LINES_OF_EVERY_SYMBOL);
    int resolved = 0, dropped = 0, first_dropped = N, last_resolved = -1;
    for (char *l = strtok(out, "\n"); l; l = strtok(NULL, "\n")) {
        int i;
        char first[400], last[400];
        ck_assert_msg(sscanf(l, "py::g%d %399s %399s", &i, first, last) == 3, "line '%s'", l);
        ck_assert_str_eq(first, last);
        if (strcmp(first, "??:?") == 0) {
            dropped++;
            first_dropped = i < first_dropped ? i : first_dropped;
            continue;
        }
        char want[LEN + 16];
        snprintf(want, sizeof want, "%s:%d", file, 1 + i);
        ck_assert_msg(strcmp(first, want) == 0, "py::g%03d: %s", i, first);
        resolved++;
        last_resolved = i > last_resolved ? i : last_resolved;
    }
    free(out);
    printf("lines_past_the_room: %d of %d slots with a line, %d past the room\n", resolved, N, dropped);
    ck_assert_int_eq(resolved + dropped, N);
    ck_assert_int_gt(resolved, 0);
    ck_assert_int_gt(dropped, 0);
    ck_assert_int_lt(last_resolved, first_dropped); /* the room fills in order, then stays full */
    size_t counted = 0; /* the arenas' own count of slots left without a line */
    for (size_t k = 0; k < pt->slots.n_arenas; k++)
        if (pt->slots.arenas[k]->mem.elf)
            counted += pt->slots.arenas[k]->mem.elf->lines_dropped;
    ck_assert_uint_eq(counted, (size_t)dropped);
    dwarf_clean();
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* Python's absolute co_filename paths (73 bytes here) fit the room: every
 * slot of a full arena file, and of the next one, gets its unit. */
START_TEST(python_paths_fill_no_room)
{
    perftramp *pt = open_elf(dir);
    const char *file = "/home/someone/src/project/.venv/lib/python3.11/site-packages/pkgs/mods.py";
    ck_assert_uint_eq(strlen(file), 73);
    int n = 0;
    for (; n < 20000 && pt->slots.n_arenas < 2; n++) {
        char name[32];
        snprintf(name, sizeof name, "py::h%05d", n);
        ck_assert_ptr_nonnull(perftramp_wrap_at(pt, (perftramp_fn)add1, name, file, 1 + (unsigned)n));
    }
    ck_assert_uint_eq(pt->slots.n_arenas, 2); /* the first file is full */
    size_t dropped = 0;
    for (size_t k = 0; k < pt->slots.n_arenas; k++)
        if (pt->slots.arenas[k]->mem.elf)
            dropped += pt->slots.arenas[k]->mem.elf->lines_dropped;
    printf("python_paths_fill_no_room: %d slots with 73-byte file names, %zu without a line\n", n, dropped);
    ck_assert_uint_eq(dropped, 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(spent_file_unmapped)
{
    perftramp *pt = open_elf(dir);
    enum { N = 3000 }; /* more than the first 64 KiB arena holds */
    static perftramp_fn t[N];
    char name[64];
    snprintf(name, sizeof name, "perftramp-%ld-0.so", (long)getpid());
    for (int i = 0; i < N; i++)
        t[i] = (perftramp_fn)wrap(pt, "py::many");
    ck_assert_int_eq(count_maps(name), 2);
    for (int i = 0; i < N; i++)
        ck_assert_int_eq(perftramp_release(pt, t[i]), 0);
    ck_assert_int_eq(count_maps(name), 0); /* every slot released: unmapped */
    ck_assert(file_exists(name));          /* and the file stays */
    long (*f)(long) = wrap(pt, "py::after");
    ck_assert_int_eq(f(1), 2);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* A fault: the output is disabled with `want`, trampolines still work. */
static void expect_disabled(perftramp *pt, int want)
{
    long (*f)(long) = wrap(pt, "py::f");
    ck_assert_int_eq(f(1), 2);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_ELF), want);
    ck_assert_int_eq(perftramp_close(pt), 0);
}

START_TEST(planted_symlink)
{
    char link[400], target[400], name[64];
    snprintf(name, sizeof name, "perftramp-%ld-0.so", (long)getpid());
    snprintf(link, sizeof link, "%s/%s", dir, name);
    snprintf(target, sizeof target, "%s/victim", dir);
    ck_assert_int_eq(symlink(target, link), 0);
    expect_disabled(open_elf(dir), EEXIST);
    ck_assert_int_ne(access(target, F_OK), 0); /* nothing created through the link */
}
END_TEST

START_TEST(directory_is_symlink)
{
    char link[400];
    snprintf(link, sizeof link, "%s/link", dir);
    ck_assert_int_eq(symlink(dir, link), 0);
    expect_disabled(open_elf(link), ELOOP);
}
END_TEST

START_TEST(foreign_directory)
{
    if (geteuid() != 0) {
        printf("foreign_directory: not root, cannot give a directory away: not run\n");
        return;
    }
    char sub[400];
    snprintf(sub, sizeof sub, "%s/theirs", dir);
    ck_assert_int_eq(mkdir(sub, 0777), 0);
    ck_assert_int_eq(chown(sub, 65534, 65534), 0);
    expect_disabled(open_elf(sub), EPERM);
}
END_TEST

START_TEST(noexec_directory)
{
    if (mount("tmpfs", dir, "tmpfs", MS_NOEXEC, "size=1m") < 0) {
        printf("noexec_directory: cannot mount a noexec tmpfs (%s): not run\n", strerror(errno));
        return;
    }
    expect_disabled(open_elf(dir), EACCES);
    ck_assert_int_eq(umount(dir), 0);
}
END_TEST

START_TEST(disk_full)
{
    /* in a child: RLIMIT_FSIZE below one arena file, SIGXFSZ ignored */
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit rl = {16384, 16384};
        setrlimit(RLIMIT_FSIZE, &rl);
        struct perftramp_options o = {.outputs = PERFTRAMP_ELF, .elf_dir = dir};
        perftramp *pt = perftramp_open(&o);
        long (*f)(long) = pt ? (long (*)(long))perftramp_wrap(pt, (perftramp_fn)add1, "py::f") : NULL;
        int e = pt ? perftramp_output_error(pt, PERFTRAMP_ELF) : -1;
        _exit(f && f(1) == 2 && e == EFBIG && perftramp_close(pt) == 0 ? 0 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(c, &st, 0), c);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
}
END_TEST

START_TEST(dead_process_files_cleaned)
{
    pid_t dead = fork();
    ck_assert_int_ge(dead, 0);
    if (dead == 0)
        _exit(0);
    ck_assert_int_eq(waitpid(dead, NULL, 0), dead);
    char gone[64], live[64], p[400];
    snprintf(gone, sizeof gone, "perftramp-%ld-0.so", (long)dead);
    snprintf(live, sizeof live, "perftramp-%ld-7.so", (long)getppid()); /* alive */
    const char *names[] = {gone, live, "perftramp-notes.txt"};
    for (int i = 0; i < 3; i++) {
        snprintf(p, sizeof p, "%s/%s", dir, names[i]);
        int fd = open(p, O_CREAT | O_WRONLY, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
    }
    perftramp *pt = open_elf(dir);
    ck_assert(!file_exists(gone));
    ck_assert(file_exists(live));
    ck_assert(file_exists("perftramp-notes.txt"));
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(fork_child_parts)
{
    perftramp *pt = open_elf(dir);
    long (*f)(long) = wrap(pt, "py::parent");
    pid_t c = fork();
    ck_assert_int_ge(c, 0);
    if (c == 0) {
        perftramp_after_fork_child(pt);
        /* the child releases the parent's trampoline and makes its own:
         * neither may touch the parent's code */
        int ok = perftramp_release(pt, (perftramp_fn)f) == 0;
        long (*g)(long) = (long (*)(long))perftramp_wrap(pt, (perftramp_fn)add1, "py::child");
        ok = ok && g && g(2) == 3 && perftramp_output_error(pt, PERFTRAMP_ELF) == 0;
        char name[64];
        snprintf(name, sizeof name, "perftramp-%ld-0.so", (long)getpid());
        ok = ok && file_exists(name); /* the child's own file */
        _exit(ok ? 0 : 1);
    }
    int st;
    ck_assert_int_eq(waitpid(c, &st, 0), c);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    ck_assert_int_eq(f(41), 42); /* the parent's trampoline is intact */
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

/* ---- every table's files, either ELF class ---------------------------
 *
 * The writers take the class from the table (.addr_size): an arena file
 * (pt_elf_arena_alloc, then the ELF output's own symbol and line writers),
 * a GDB JIT chunk image and a batch image (pt_elf_build), written for every
 * table of the lists and for the host table's ILP32 twin (4-byte
 * addresses, x32's ELFCLASS32 EM_X86_64), so the 32-bit writer is tested
 * on every host.  Each file must be of the table's class, read back by our
 * reader (symbols, their values and sizes), decoded by readelf without a
 * warning, FDEs and line rows included, and accepted by eu-elflint.  Code
 * is written, never run. */
enum { CLASS_SLOTS = 3 };


static void write_file(const char *name, const void *data, size_t len)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, len, f), len);
    fclose(f);
}

/* The file `name` of the test's directory (up to 1 MiB), in a buffer the
 * next call reuses. */
static const uint8_t *read_file(const char *name, size_t *len)
{
    char p[400];
    snprintf(p, sizeof p, "%s/%s", dir, name);
    FILE *f = fopen(p, "rb");
    ck_assert_ptr_nonnull(f);
    static uint8_t buf[1 << 20];
    *len = fread(buf, 1, sizeof buf, f);
    fclose(f);
    return buf;
}

/* Reads `name` back: its class and machine are the table's, and symbol
 * k (1..n) of .symtab is "<prefix><k-1>" at value0 + (k-1) * step. */
static void read_back(const struct pt_arch *a, const char *name, size_t n, uint64_t value0, uint64_t step,
                      uint64_t size)
{
    size_t len;
    const uint8_t *buf = read_file(name, &len);
    struct pt_elf e;
    const char *why = "";
    ck_assert_msg(pt_elf_open(&e, buf, len, &why) == 0, "%s: %s", name, why);
    ck_assert_msg(e.addr_size == a->addr_size && e.machine == a->elf_machine && e.big_endian == a->big_endian,
                  "%s: ELFCLASS%d machine %u, the table %s: .addr_size %u machine %u", name, e.addr_size * 8,
                  e.machine, a->name, a->addr_size, a->elf_machine);
    struct pt_elf_section sym, str;
    ck_assert(pt_elf_section(&e, ".symtab", &sym) == 0 && pt_elf_section(&e, ".strtab", &str) == 0);
    ck_assert_uint_eq(sym.entsize, pt_elf_class(a->addr_size)->sym);
    ck_assert_uint_eq(pt_elf_symbol_count(&e, &sym), n + 1);
    for (size_t k = 1; k <= n; k++) {
        struct pt_elf_symbol s;
        char want[32];
        snprintf(want, sizeof want, "%s_%zu", a->name, k - 1);
        ck_assert_int_eq(pt_elf_symbol(&e, &sym, k, &s), 0);
        ck_assert_msg(s.name < str.size && strcmp((const char *)str.data + s.name, want) == 0, "%s: symbol %zu",
                      name, k);
        ck_assert_uint_eq(s.info, (1 << 4) | 2);
        ck_assert_uint_eq(s.value, value0 + (k - 1) * step);
        ck_assert_uint_eq(s.size, size);
    }
}

/* `perftramp check`'s judge of an arena file (read/elf_arena_check.h), in
 * the file's class: complete, with its `n` symbols. */
static void arena_complete(const struct pt_arch *a, const char *name, size_t n)
{
    size_t len;
    const uint8_t *buf = read_file(name, &len);
    struct pt_arena_report r;
    pt_elf_arena_check(buf, len, &r);
    ck_assert_msg(r.state == PT_ARENA_COMPLETE && r.symbols == n && r.machine == a->elf_machine,
                  "%s (%s, ELFCLASS%u): %s, %llu symbols, machine %u: %s", name, a->name, a->addr_size * 8,
                  pt_arena_state_name(r.state), (unsigned long long)r.symbols, r.machine, r.why);
}

/* readelf decodes every part without a warning and finds `fdes` FDEs and
 * `lines` line rows (when not 0); eu-elflint (when installed) accepts it. */
static void lint(const char *name, int fdes, int lines, bool elflint)
{
    char cmd[800];
    snprintf(cmd, sizeof cmd,
             "LC_ALL=C readelf -W -a --debug-dump=frames-interp,info,decodedline '%s' > re.out 2>&1; "
             "grep -i 'readelf: \\(warning\\|error\\)\\|corrupt' re.out | head -n 3; "
             "echo fdes $(grep -c ' FDE cie=' re.out); "
             "echo lines $(grep -c '0x[0-9a-f]*  *x*$\\|   *[0-9][0-9]*  *0x' re.out)",
             name);
    char *out = run_in_dir(cmd);
    int nf = -1, nl = -1;
    char *at = strstr(out, "fdes ");
    ck_assert_msg(at == out, "readelf on %s: %s", name, out);
    ck_assert_int_eq(sscanf(at, "fdes %d\nlines %d", &nf, &nl), 2);
    ck_assert_msg(nf == fdes, "%s: %d FDEs, want %d", name, nf, fdes);
    ck_assert_msg(!lines || nl >= lines, "%s: %d line rows, want %d", name, nl, lines);
    free(out);
    if (!elflint)
        return;
    snprintf(cmd, sizeof cmd,
             "if command -v eu-elflint > /dev/null; then eu-elflint --gnu-ld '%s' > lint.out || head -n 3 lint.out; "
             "else echo 'eu-elflint: not installed, not run' >&2; fi",
             name);
    out = run_in_dir(cmd);
    ck_assert_msg(*out == 0 || strstr(out, "not installed"), "eu-elflint %s: %s", name, out);
    free(out);
}

/* .eh_frame for the slots of an arena at w: a CIE, an FDE per slot. */
static void arena_eh(const struct pt_arch *a, const struct pt_layout *l, uint8_t *eh, size_t cap, size_t rel,
                     size_t stride, size_t n, size_t *cie_size, size_t *fde_size)
{
    struct pt_buf prog, b;
    pt_buf_init(&prog, a->big_endian);
    ck_assert_int_eq(pt_cfi_program(&prog, l), 0);
    pt_buf_init_fixed(&b, eh, cap, a->big_endian);
    size_t cie = pt_eh_cie(&b, a);
    *cie_size = b.len;
    for (size_t i = 0; i < n; i++)
        pt_eh_fde(&b, cie, (int64_t)(i * stride) - (int64_t)rel, l->size, prog.data, prog.len);
    *fde_size = (b.len - *cie_size) / n;
    pt_eh_terminator(&b);
    ck_assert(!b.failed);
    pt_buf_free(&prog);
}

START_TEST(every_table_either_class)
{
    for (size_t t = 0; t < n_tables(); t++) {
        struct pt_arch twin;
        const struct pt_arch *a = table_i(t, &twin);
        struct pt_layout l;
        ck_assert_int_eq(pt_layout_build(&l, a, NULL), 0);
        size_t stride = (l.size + a->code_align - 1) / a->code_align * a->code_align;
        char names[CLASS_SLOTS][32];
        for (size_t i = 0; i < CLASS_SLOTS; i++)
            snprintf(names[i], sizeof names[i], "%s_%zu", a->name, i);

        /* 1. an arena file, as the ELF output writes it */
        uint8_t eh[1024];
        size_t cie_size, fde_size, rel = CLASS_SLOTS * stride;
        arena_eh(a, &l, eh, sizeof eh, rel, stride, CLASS_SLOTS, &cie_size, &fde_size);
        struct pt_elf_so_geometry g = {.addr_size = a->addr_size, .n_slots = CLASS_SLOTS, .stride = stride,
                                       .slot_size = l.size, .block_bytes = 4096, .eh_rel = rel,
                                       .cie_size = cie_size, .fde_size = fde_size, .code_align = a->code_align};
        struct pt_elf_dir d;
        ck_assert_int_eq(pt_elf_dir_open(&d, dir, getpid()), 0);
        struct pt_code_block b;
        ck_assert_msg(pt_elf_arena_alloc(&b, &d, a, &g) == 0, "%s: %s", a->name, strerror(errno));
        for (size_t i = 0; i < CLASS_SLOTS; i++)
            pt_layout_write(&l, b.w + i * stride, 0x1000 + i, i);
        memcpy(b.w + rel, eh, cie_size + CLASS_SLOTS * fde_size + 4);
        for (size_t i = 0; i < CLASS_SLOTS; i++) {
            ck_assert_int_eq(pt_elf_symbol_add(b.elf, i, l.size, names[i]), 0);
            ck_assert_int_eq(pt_elf_line_add(b.elf, i, l.size, "/src/every_class.py", 10 + (unsigned)i), 0);
        }
        char file[64];
        snprintf(file, sizeof file, "%s", b.elf->name);
        uint64_t text_off = b.elf->plan.text_off;
        b.backend->free(&b);
        pt_elf_dir_close(&d);
        read_back(a, file, CLASS_SLOTS, text_off, stride, l.size);
        arena_complete(a, file, CLASS_SLOTS);
        lint(file, CLASS_SLOTS, CLASS_SLOTS, true);

        /* 2. a GDB JIT chunk image of live, named slots */
        struct pt_slots sl;
        ck_assert_int_eq(pt_slots_init(&sl, a, &l, stride, true, true, true), 0);
        struct pt_arena *ar = NULL;
        for (size_t i = 0; i < CLASS_SLOTS; i++) {
            size_t index;
            bool fresh;
            ck_assert_int_eq(pt_slot_alloc(&sl, &ar, &index, &fresh), 0);
            ck_assert_uint_eq(index, i);
            pt_layout_write(&l, pt_slot_w(&sl, ar, i), 0x1000 + i, i);
            ar->names[i] = strdup(names[i]);
        }
        struct pt_buf prog;
        pt_buf_init(&prog, a->big_endian);
        ck_assert_int_eq(pt_cfi_program(&prog, &l), 0);
        struct pt_gdb_image im;
        ck_assert_int_eq(pt_gdb_image_build(&im, &sl, ar, 0, (1u << CLASS_SLOTS) - 1, prog.data, prog.len, 0), 0);
        snprintf(file, sizeof file, "gdb-%s.o", a->name);
        write_file(file, im.data, im.len);
        read_back(a, file, CLASS_SLOTS, 0, stride, l.size);
        pt_gdb_image_remove(&im, 1, stride, 5); /* the count drops, the last symbol moves */
        write_file(file, im.data, im.len);
        char cmd[300];
        snprintf(cmd, sizeof cmd, "LC_ALL=C readelf -sW '%s' | awk '$4 == \"FUNC\" { print $8 }' | tr '\\n' ' '",
                 file);
        char *out = run_in_dir(cmd);
        char want[100];
        snprintf(want, sizeof want, "%s_0 %s_2 ", a->name, a->name);
        ck_assert_msg(strcmp(out, want) == 0, "%s after a removal: '%s', want '%s'", file, out, want);
        free(out);
        lint(file, (int)im.n_fdes, 0, false); /* an FDE per slot of the chunk, named or not */
        pt_gdb_image_free(&im);
        pt_buf_free(&prog);
        pt_slots_destroy(&sl);

        /* 3. a batch image (pt_elf_build: the GDB output's other form,
         * `perftramp arch --raw`) */
        struct pt_elf_out_section secs[] = {{".text", 8 /* SHT_NOBITS */, 0x6, 0x7f000000, NULL, 3 * stride, 16}};
        struct pt_elf_out_symbol syms[CLASS_SLOTS];
        for (size_t i = 0; i < CLASS_SLOTS; i++)
            syms[i] = (struct pt_elf_out_symbol){names[i], 0, i * stride, l.size};
        size_t len;
        uint8_t *img = pt_elf_build(a, secs, 1, syms, CLASS_SLOTS, &len);
        ck_assert_ptr_nonnull(img);
        snprintf(file, sizeof file, "batch-%s.o", a->name);
        write_file(file, img, len);
        free(img);
        read_back(a, file, CLASS_SLOTS, 0, stride, l.size);
        lint(file, 0, 0, false);
        printf("every_table_either_class: %s: ELFCLASS%u arena file (complete for perftramp check), chunk and batch "
               "images read back, readelf and eu-elflint clean\n", a->name, a->addr_size * 8);
    }
}
END_TEST

static Suite *suite(void)
{
    Suite *s = suite_create("elf");
    TCase *tc = tcase_create("elf");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, env_words);
    tcase_add_test(tc, file_written_and_trampolines_run);
    tcase_add_test(tc, released_slot_not_recycled);
    tcase_add_test(tc, long_names_past_the_room);
    tcase_add_test(tc, source_lines_in_the_file);
    tcase_add_test(tc, lines_past_the_room);
    tcase_add_test(tc, python_paths_fill_no_room);
    tcase_add_test(tc, spent_file_unmapped);
    tcase_add_test(tc, planted_symlink);
    tcase_add_test(tc, directory_is_symlink);
    tcase_add_test(tc, foreign_directory);
    tcase_add_test(tc, noexec_directory);
    tcase_add_test(tc, disk_full);
    tcase_add_test(tc, dead_process_files_cleaned);
    tcase_add_test(tc, fork_child_parts);
    suite_add_tcase(s, tc);
    /* readelf and eu-elflint on 3 files a table: seconds on a loaded machine */
    tc = tcase_create("classes");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_table_either_class);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    return pt_check_run(suite());
}
