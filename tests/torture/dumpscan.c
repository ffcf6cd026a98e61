/* SPDX-License-Identifier: MIT */
/* See dumpscan.h. */
#define _GNU_SOURCE
#include "dumpscan.h"
#include "read/jitdump_reader.h"
#include "torture.h"

#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static bool is_hex(unsigned char c)
{
    return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* Parses [0-9a-fA-F]+ at p; returns the bytes used (0: none). */
static size_t hex_field(const unsigned char *p, const unsigned char *end, uint64_t *v)
{
    size_t n = 0;
    *v = 0;
    while (p + n < end && is_hex(p[n]) && n < 17) {
        unsigned char c = p[n];
        *v = *v * 16 + (uint64_t)(c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10);
        n++;
    }
    return n > 16 ? 0 : n;
}

int ds_scan_map(const char *path, ds_map_fn cb, void *arg, struct ds_map_stats *st)
{
    memset(st, 0, sizeof *st);
    size_t len;
    unsigned char *buf = tt_slurp(path, &len);
    if (!buf) {
        snprintf(st->error, sizeof st->error, "%s: %s", path, strerror(errno));
        return -2;
    }
    st->bytes = len;
    int r = 0;
    const unsigned char *p = buf, *end = buf + len;
    while (p < end) {
        const unsigned char *nl = memchr(p, '\n', (size_t)(end - p));
        if (!nl) {
            st->torn_tail = (size_t)(end - p);
            break;
        }
        if (nl == p) { /* an empty line: padding that keeps lines off 4 KiB boundaries */
            st->blank++;
            p = nl + 1;
            continue;
        }
        uint64_t start, size;
        size_t a = hex_field(p, nl, &start);
        const unsigned char *q = p + a;
        size_t b = (a && q < nl && *q == ' ') ? hex_field(q + 1, nl, &size) : 0;
        q += 1 + b;
        if (!a || !b || q >= nl || *q != ' ') {
            snprintf(st->error, sizeof st->error, "line %zu: not 'START SIZE name': '%.*s'", st->lines + 1,
                     (int)((nl - p) > 80 ? 80 : (nl - p)), (const char *)p);
            r = -1;
            break;
        }
        q++;
        if (memchr(q, 0, (size_t)(nl - q))) {
            snprintf(st->error, sizeof st->error, "line %zu: NUL byte in the name", st->lines + 1);
            r = -1;
            break;
        }
        if (size == 0) {
            snprintf(st->error, sizeof st->error, "line %zu: size 0", st->lines + 1);
            r = -1;
            break;
        }
        st->lines++;
        if (cb && cb(arg, start, size, (const char *)q, (size_t)(nl - q)) != 0) {
            r = -1;
            break;
        }
        p = nl + 1;
    }
    free(buf);
    return r;
}

enum { JD_LOAD = 0, JD_MOVE = 1, JD_DEBUG_INFO = 2, JD_CLOSE = 3, JD_UNWINDING_INFO = 4 };

static uint32_t rd32(const unsigned char *p)
{
    uint32_t v;
    memcpy(&v, p, 4);
    return v;
}

static uint64_t rd64(const unsigned char *p)
{
    uint64_t v;
    memcpy(&v, p, 8);
    return v;
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

static uint64_t fnv1a(const unsigned char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

#define FAIL(...)                                                                                      \
    do {                                                                                               \
        snprintf(st->error, sizeof st->error, __VA_ARGS__);                                            \
        r = -1;                                                                                        \
        goto out;                                                                                      \
    } while (0)

int ds_scan_jitdump(const char *path, ds_load_fn cb, void *arg, struct ds_dump_stats *st)
{
    memset(st, 0, sizeof *st);
    size_t len;
    unsigned char *buf = tt_slurp(path, &len);
    if (!buf) {
        snprintf(st->error, sizeof st->error, "%s: %s", path, strerror(errno));
        return -2;
    }
    int r = 0;
    size_t cap = 1024, n_idx = 0;
    uint64_t *idx = malloc(cap * sizeof *idx), *hashes = malloc(cap * sizeof *hashes);
    if (!idx || !hashes)
        FAIL("out of memory");
    if (len < 40)
        FAIL("%zu bytes: no complete header", len);
    if (rd32(buf) != 0x4A695444)
        FAIL("bad magic %#x", rd32(buf));
    if (rd32(buf + 4) != 1)
        FAIL("version %u, perf wants 1", rd32(buf + 4));
    uint32_t hsize = rd32(buf + 8);
    if (hsize < 40 || hsize > len)
        FAIL("header total_size %u", hsize);
    st->elf_mach = rd32(buf + 12);
    if (rd32(buf + 16) != 0)
        FAIL("header pad not 0");
    st->pid = rd32(buf + 20);
    if (rd64(buf + 32) != 0)
        FAIL("header flags %#llx, want 0", (unsigned long long)rd64(buf + 32));
    size_t off = hsize;
    int pending = -1; /* id of the last UNWINDING/DEBUG record not yet followed by its LOAD */
    while (off < len) {
        size_t z = off;
        while (z < len && buf[z] == 0)
            z++;
        if (z == len && len - off <= 128 * 1024) { /* a live writer's room ahead (PT_JD_RESERVED_MAX) */
            st->reserved = len - off;
            break;
        }
        if (len - off >= 8 && rd32(buf + off + 4) == 0 && len - off <= 128 * 1024) {
            /* that room, holding a record of total_size 0: the bytes of a
             * group a killed writer was copying in, its size not yet stored */
            size_t last = len;
            while (buf[last - 1] == 0)
                last--;
            st->uncommitted = last - off;
            st->reserved = len - last;
            break;
        }
        if (len - off < 16) {
            st->torn_tail = len - off;
            break;
        }
        const unsigned char *rec = buf + off;
        uint32_t id = rd32(rec), size = rd32(rec + 4);
        if (size < 16)
            FAIL("record %zu at %zu: total_size %u", st->records, off, size);
        if (id > JD_UNWINDING_INFO)
            FAIL("record %zu at %zu: unknown id %u (interleaved or corrupt)", st->records, off, id);
        if (size > len - off) {
            st->torn_tail = len - off;
            break;
        }
        if (st->closes)
            FAIL("record %zu at %zu after CLOSE", st->records, off);
        const unsigned char *body = rec + 16, *rend = rec + size;
        switch (id) {
        case JD_LOAD: {
            if (size < 16 + 40 + 1)
                FAIL("LOAD at %zu: %u bytes", off, size);
            struct ds_load l = {.pid = rd32(body), .tid = rd32(body + 4), .timestamp = rd64(rec + 8),
                                .vma = rd64(body + 8), .code_addr = rd64(body + 16), .code_size = rd64(body + 24),
                                .code_index = rd64(body + 32)};
            const unsigned char *name = body + 40;
            const unsigned char *nul = memchr(name, 0, (size_t)(rend - name));
            if (!nul)
                FAIL("LOAD at %zu: name not NUL-terminated inside the record", off);
            if (l.code_size == 0 || (uint64_t)(rend - (nul + 1)) != l.code_size)
                FAIL("LOAD at %zu: %zu bytes after the name, code_size %llu (perf reads code at the record end)",
                     off, (size_t)(rend - (nul + 1)), (unsigned long long)l.code_size);
            if (l.vma != l.code_addr)
                FAIL("LOAD at %zu: vma %#llx != code_addr %#llx", off, (unsigned long long)l.vma,
                     (unsigned long long)l.code_addr);
            if (l.pid != st->pid)
                FAIL("LOAD at %zu: pid %u in a dump of pid %u", off, l.pid, st->pid);
            l.name = (const char *)name;
            l.code = nul + 1;
            if (n_idx == cap) {
                cap *= 2;
                uint64_t *a = realloc(idx, cap * sizeof *idx);
                if (a)
                    idx = a;
                uint64_t *b = realloc(hashes, cap * sizeof *hashes);
                if (b)
                    hashes = b;
                if (!a || !b)
                    FAIL("out of memory");
            }
            idx[n_idx] = l.code_index;
            hashes[n_idx++] = fnv1a(l.code, l.code_size);
            st->loads++;
            pending = -1;
            if (cb && cb(arg, &l) != 0) {
                r = -1;
                goto out;
            }
            break;
        }
        case JD_UNWINDING_INFO: {
            if (pending >= 0)
                FAIL("UNWINDING_INFO at %zu follows another group's record without its LOAD", off);
            if (size < 16 + 24 || size % 8)
                FAIL("UNWINDING_INFO at %zu: size %u (min 40, multiple of 8)", off, size);
            uint64_t usz = rd64(body), hsz = rd64(body + 8), msz = rd64(body + 16);
            if (usz > size - 40 || hsz > usz || size - 40 - usz >= 8)
                FAIL("UNWINDING_INFO at %zu: unwinding_size %llu hdr %llu in %u bytes", off,
                     (unsigned long long)usz, (unsigned long long)hsz, size);
            if (msz == 0)
                FAIL("UNWINDING_INFO at %zu: mapped_size 0", off);
            st->unwinding++;
            pending = JD_UNWINDING_INFO;
            break;
        }
        case JD_DEBUG_INFO:
            if (pending == JD_DEBUG_INFO)
                FAIL("two DEBUG_INFO records at %zu without a LOAD", off);
            st->debug++;
            pending = JD_DEBUG_INFO;
            break;
        case JD_MOVE:
            st->moves++;
            break;
        case JD_CLOSE:
            if (pending >= 0)
                FAIL("CLOSE at %zu inside a group", off);
            st->closes++;
            break;
        }
        st->records++;
        off += size;
    }
    if (pending >= 0 && !st->torn_tail)
        FAIL("the dump ends inside a group (UNWINDING/DEBUG without its LOAD)");
    qsort(idx, n_idx, sizeof *idx, cmp_u64);
    for (size_t i = 1; i < n_idx; i++)
        if (idx[i] == idx[i - 1])
            FAIL("code_index %llu used twice", (unsigned long long)idx[i]);
    qsort(hashes, n_idx, sizeof *hashes, cmp_u64);
    for (size_t i = 1; i < n_idx; i++)
        if (hashes[i] == hashes[i - 1])
            st->dup_code++;
out:
    free(idx);
    free(hashes);
    free(buf);
    return r;
}

void ds_run_cli_check(const char *dump)
{
    const char *b = getenv("PT_BUILDDIR");
    char cli[4096];
    static const char *const where[] = {"tools/perftramp", "perftramp"};
    for (size_t i = 0; b && i < sizeof where / sizeof where[0]; i++) {
        snprintf(cli, sizeof cli, "%s/%s", b, where[i]);
        if (access(cli, X_OK) != 0)
            continue;
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            int null = open("/dev/null", O_WRONLY);
            if (null >= 0)
                dup2(null, 1);
            execl(cli, cli, "check", dump, (char *)NULL);
            _exit(127);
        }
        int status;
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "%s check %s: status %#x", cli, dump, status);
        return;
    }
    printf("note: no perftramp CLI in $PT_BUILDDIR; only the torture scanner checked %s\n", dump);
}

struct first_error {
    char *why;
    size_t len;
    bool seen;
};

static void keep_first_error(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg)
{
    struct first_error *f = arg;
    if (sev == PT_JD_ERROR && !f->seen && f->why) {
        snprintf(f->why, f->len, "offset %zu: %s", offset, msg);
        f->seen = true;
    }
}

size_t ds_validate_jitdump(const char *path, struct pt_jd_summary *sum, char *why, size_t why_len)
{
    size_t len;
    unsigned char *buf = tt_slurp(path, &len);
    if (why && why_len)
        why[0] = 0;
    if (!buf) {
        if (why)
            snprintf(why, why_len, "%s: %s", path, strerror(errno));
        return SIZE_MAX;
    }
    struct first_error f = {why, why_len, false};
    size_t errors = pt_jitdump_validate(buf, len, sum, keep_first_error, &f);
    free(buf);
    return errors;
}
