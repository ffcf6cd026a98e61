/* SPDX-License-Identifier: MIT */
/* See crash_check.h.  Each file is read by the torture's own scanner
 * (dumpscan.c, written from the formats, not from the writer), by the
 * library's validator, and by the perftramp command, and every name in it
 * must be one the producer wrote (crash_shared.h: a checksum in each). */
#define _GNU_SOURCE
#include "crash_check.h"

#include "dumpscan.h"
#include "read/elf_arena_check.h"
#include "read/elf_reader.h"
#include "read/jitdump_reader.h"
#include "torture.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

int crash_run(char *const argv[], char *out, size_t out_len)
{
    int pfd[2];
    if (pipe(pfd) < 0)
        return -1;
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        dup2(pfd[1], 1);
        dup2(pfd[1], 2);
        close(pfd[0]);
        close(pfd[1]);
        execvp(argv[0], argv);
        _exit(127);
    }
    close(pfd[1]);
    size_t n = 0;
    for (;;) {
        char sink[4096];
        char *to = n + 1 < out_len ? out + n : sink;
        size_t room = n + 1 < out_len ? out_len - 1 - n : sizeof sink;
        ssize_t r = read(pfd[0], to, room);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        if (to != sink)
            n += (size_t)r;
    }
    out[n] = 0;
    close(pfd[0]);
    int status;
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Which ids of each thread a file holds. */
struct ids {
    uint8_t *seen[2][CRASH_THREADS]; /* [0] wraps ('t'), [1] publishes ('p') */
    uint64_t cap[2][CRASH_THREADS];
};

static void ids_init(struct ids *s, const struct crash_progress *p)
{
    for (unsigned t = 0; t < CRASH_THREADS; t++) {
        s->cap[0][t] = atomic_load(&p->t[t].wrapped) + 1;
        s->cap[1][t] = atomic_load(&p->t[t].published) + 1;
        for (int k = 0; k < 2; k++)
            s->seen[k][t] = calloc(s->cap[k][t], 1);
    }
}

static void ids_free(struct ids *s)
{
    for (int k = 0; k < 2; k++)
        for (unsigned t = 0; t < CRASH_THREADS; t++)
            free(s->seen[k][t]);
}

/* Marks a name: false when it is not one the producer wrote, or one it
 * had not begun to wrap (each thread has at most one in flight). */
static bool ids_mark(struct ids *s, const char *name, size_t len, char *kind_out)
{
    char kind;
    unsigned t;
    uint64_t id;
    if (!crash_parse(name, len, &kind, &t, &id))
        return false;
    int k = kind == 'p';
    if (id >= s->cap[k][t])
        return false;
    s->seen[k][t][id] = 1;
    if (kind_out)
        *kind_out = kind;
    return true;
}

/* Ids that returned (wraps [from, wrapped), publishes [0, published)) and
 * are not in the file. */
static size_t ids_missing(const struct ids *s, const struct crash_progress *p, bool from_released, bool publishes)
{
    size_t lost = 0;
    for (unsigned t = 0; t < CRASH_THREADS; t++) {
        uint64_t from = from_released ? atomic_load(&p->t[t].released) : 0;
        for (uint64_t id = from; id < s->cap[0][t] - 1; id++)
            lost += !s->seen[0][t][id];
        for (uint64_t id = 0; publishes && id < s->cap[1][t] - 1; id++)
            lost += !s->seen[1][t][id];
    }
    return lost;
}

struct failure {
    char *why;
    size_t len;
    bool failed;
};

__attribute__((format(printf, 2, 3))) static void fail(struct failure *f, const char *fmt, ...)
{
    if (f->failed)
        return;
    f->failed = true;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(f->why, f->len, fmt, ap);
    va_end(ap);
}

/* ---- jitdump ---- */

struct dump_ctx {
    struct ids *ids;
    const struct crash_progress *p;
    pid_t pid;
    struct failure *f;
};

static int on_load(void *arg, const struct ds_load *l)
{
    struct dump_ctx *c = arg;
    char kind = 0;
    if (!ids_mark(c->ids, l->name, strlen(l->name), &kind)) {
        fail(c->f, "jitdump: a LOAD named '%.80s', not a name the producer wrapped (torn?)", l->name);
        return 1;
    }
    if (kind == 't') {
        /* a trampoline: its last two words are the target and the tag,
         * words of this process's address size (4 bytes on i686) */
        uintptr_t target, tag;
        const size_t w = sizeof target;
        if (l->code_size < 2 * w) {
            fail(c->f, "jitdump: LOAD %s: %" PRIu64 " code bytes", l->name, l->code_size);
            return 1;
        }
        memcpy(&target, l->code + l->code_size - 2 * w, w);
        memcpy(&tag, l->code + l->code_size - w, w);
        if (target != c->p->target || tag == 0) {
            fail(c->f, "jitdump: LOAD %s: target word 0x%" PRIx64 " (want 0x%" PRIx64 "), tag 0x%" PRIx64
                       ": its code is not what was written",
                 l->name, (uint64_t)target, c->p->target, (uint64_t)tag);
            return 1;
        }
    } else {
        unsigned t = 0;
        uint64_t id = 0;
        char k;
        crash_parse(l->name, strlen(l->name), &k, &t, &id);
        uint8_t want[32];
        uint64_t tag = ((uint64_t)c->pid << 40) ^ ((uint64_t)t << 32) ^ id;
        memset(want, 0xc3, sizeof want);
        memcpy(want + 8, &tag, 8);
        if (l->code_size != sizeof want || memcmp(l->code, want, sizeof want) != 0) {
            fail(c->f, "jitdump: LOAD %s: its %" PRIu64 " code bytes are not the ones published", l->name,
                 l->code_size);
            return 1;
        }
    }
    return 0;
}

struct findings {
    struct failure *f;
    uint64_t uncommitted_at;
    bool uncommitted;
};

static void on_finding(void *arg, const struct pt_jd_finding *fd)
{
    struct findings *fs = arg;
    if (fd->sev == PT_JD_NOTE && strcmp(fd->kind, "frame.reserved") == 0)
        return;
    if (fd->sev == PT_JD_WARNING && strcmp(fd->kind, "frame.uncommitted") == 0 && !fs->uncommitted) {
        fs->uncommitted = true;
        fs->uncommitted_at = fd->offset;
        return;
    }
    fail(fs->f, "validator: %s at 0x%" PRIx64 " (%s): %s",
         fd->sev == PT_JD_ERROR ? "error" : fd->sev == PT_JD_WARNING ? "warning" : "note", fd->offset, fd->kind,
         fd->msg);
}

static void check_dump(const char *dir, pid_t pid, const struct crash_progress *p, const char *cli,
                       const char *perf_version, struct crash_files *out, struct failure *f)
{
    char path[4200];
    snprintf(path, sizeof path, "%s/jit-%d.dump", dir, (int)pid);
    struct stat st;
    uint64_t returned = 0;
    for (unsigned t = 0; t < CRASH_THREADS; t++)
        returned += atomic_load(&p->t[t].wrapped) + atomic_load(&p->t[t].published);
    if (stat(path, &st) < 0 || st.st_size == 0) {
        /* killed before the header was written: nothing may have returned */
        if (returned)
            fail(f, "jitdump: %s %s, but %" PRIu64 " wraps and publishes returned", path,
                 errno == ENOENT ? "missing" : "empty", returned);
        return;
    }
    out->dump_exists = true;
    struct ids ids;
    ids_init(&ids, p);
    struct dump_ctx c = {&ids, p, pid, f};
    struct ds_dump_stats ds;
    if (ds_scan_jitdump(path, on_load, &c, &ds) != 0)
        fail(f, "jitdump scan: %s", ds.error);
    else if (ds.torn_tail)
        fail(f, "jitdump: a record torn past the end of the file (%zu bytes)", ds.torn_tail);
    out->loads = ds.loads;
    out->uncommitted = ds.uncommitted;
    out->loads_lost = ids_missing(&ids, p, false, true);
    ids_free(&ids);
    if (out->loads_lost)
        fail(f, "jitdump: %zu wraps or publishes returned without a complete LOAD", out->loads_lost);
    /* the library's validator: no error, no warning but the uncommitted tail */
    size_t len;
    uint8_t *d = tt_slurp(path, &len);
    struct pt_jd_summary sum;
    struct findings fs = {f, 0, false};
    if (!d || pt_jitdump_validate_ex(d, len, NULL, &sum, on_finding, &fs) != 0)
        fail(f, "validator: errors in %s", path);
    free(d);
    if (fs.uncommitted != (ds.uncommitted > 0) || sum.uncommitted_bytes != ds.uncommitted)
        fail(f, "jitdump: the validator sees %" PRIu64 " uncommitted bytes, the scanner %zu", sum.uncommitted_bytes,
             ds.uncommitted);
    out->uncommitted_at = fs.uncommitted_at;
    /* the command: valid, and the torn tail named with its offset */
    char text[8192], at[64];
    int rc = crash_run((char *const[]){(char *)cli, "check", "--perf-version", (char *)perf_version, path, NULL}, text,
                       sizeof text);
    snprintf(at, sizeof at, "uncommitted: a record of total_size 0 at offset 0x%" PRIx64, fs.uncommitted_at);
    if (rc != 0 || (fs.uncommitted && !strstr(text, at)))
        fail(f, "perftramp check %s: exit %d%s%s:\n%.1500s", path, rc, fs.uncommitted ? ", want '" : "",
             fs.uncommitted ? at : "", text);
}

/* ---- perf map ---- */

struct map_ctx {
    struct ids *ids;
    struct failure *f;
};

static int on_line(void *arg, uint64_t start, uint64_t size, const char *name, size_t len)
{
    struct map_ctx *c = arg;
    (void)start;
    (void)size;
    if (!ids_mark(c->ids, name, len, NULL)) {
        fail(c->f, "perf map: a line naming '%.*s', not a name the producer wrapped (torn?)", (int)(len > 80 ? 80 : len),
             name);
        return 1;
    }
    return 0;
}

static void check_map(pid_t pid, const struct crash_progress *p, struct crash_files *out, struct failure *f)
{
    char path[64];
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)pid);
    if (access(path, F_OK) != 0 && !atomic_load(&p->opened))
        return;
    struct ids ids;
    ids_init(&ids, p);
    struct map_ctx c = {&ids, f};
    struct ds_map_stats ms;
    if (ds_scan_map(path, on_line, &c, &ms) != 0)
        fail(f, "perf map: %s", ms.error);
    out->lines = ms.lines;
    out->blank = ms.blank;
    out->torn_lines = ms.torn_tail > 0;
    if (ms.torn_tail)
        fail(f, "perf map: a torn last line (%zu bytes without a newline)", ms.torn_tail);
    out->lines_lost = ids_missing(&ids, p, false, true);
    ids_free(&ids);
    if (out->lines_lost)
        fail(f, "perf map: %zu wraps or publishes returned without a line", out->lines_lost);
}

/* ---- ELF arenas ---- */

static void arena_symbols(const uint8_t *d, size_t len, struct ids *ids, struct crash_files *out, struct failure *f)
{
    struct pt_elf e;
    const char *why;
    struct pt_elf_section sym, str;
    if (pt_elf_open(&e, d, len, &why) < 0 || pt_elf_section(&e, ".symtab", &sym) < 0 ||
        pt_elf_section(&e, ".strtab", &str) < 0)
        return; /* pt_elf_arena_check said complete: cannot happen */
    const size_t n = e.addr_size == 4 ? 16 : 24; /* Elf32_Sym, Elf64_Sym */
    for (uint64_t i = 1; i < sym.size / n; i++) {
        uint32_t name;
        memcpy(&name, sym.data + i * n, 4);
        if (!name)
            continue;
        const char *s = (const char *)str.data + name;
        if (!ids_mark(ids, s, strlen(s), NULL)) {
            fail(f, "ELF arena: a symbol named '%.80s', not a name the producer wrapped", s);
            return;
        }
        out->symbols++;
    }
}

static void check_arenas(const char *dir, pid_t pid, const struct crash_progress *p, const char *cli,
                         struct crash_files *out, struct failure *f)
{
    char edir[4200], prefix[64];
    snprintf(edir, sizeof edir, "%s/elf", dir);
    snprintf(prefix, sizeof prefix, "perftramp-%d-", (int)pid);
    DIR *dd = opendir(edir);
    if (!dd)
        return;
    struct ids ids;
    ids_init(&ids, p);
    struct dirent *ent;
    while ((ent = readdir(dd)) && !f->failed) {
        if (strncmp(ent->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char path[4500];
        snprintf(path, sizeof path, "%s/%s", edir, ent->d_name);
        size_t len = 0;
        uint8_t *d = tt_slurp(path, &len);
        struct pt_arena_report r;
        pt_elf_arena_check(d ? d : (const uint8_t *)"", d ? len : 0, &r);
        out->arenas++;
        if (r.state == PT_ARENA_INVALID)
            fail(f, "ELF arena %s: invalid: %s", path, r.why);
        else if (r.state == PT_ARENA_INCOMPLETE)
            out->arenas_incomplete++;
        else
            arena_symbols(d, len, &ids, out, f);
        free(d);
        char text[2048];
        int rc = crash_run((char *const[]){(char *)cli, "check", path, NULL}, text, sizeof text);
        bool complete = r.state == PT_ARENA_COMPLETE;
        if (rc != (complete ? 0 : 1) || !strstr(text, complete ? "valid PERFTRAMP_ELF arena" : "incomplete"))
            fail(f, "perftramp check %s: exit %d, want %s: %.500s", path, rc, complete ? "0, valid" : "1, incomplete",
                 text);
    }
    closedir(dd);
    out->symbols_lost = ids_missing(&ids, p, true, false);
    ids_free(&ids);
    if (out->symbols_lost)
        fail(f, "ELF arenas: %zu live trampolines whose wrap returned have no symbol", out->symbols_lost);
}

int crash_check_files(const char *dir, pid_t pid, const struct crash_progress *p, bool with_elf, const char *cli,
                      const char *perf_version, struct crash_files *out, char *why, size_t why_len)
{
    memset(out, 0, sizeof *out);
    struct failure f = {why, why_len, false};
    why[0] = 0;
    if (atomic_load(&p->failures))
        fail(&f, "the producer saw %d failed wraps, calls or publishes", atomic_load(&p->failures));
    check_dump(dir, pid, p, cli, perf_version, out, &f);
    check_map(pid, p, out, &f);
    if (with_elf)
        check_arenas(dir, pid, p, cli, out, &f);
    return f.failed ? -1 : 0;
}
