/* SPDX-License-Identifier: MIT */
/* Names for the outputs (API layer).  When a slot keeps its name, what it
 * keeps for the outputs, in one allocation:
 *     name NUL file NUL line(4 bytes, native)
 * so that a->names[i] still reads as the plain name (the GDB output and
 * every replay use it as such), and perftramp_wrap_at's source position
 * travels with it to every later replay (perftramp_set_outputs, fork).
 * A slot keeps none where a replay can name it without a copy, or where
 * the caller gave names up (perftramp.h, PERFTRAMP_FORGET_NAMES): a
 * replay then asks the name callback, else reads the perf map written
 * while it was on, else shows a placeholder (pt_slot_replay_name). */
#include "api/context.h"
#include "api/output_table.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

size_t pt_slot_name_size(size_t name_len, const char *file, unsigned line)
{
    return name_len + 1 + (file && line ? strlen(file) : 0) + 1 + sizeof line;
}

void pt_slot_name_write(char *rec, const char *name, const char *file, unsigned line)
{
    size_t n = strlen(name) + 1;
    size_t f = file && line ? strlen(file) : 0;
    memcpy(rec, name, n);
    memcpy(rec + n, f ? file : "", f + 1);
    unsigned l = f ? line : 0;
    memcpy(rec + n + f + 1, &l, sizeof l);
}

static const char *file_of(const char *rec)
{
    return rec + strlen(rec) + 1;
}

const char *pt_slot_name_file(const char *rec)
{
    if (!rec)
        return NULL;
    const char *f = file_of(rec);
    return *f ? f : NULL;
}

unsigned pt_slot_name_line(const char *rec)
{
    unsigned l = 0;
    if (rec) {
        const char *f = file_of(rec);
        memcpy(&l, f + strlen(f) + 1, sizeof l);
    }
    return l;
}

/* ---- names for a replay when slots keep none ---- */

struct pt_map_name {
    uintptr_t addr;
    size_t order; /* line number: the later line for one address wins */
    const char *name;
};

void pt_names_map_note(struct perftramp *pt)
{
    /* its file holds every live slot now (the replay that fed it, or no
     * slot yet), and each later wrap's line while it works; its lines stay
     * when it is switched off or fails, and a map opened again appends */
    if (pt_output_on(pt, pt->names_source)) {
        pt->names_map_pid = pt->pid;
        pt->names_map_bytes = -1;
    }
}

static void map_path(char *path, size_t size, pid_t pid)
{
    snprintf(path, size, "/tmp/perf-%ld.map", (long)pid);
}

off_t pt_names_map_size(const struct perftramp *pt)
{
    char path[64];
    struct stat st;
    if (pt->names_map_bytes >= 0 || pt->names_map_pid <= 0)
        return pt->names_map_bytes;
    map_path(path, sizeof path, pt->names_map_pid);
    return stat(path, &st) == 0 ? st.st_size : -1;
}

static int by_addr(const void *pa, const void *pb)
{
    const struct pt_map_name *a = pa, *b = pb;
    if (a->addr != b->addr)
        return a->addr < b->addr ? -1 : 1;
    return a->order < b->order ? -1 : a->order > b->order;
}

/* What to read next of a file read up to `limit` bytes (-1: all). */
static size_t next_read(off_t limit, size_t done, size_t buf_size)
{
    if (limit < 0)
        return buf_size;
    off_t left = limit - (off_t)done;
    return left <= 0 ? 0 : left < (off_t)buf_size ? (size_t)left : buf_size;
}

void pt_map_names_load(struct pt_map_names *m, pid_t pid, off_t bytes)
{
    *m = (struct pt_map_names){0};
    char path[64];
    map_path(path, sizeof path, pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return;
    size_t cap = 0, len = 0;
    char buf[65536];
    size_t got;
    while ((got = fread(buf, 1, next_read(bytes, len, sizeof buf), f)) > 0) {
        if (len + got + 1 > cap) {
            size_t c = cap ? cap * 2 : sizeof buf * 2;
            while (c < len + got + 1)
                c *= 2;
            char *t = realloc(m->text, c);
            if (!t)
                goto fail;
            m->text = t;
            cap = c;
        }
        memcpy(m->text + len, buf, got);
        len += got;
    }
    fclose(f);
    f = NULL;
    if (!m->text)
        return;
    m->text[len] = 0;
    size_t lines = 0;
    for (size_t k = 0; k < len; k++)
        lines += m->text[k] == '\n';
    if (!(m->e = calloc(lines + 1, sizeof *m->e)))
        goto fail;
    for (char *p = m->text, *nl; p < m->text + len; p = nl + 1) {
        nl = strchr(p, '\n');
        if (!nl)
            nl = m->text + len;
        *nl = 0;
        char *end;
        uintmax_t addr = strtoumax(p, &end, 16);
        if (end == p || *end != ' ')
            continue;
        (void)strtoumax(end + 1, &end, 16); /* the size */
        if (*end != ' ')
            continue;
        m->e[m->n] = (struct pt_map_name){.addr = (uintptr_t)addr, .order = m->n, .name = end + 1};
        m->n++;
    }
    qsort(m->e, m->n, sizeof *m->e, by_addr);
    return;
fail:
    if (f)
        fclose(f);
    pt_map_names_free(m);
}

void pt_map_names_free(struct pt_map_names *m)
{
    free(m->e);
    free(m->text);
    *m = (struct pt_map_names){0};
}

/* The last line naming addr, or NULL. */
static const char *map_find(const struct pt_map_names *m, uintptr_t addr)
{
    size_t lo = 0, hi = m ? m->n : 0;
    while (lo < hi) { /* first entry above addr */
        size_t mid = lo + (hi - lo) / 2;
        if (m->e[mid].addr <= addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo > 0 && m->e[lo - 1].addr == addr ? m->e[lo - 1].name : NULL;
}

const char *pt_slot_replay_name(struct perftramp *pt, struct pt_arena *a, size_t i, const struct pt_map_names *m,
                                char *buf)
{
    if (a->names && a->names[i])
        return a->names[i];
    uintptr_t x = pt_slot_x(&pt->slots, a, i);
    if (pt->name_fn) {
        buf[0] = 0;
        size_t n = pt->name_fn(pt->name_data, (perftramp_fn)x, buf, PT_REPLAY_NAME_SIZE);
        if (n > 0 && buf[0]) {
            buf[PT_REPLAY_NAME_SIZE - 1] = 0;
            return buf;
        }
    }
    const char *from_map = map_find(m, x);
    if (from_map)
        return from_map;
    snprintf(buf, PT_REPLAY_NAME_SIZE, "[perftramp@0x%" PRIxPTR "]", x);
    return buf;
}

struct fill {
    struct perftramp *pt;
    const struct pt_map_names *m;
    char *buf;
};

static int fill_one(struct pt_arena *a, size_t i, void *arg)
{
    struct fill *f = arg;
    if (a->names && a->names[i])
        return 0;
    if (!a->names && !(a->names = calloc(a->n_slots, sizeof *a->names)))
        return -1;
    const char *name = pt_slot_replay_name(f->pt, a, i, f->m, f->buf);
    char *rec = malloc(pt_slot_name_size(strlen(name), NULL, 0));
    if (!rec)
        return -1;
    pt_slot_name_write(rec, name, NULL, 0);
    a->names[i] = rec;
    return 0;
}

int pt_names_fill(struct perftramp *pt, const struct pt_map_names *m)
{
    char *buf = malloc(PT_REPLAY_NAME_SIZE);
    if (!buf) {
        errno = ENOMEM;
        return -1;
    }
    struct fill f = {.pt = pt, .m = m, .buf = buf};
    int r = pt_for_each_live(&pt->slots, fill_one, &f);
    free(buf);
    if (r) {
        errno = ENOMEM;
        return -1;
    }
    return 0;
}
