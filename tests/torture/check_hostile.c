/* SPDX-License-Identifier: MIT */
/* Hostile /tmp and hostile names.  Someone else can write /tmp: whatever
 * they plant at /tmp/perf-<pid>.map or <dir>/jit-<pid>.dump (a symlink,
 * a FIFO, a directory, a device, a socket, their own file, a hard link to
 * one of ours) is never written through or into; the output reports the
 * refusal through perftramp_output_error, the other output and every
 * trampoline keep working.  Any name (newlines, control bytes, invalid
 * UTF-8, empty, 1 MiB) leaves every map line and every jitdump record
 * well-formed, following the documented policy (docs/perf.md). */
#define _GNU_SOURCE
#include "dumpscan.h"
#include "read/jitdump_reader.h"
#include "torture.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/un.h>
#include <unistd.h>

#define BOTH (PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP)

static char *scratch;
static char map_path[64], dump_path[4200];

static void setup(void)
{
    scratch = tt_mkdtemp();
    snprintf(map_path, sizeof map_path, "/tmp/perf-%d.map", (int)getpid());
    snprintf(dump_path, sizeof dump_path, "%s/jit-%d.dump", scratch, (int)getpid());
    unlink(map_path);
}

static void teardown(void)
{
    unlink(map_path);
    tt_rmtree(scratch);
    free(scratch);
}

static perftramp *open_both(void)
{
    struct perftramp_options o = {.outputs = BOTH, .jitdump_dir = scratch};
    return perftramp_open(&o);
}

/* ---- hostile files ------------------------------------------------- */

enum plant {
    SYMLINK_TO_VICTIM, /* through it: someone's file */
    DANGLING_SYMLINK,  /* through it: a file we would create where they want it */
    SYMLINK_TO_DIR,
    FIFO_NO_READER,    /* would block a naive open */
    FIFO_WITH_READER,  /* they read what we write */
    DIRECTORY,
    FOREIGN_FILE,      /* another user's regular file (root only) */
    HARDLINK,          /* a second name of one of our files (protected_hardlinks=0) */
    CHAR_DEVICE,       /* root only */
    UNIX_SOCKET,
    N_PLANTS
};

static const char *const plant_name[N_PLANTS] = {
    "symlink to a victim file", "dangling symlink", "symlink to a directory", "FIFO without reader",
    "FIFO with a reader",       "directory",        "another user's file",     "hard link to our file",
    "character device",         "unix socket",
};

/* The errno each refusal reports (docs/perf.md "Files: creation and refusal"). */
static const int plant_errno[N_PLANTS] = {ELOOP, ELOOP, ELOOP, ENXIO, EPERM, EISDIR, EPERM, EPERM, EPERM, ENXIO};
/* A FIFO opened O_RDWR (the dump) opens without a reader, then fails the
 * regular-file check: EPERM instead of ENXIO.  Both are refusals. */
static const int plant_errno_alt[N_PLANTS] = {[FIFO_NO_READER] = EPERM};

struct planted {
    enum plant kind;
    const char *path;
    char victim[4200];   /* the file a symlink/hardlink points at */
    char target[4200];   /* where a dangling symlink points */
    int reader;          /* FIFO reader fd */
    int sock;
    struct stat before;  /* lstat of the planted path */
};

static const char victim_text[] = "precious, not yours\n";

static void write_victim(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ck_assert_int_ge(fd, 0);
    ck_assert_int_eq(write(fd, victim_text, sizeof victim_text - 1), (ssize_t)(sizeof victim_text - 1));
    close(fd);
}

/* false: this kind cannot be planted here (printed why). */
static bool plant(struct planted *p, enum plant kind, const char *path)
{
    memset(p, 0, sizeof *p);
    p->kind = kind;
    p->path = path;
    p->reader = p->sock = -1;
    snprintf(p->victim, sizeof p->victim, "%s/victim", scratch);
    snprintf(p->target, sizeof p->target, "%s/not-there", scratch);
    switch (kind) {
    case SYMLINK_TO_VICTIM:
        write_victim(p->victim);
        ck_assert_int_eq(symlink(p->victim, path), 0);
        break;
    case DANGLING_SYMLINK:
        ck_assert_int_eq(symlink(p->target, path), 0);
        break;
    case SYMLINK_TO_DIR:
        ck_assert_int_eq(symlink(scratch, path), 0);
        break;
    case FIFO_NO_READER:
        ck_assert_int_eq(mkfifo(path, 0666), 0);
        break;
    case FIFO_WITH_READER:
        ck_assert_int_eq(mkfifo(path, 0666), 0);
        p->reader = open(path, O_RDONLY | O_NONBLOCK);
        ck_assert_int_ge(p->reader, 0);
        break;
    case DIRECTORY:
        ck_assert_int_eq(mkdir(path, 0777), 0);
        break;
    case FOREIGN_FILE:
        if (geteuid() != 0) {
            printf("SKIP %s: planting another user's file needs root\n", plant_name[kind]);
            return false;
        }
        write_victim(path);
        ck_assert_int_eq(chown(path, 65534, 65534), 0); /* nobody */
        break;
    case HARDLINK:
        write_victim(p->victim);
        ck_assert_int_eq(link(p->victim, path), 0);
        break;
    case CHAR_DEVICE:
        if (mknod(path, S_IFCHR | 0666, makedev(1, 3)) != 0) {
            printf("SKIP %s: mknod: %s\n", plant_name[kind], strerror(errno));
            return false;
        }
        break;
    case UNIX_SOCKET: {
        struct sockaddr_un sa = {.sun_family = AF_UNIX};
        if (strlen(path) >= sizeof sa.sun_path) {
            printf("SKIP %s: path too long for a socket\n", plant_name[kind]);
            return false;
        }
        strcpy(sa.sun_path, path);
        p->sock = socket(AF_UNIX, SOCK_STREAM, 0);
        ck_assert_int_ge(p->sock, 0);
        ck_assert_int_eq(bind(p->sock, (struct sockaddr *)&sa, sizeof sa), 0);
        break;
    }
    default:
        ck_abort();
    }
    ck_assert_int_eq(lstat(path, &p->before), 0);
    return true;
}

static void assert_victim_intact(const char *path)
{
    size_t len;
    unsigned char *b = tt_slurp(path, &len);
    ck_assert_msg(b != NULL, "%s: %s", path, strerror(errno));
    ck_assert_msg(len == sizeof victim_text - 1 && memcmp(b, victim_text, len) == 0,
                  "%s was written (%zu bytes now)", path, len);
    free(b);
}

/* Nothing was written through or into the planted object, and it is
 * still what was planted. */
static void assert_untouched(struct planted *p)
{
    struct stat now;
    ck_assert_msg(lstat(p->path, &now) == 0, "%s (%s) vanished", p->path, plant_name[p->kind]);
    ck_assert_msg((now.st_mode & S_IFMT) == (p->before.st_mode & S_IFMT) && now.st_ino == p->before.st_ino,
                  "%s (%s) was replaced", p->path, plant_name[p->kind]);
    switch (p->kind) {
    case SYMLINK_TO_VICTIM:
    case HARDLINK:
        assert_victim_intact(p->victim);
        break;
    case DANGLING_SYMLINK:
        ck_assert_msg(access(p->target, F_OK) != 0, "created %s through a dangling symlink", p->target);
        break;
    case FIFO_WITH_READER: {
        char buf[64];
        ssize_t r = read(p->reader, buf, sizeof buf);
        ck_assert_msg(r <= 0, "the FIFO's reader received %zd bytes", r);
        break;
    }
    case DIRECTORY:
        ck_assert_msg(rmdir(p->path) == 0, "the planted directory is no longer empty");
        ck_assert_int_eq(mkdir(p->path, 0777), 0);
        break;
    case FOREIGN_FILE:
        assert_victim_intact(p->path);
        ck_assert_int_eq(now.st_uid, 65534);
        break;
    default:
        break;
    }
}

static void unplant(struct planted *p)
{
    if (p->reader >= 0)
        close(p->reader);
    if (p->sock >= 0)
        close(p->sock);
    if (p->kind == DIRECTORY)
        rmdir(p->path);
    else
        unlink(p->path);
    unlink(p->victim);
}

/* A few trampolines that must work whatever the outputs went through. */
static void wrap_some(perftramp *pt, perftramp_fn *out, int n)
{
    for (int i = 0; i < n; i++) {
        char name[32];
        snprintf(name, sizeof name, "hostile::f%d", i);
        out[i] = perftramp_wrap(pt, TT_FN((unsigned)i), name);
        ck_assert_msg(out[i] != NULL, "wrap: %s", strerror(errno));
        ck_assert_int_eq(tt_call(out[i], i, 7), tt_expect((unsigned)i, i, 7));
    }
}

START_TEST(planted_files_are_never_written)
{
    enum plant kind = (enum plant)(_i / 2);
    bool at_map = _i % 2 == 0;
    const char *path = at_map ? map_path : dump_path;
    unsigned bit = at_map ? PERFTRAMP_PERF_MAP : PERFTRAMP_JITDUMP;
    unsigned other = BOTH & ~bit;
    struct planted p;
    if (!plant(&p, kind, path))
        return;
    errno = 0;
    perftramp *pt = open_both();
    ck_assert_msg(pt != NULL, "%s at %s: perftramp_open failed (%s); a refusal must not fail the open",
                  plant_name[kind], path, strerror(errno));
    int e = perftramp_output_error(pt, bit);
    ck_assert_msg(e == plant_errno[kind] || (plant_errno_alt[kind] && e == plant_errno_alt[kind]), "%s at %s: output error %d (%s), documented %s", plant_name[kind], path,
                  e, strerror(e), strerror(plant_errno[kind]));
    ck_assert_int_eq(perftramp_output_error(pt, other), 0);
    perftramp_fn t[8];
    wrap_some(pt, t, 8);
    ck_assert_int_eq(perftramp_output_error(pt, other), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    assert_untouched(&p);

    /* the other output wrote its file normally */
    if (other == PERFTRAMP_JITDUMP) {
        char why[300];
        struct pt_jd_summary sum;
        size_t errors = ds_validate_jitdump(dump_path, &sum, why, sizeof why);
        ck_assert_msg(errors == 0, "dump: %s", why);
        ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 8);
    } else {
        struct ds_map_stats ms;
        ck_assert_int_eq(ds_scan_map(map_path, NULL, NULL, &ms), 0);
        ck_assert_uint_eq(ms.lines, 8);
        ck_assert_uint_eq(ms.torn_tail, 0);
    }
    unplant(&p);
}
END_TEST

/* After the refusal the path is free again: a later context of the same
 * process writes its files normally (nothing sticky, nothing half-made). */
START_TEST(refusal_is_not_sticky)
{
    struct planted p;
    ck_assert(plant(&p, SYMLINK_TO_VICTIM, map_path));
    perftramp *pt = open_both();
    ck_assert_ptr_nonnull(pt);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), ELOOP);
    ck_assert_int_eq(perftramp_close(pt), 0);
    unplant(&p);
    pt = open_both();
    ck_assert_ptr_nonnull(pt);
    perftramp_fn t[3];
    wrap_some(pt, t, 3);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
    struct stat st;
    ck_assert_int_eq(lstat(map_path, &st), 0);
    ck_assert(S_ISREG(st.st_mode));
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
    ck_assert_int_eq(lstat(dump_path, &st), 0);
    ck_assert_uint_eq(st.st_mode & 0777, 0600);
}
END_TEST

/* Two jitdump contexts of one process in one directory would share
 * jit-<pid>.dump: the second must not truncate or interleave with the
 * first; it is refused (EBUSY) and the first's dump stays valid. */
START_TEST(second_jitdump_context_is_refused)
{
    perftramp *a = open_both();
    ck_assert_ptr_nonnull(a);
    perftramp_fn t[8];
    wrap_some(a, t, 5);
    perftramp *b = open_both();
    ck_assert_msg(b != NULL, "second context: %s", strerror(errno));
    ck_assert_int_eq(perftramp_output_error(b, PERFTRAMP_JITDUMP), EBUSY);
    ck_assert_int_eq(perftramp_output_error(b, PERFTRAMP_PERF_MAP), 0); /* the map is shared by design */
    perftramp_fn u = perftramp_wrap(b, TT_FN(3), "second::f");
    ck_assert_ptr_nonnull(u);
    ck_assert_int_eq(tt_call(u, 1, 2), tt_expect(3, 1, 2));
    perftramp_fn v = perftramp_wrap(a, TT_FN(2), "first::g");
    ck_assert_ptr_nonnull(v);
    ck_assert_int_eq(perftramp_close(b), 0);
    ck_assert_int_eq(perftramp_output_error(a, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_close(a), 0);
    char why[300];
    struct pt_jd_summary sum;
    size_t errors = ds_validate_jitdump(dump_path, &sum, why, sizeof why);
    ck_assert_msg(errors == 0, "dump: %s", why);
    ck_assert_uint_eq(sum.by_id[PT_JD_LOAD], 6);
    ck_assert(sum.closed);
    /* once the first is closed the path is free again */
    a = open_both();
    ck_assert_ptr_nonnull(a);
    ck_assert_int_eq(perftramp_output_error(a, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_close(a), 0);
}
END_TEST

/* ---- hostile names ------------------------------------------------- */

#define NAME_MAX_BYTES 4096 /* docs/perf.md: kept whole up to 4096 bytes after escaping */

/* The documented escaping, written independently: C0 and DEL -> \xNN. */
static char *escape(const char *s, size_t *len)
{
    size_t n = strlen(s);
    char *out = malloc(4 * n + 1);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 || c == 0x7f)
            k += (size_t)sprintf(out + k, "\\x%02x", c);
        else
            out[k++] = (char)c;
    }
    out[k] = 0;
    *len = k;
    return out;
}

static bool valid_utf8(const unsigned char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = s[i];
        size_t more = c < 0x80 ? 0 : (c & 0xe0) == 0xc0 ? 1 : (c & 0xf0) == 0xe0 ? 2 : (c & 0xf8) == 0xf0 ? 3 : 9;
        if (more == 9 || (more == 1 && c < 0xc2) || i + more >= n + (more ? 0 : 1))
            return false;
        for (size_t k = 1; k <= more; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return false;
        i += more + 1;
    }
    return true;
}

#define N_NAMES 20
struct names {
    char *raw[N_NAMES];
    size_t n;
};

static void add_name(struct names *ns, char *s)
{
    ck_assert_uint_lt(ns->n, N_NAMES);
    ns->raw[ns->n++] = s;
}

static char *repeat(char c, size_t n, const char *tail)
{
    char *s = malloc(n + strlen(tail) + 1);
    memset(s, c, n);
    strcpy(s + n, tail);
    return s;
}

static void hostile_names(struct names *ns)
{
    ns->n = 0;
    add_name(ns, strdup("line\nbreak"));
    add_name(ns, strdup("\n"));
    add_name(ns, strdup("\r"));
    add_name(ns, strdup("crlf\r\n7fffdeadbeef 10 forged_entry"));
    add_name(ns, strdup(""));
    add_name(ns, strdup("\t tab and spaces "));
    add_name(ns, strdup("\x1b[31mred\x1b[0m\x07"));
    add_name(ns, strdup("del\x7f"));
    add_name(ns, strdup("invalid \xff\xfe utf-8 \xc3 \xc0\xaf \xed\xa0\x80 \xf4\x90\x80\x80"));
    add_name(ns, strdup("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 valid utf-8"));
    char all[256];
    for (int i = 1; i < 256; i++)
        all[i - 1] = (char)i;
    all[255] = 0;
    add_name(ns, strdup(all));
    add_name(ns, repeat('x', 1u << 20, ""));                   /* 1 MiB */
    add_name(ns, repeat('\n', 1u << 20, ""));                  /* 1 MiB of escapes */
    add_name(ns, repeat('a', NAME_MAX_BYTES, ""));             /* exactly the limit */
    add_name(ns, repeat('a', NAME_MAX_BYTES + 1, ""));         /* one over */
    add_name(ns, repeat('a', NAME_MAX_BYTES - 5, "\xc3\xa9\xc3\xa9\xc3\xa9")); /* cut inside a character */
    add_name(ns, repeat('a', NAME_MAX_BYTES - 6, "\n\n"));    /* cut inside an escape */
}

static void free_names(struct names *ns)
{
    for (size_t i = 0; i < ns->n; i++)
        free(ns->raw[i]);
}

/* What the outputs must show for raw: the escaped name whole, or cut. */
static void assert_shown(const char *raw, const char *shown, size_t len, const char *where)
{
    if (!*raw) { /* an empty name: the placeholder [anonymous@0x<address>] (docs/perf.md) */
        ck_assert_msg(len > 14 && memcmp(shown, "[anonymous@0x", 13) == 0 && shown[len - 1] == ']',
                      "%s: empty name shown as '%.60s'", where, shown);
        return;
    }
    size_t elen;
    char *esc = escape(raw, &elen);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)shown[i];
        ck_assert_msg(c >= 0x20 && c != 0x7f, "%s: raw control byte %#x in a name", where, c);
    }
    ck_assert_msg(len <= NAME_MAX_BYTES, "%s: %zu-byte name, limit %d", where, len, NAME_MAX_BYTES);
    if (elen <= NAME_MAX_BYTES) {
        ck_assert_msg(len == elen && memcmp(shown, esc, len) == 0, "%s: name '%.60s' shown as '%.60s'", where, esc,
                      shown);
    } else {
        ck_assert_msg(len >= 3 && memcmp(shown + len - 3, "...", 3) == 0, "%s: a cut name must end with ...",
                      where);
        ck_assert_msg(memcmp(shown, esc, len - 3) == 0, "%s: a cut name is a prefix of the escaped one", where);
        ck_assert_msg(len - 3 + 4 + 3 > NAME_MAX_BYTES, "%s: cut too early (%zu bytes)", where, len);
        if (valid_utf8((const unsigned char *)raw, strlen(raw)))
            ck_assert_msg(valid_utf8((const unsigned char *)shown, len), "%s: cut inside a UTF-8 character", where);
    }
    free(esc);
}

struct name_check {
    struct names *ns;
    size_t next;
    const char *where;
    uintptr_t *addr;
};

static int map_line(void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
    struct name_check *c = arg;
    ck_assert_uint_lt(c->next, c->ns->n);
    ck_assert_uint_eq(start, c->addr[c->next]);
    ck_assert_uint_gt(size, 0);
    assert_shown(c->ns->raw[c->next], name, len, c->where);
    c->next++;
    return 0;
}

static int dump_load(void *arg, const struct ds_load *l)
{
    struct name_check *c = arg;
    ck_assert_uint_lt(c->next, c->ns->n);
    ck_assert_uint_eq(l->code_addr, c->addr[c->next]);
    assert_shown(c->ns->raw[c->next], l->name, strlen(l->name), c->where);
    c->next++;
    return 0;
}

START_TEST(hostile_names_keep_files_well_formed)
{
    struct names ns;
    hostile_names(&ns);
    perftramp *pt = open_both();
    ck_assert_ptr_nonnull(pt);
    uintptr_t addr[N_NAMES];
    for (size_t i = 0; i < ns.n; i++) {
        perftramp_fn t = perftramp_wrap(pt, TT_FN((unsigned)i), ns.raw[i]);
        ck_assert_msg(t != NULL, "wrap(name %zu): %s", i, strerror(errno));
        ck_assert_int_eq(tt_call(t, 2, 3), tt_expect((unsigned)i, 2, 3));
        addr[i] = (uintptr_t)t;
    }
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_PERF_MAP), 0);
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_JITDUMP), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);

    struct name_check c = {&ns, 0, "perf map", addr};
    struct ds_map_stats ms;
    ck_assert_msg(ds_scan_map(map_path, map_line, &c, &ms) == 0, "perf map: %s", ms.error);
    ck_assert_uint_eq(ms.lines, ns.n);
    ck_assert_uint_eq(ms.torn_tail, 0);
    c = (struct name_check){&ns, 0, "jitdump", addr};
    struct ds_dump_stats ds;
    ck_assert_msg(ds_scan_jitdump(dump_path, dump_load, &c, &ds) == 0, "jitdump: %s", ds.error);
    ck_assert_uint_eq(ds.loads, ns.n);
    ck_assert_uint_eq(ds.torn_tail, 0);
    char why[300];
    struct pt_jd_summary sum;
    size_t errors = ds_validate_jitdump(dump_path, &sum, why, sizeof why);
    ck_assert_msg(errors == 0, "validator: %s", why);
    ds_run_cli_check(dump_path);
    free_names(&ns);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("hostile");
    TCase *files = tcase_create("files");
    tcase_add_checked_fixture(files, setup, teardown);
    tcase_add_loop_test(files, planted_files_are_never_written, 0, 2 * N_PLANTS);
    tcase_add_test(files, refusal_is_not_sticky);
    tcase_add_test(files, second_jitdump_context_is_refused);
    suite_add_tcase(s, files);
    TCase *names = tcase_create("names");
    tcase_add_checked_fixture(names, setup, teardown);
    tcase_add_test(names, hostile_names_keep_files_well_formed);
    suite_add_tcase(s, names);
    int failed = pt_check_run(s);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
