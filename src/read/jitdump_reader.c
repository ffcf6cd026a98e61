/* SPDX-License-Identifier: MIT */
/* jitdump reader and validator.  Format facts: tools/perf/util/jitdump.h
 * (header, prefix, records), jitdump.c (how perf inject consumes them),
 * genelf.c (where .text/.eh_frame/.eh_frame_hdr land in the ELF it
 * synthesizes per LOAD).  See docs/facts.md "jitdump". */
#include "read/jitdump_reader.h"

#include "read/eh_decode.h"
#include "read/jitdump_rows.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* perf's genelf puts .text at this file offset (0x40 on old perf, 0x80
 * now); .eh_frame at ALIGN8(text + code_size), the hdr right after. */
static const uint64_t genelf_text_offsets[2] = {0x40, 0x80};

#define MAX_ISSUES_PER_KIND 20 /* keep a fuzzed file from flooding the report */
#define PT_JD_MAX_ROWS 1024     /* rows per FDE program we decode */

const char *pt_jd_record_name(uint32_t id)
{
    static const char *const names[PT_JD_ID_COUNT] = {"LOAD", "MOVE", "DEBUG_INFO", "CLOSE", "UNWINDING_INFO"};
    return id < PT_JD_ID_COUNT ? names[id] : "UNKNOWN";
}

static bool host_big_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 0;
}

static uint64_t load_n(const uint8_t *p, unsigned n, bool big)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

/* Readers in the file's byte order. */
static uint32_t f32(const struct pt_jd_iter *it, const uint8_t *p)
{
    return (uint32_t)load_n(p, 4, host_big_endian() != it->header.swapped);
}
static uint64_t f64(const struct pt_jd_iter *it, const uint8_t *p)
{
    return load_n(p, 8, host_big_endian() != it->header.swapped);
}

int pt_jd_iter_init(struct pt_jd_iter *it, const uint8_t *data, size_t len)
{
    memset(it, 0, sizeof *it);
    it->data = data;
    it->len = len;
    if (!data || len < PT_JD_HEADER_SIZE) {
        snprintf(it->error, sizeof it->error, "file of %zu bytes is shorter than the %u-byte header", len,
                 PT_JD_HEADER_SIZE);
        return -1;
    }
    uint32_t magic = (uint32_t)load_n(data, 4, host_big_endian());
    if (magic == PT_JD_MAGIC)
        it->header.swapped = false;
    else if (__builtin_bswap32(magic) == PT_JD_MAGIC)
        it->header.swapped = true;
    else {
        snprintf(it->error, sizeof it->error, "bad magic 0x%08x (expected 0x%08x)", magic, PT_JD_MAGIC);
        return -1;
    }
    struct pt_jd_header *h = &it->header;
    h->magic = PT_JD_MAGIC;
    h->version = f32(it, data + 4);
    h->total_size = f32(it, data + 8);
    h->elf_mach = f32(it, data + 12);
    h->pad1 = f32(it, data + 16);
    h->pid = f32(it, data + 20);
    h->timestamp = f64(it, data + 24);
    h->flags = f64(it, data + 32);
    /* records follow the header's declared size when it is sane */
    it->off = h->total_size >= PT_JD_HEADER_SIZE && h->total_size <= len ? h->total_size : PT_JD_HEADER_SIZE;
    return 0;
}

static void decode_body(const struct pt_jd_iter *it, struct pt_jd_record *r)
{
    const uint8_t *b = r->body;
    size_t n = r->body_len;
    switch (r->id) {
    case PT_JD_LOAD: {
        if (n < PT_JD_LOAD_FIXED - PT_JD_PREFIX_SIZE) {
            r->malformed = true;
            return;
        }
        r->pid = f32(it, b);
        r->tid = f32(it, b + 4);
        r->vma = f64(it, b + 8);
        r->code_addr = f64(it, b + 16);
        r->code_size = f64(it, b + 24);
        r->code_index = f64(it, b + 32);
        size_t rest = n - 40;
        const uint8_t *name = b + 40;
        /* perf reads the code at record_end - code_size, the name at +56 */
        if (r->code_size >= rest) {
            r->malformed = true; /* no room for the name's NUL */
            return;
        }
        size_t name_room = rest - (size_t)r->code_size;
        const uint8_t *nul = memchr(name, 0, name_room);
        if (!nul) {
            r->malformed = true;
            return;
        }
        r->name = (const char *)name;
        r->name_len = (size_t)(nul - name);
        r->code = b + n - (size_t)r->code_size;
        return;
    }
    case PT_JD_MOVE:
        if (n < 48) {
            r->malformed = true;
            return;
        }
        r->pid = f32(it, b);
        r->tid = f32(it, b + 4);
        r->vma = f64(it, b + 8);
        r->old_code_addr = f64(it, b + 16);
        r->code_addr = f64(it, b + 24);
        r->code_size = f64(it, b + 32);
        r->code_index = f64(it, b + 40);
        return;
    case PT_JD_DEBUG_INFO:
        if (n < 16) {
            r->malformed = true;
            return;
        }
        r->code_addr = f64(it, b);
        r->nr_entry = f64(it, b + 8);
        return;
    case PT_JD_UNWINDING_INFO:
        if (n < PT_JD_UNWIND_FIXED - PT_JD_PREFIX_SIZE) {
            r->malformed = true;
            return;
        }
        r->unwinding_size = f64(it, b);
        r->eh_frame_hdr_size = f64(it, b + 8);
        r->mapped_size = f64(it, b + 16);
        if (r->unwinding_size > n - 24 || r->eh_frame_hdr_size > r->unwinding_size) {
            r->malformed = true;
            return;
        }
        r->unwinding = b + 24;
        return;
    default:
        return;
    }
}

int pt_jd_next(struct pt_jd_iter *it, struct pt_jd_record *r)
{
    memset(r, 0, sizeof *r);
    if (it->off >= it->len)
        return 0;
    size_t left = it->len - it->off;
    const uint8_t *p = it->data + it->off;
    if (left < PT_JD_PREFIX_SIZE) {
        snprintf(it->error, sizeof it->error, "torn record: %zu bytes left, less than a record prefix", left);
        return -1;
    }
    r->offset = it->off;
    r->id = f32(it, p);
    r->total_size = f32(it, p + 4);
    r->timestamp = f64(it, p + 8);
    if (r->total_size < PT_JD_PREFIX_SIZE) {
        snprintf(it->error, sizeof it->error, "record total_size %u is smaller than its prefix", r->total_size);
        return -1;
    }
    if (r->total_size > left) {
        snprintf(it->error, sizeof it->error, "torn record: %s of %u bytes, only %zu bytes left",
                 pt_jd_record_name(r->id), r->total_size, left);
        return -1;
    }
    r->body = p + PT_JD_PREFIX_SIZE;
    r->body_len = r->total_size - PT_JD_PREFIX_SIZE;
    decode_body(it, r);
    it->off += r->total_size;
    return 1;
}

/* ---- validation ------------------------------------------------------ */

struct load_info {
    size_t offset;
    uint64_t code_addr, code_size, code_index, map_end;
    uint64_t hash;
    const uint8_t *code;
};

struct vstate {
    pt_jd_issue_fn fn;
    void *arg;
    struct pt_jd_summary *sum;
    unsigned per_kind[32];
    struct load_info *loads;
    size_t n_loads, cap_loads;
    bool big_endian; /* of the data inside records (.eh_frame) */
    struct pt_row *rows; /* scratch for decoding FDE programs */
    struct pt_jd_rows *row_check; /* rules at every pc (jitdump_rows.h) */
};

enum issue_kind {
    K_HEADER, K_FRAMING, K_ID, K_TIME, K_LOAD, K_NAME, K_PID, K_UNWIND, K_EH, K_BIND, K_DUP_INDEX,
    K_DUP_CODE, K_OVERLAP, K_MOVE, K_DEBUG, K_CLOSE, K_NOMEM, K_ROWS, K_COUNT
};

__attribute__((format(printf, 5, 6))) static void issue(struct vstate *s, enum issue_kind k,
                                                      enum pt_jd_severity sev, size_t off, const char *fmt, ...)
{
    if (sev == PT_JD_ERROR)
        s->sum->errors++;
    else
        s->sum->warnings++;
    if (++s->per_kind[k] > MAX_ISSUES_PER_KIND) {
        if (s->per_kind[k] == MAX_ISSUES_PER_KIND + 1 && s->fn)
            s->fn(s->arg, sev, off, "(further issues of this kind are counted, not shown)");
        return;
    }
    if (!s->fn)
        return;
    char msg[512]; /* room for two rows of rules (jitdump_rows.c) */
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    s->fn(s->arg, sev, off, msg);
}

static uint64_t align8(uint64_t v)
{
    return (v + 7) & ~(uint64_t)7;
}

static uint64_t fnv1a(const uint8_t *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}

static void check_header(struct vstate *s, const struct pt_jd_header *h, size_t len)
{
    if (h->version > PT_JD_VERSION)
        issue(s, K_HEADER, PT_JD_ERROR, 4, "version %u: perf accepts only %u", h->version, PT_JD_VERSION);
    else if (h->version == 0)
        issue(s, K_HEADER, PT_JD_WARNING, 4, "version 0 (current is %u)", PT_JD_VERSION);
    if (h->total_size != PT_JD_HEADER_SIZE)
        issue(s, K_HEADER, PT_JD_ERROR, 8, "header total_size %u, expected %u: perf misframes other sizes",
              h->total_size, PT_JD_HEADER_SIZE);
    if (h->total_size > len)
        issue(s, K_HEADER, PT_JD_ERROR, 8, "header total_size %u runs past the %zu-byte file", h->total_size, len);
    if (h->flags & ~(uint64_t)PT_JD_FLAG_ARCH_TIMESTAMP)
        issue(s, K_HEADER, PT_JD_ERROR, 32, "unknown header flags 0x%llx: perf rejects the dump",
              (unsigned long long)(h->flags & ~(uint64_t)PT_JD_FLAG_ARCH_TIMESTAMP));
    if (h->flags & PT_JD_FLAG_ARCH_TIMESTAMP)
        issue(s, K_HEADER, PT_JD_WARNING, 32,
              "arch (TSC) timestamps: perf needs a time conversion; perftramp writes CLOCK_MONOTONIC");
    if (h->elf_mach == 0)
        issue(s, K_HEADER, PT_JD_WARNING, 12, "elf_mach is 0 (EM_NONE)");
    if (h->swapped)
        issue(s, K_HEADER, PT_JD_WARNING, 0, "dump is in the other byte order than this host");
}

struct eh_walk {
    struct pt_eh_ctx *ctx;
    struct pt_row *rows;
    size_t max_rows;
    uint64_t text, end;
    bool covered, rows_bad;
    uint64_t fde_addr;
    char why[200];
};

static int eh_walk_cb(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct eh_walk *w = arg;
    if (pt_eh_rows(w->ctx, cie, fde, w->rows, w->max_rows) < 0) {
        snprintf(w->why, sizeof w->why, "FDE at +%zu: %s", fde->offset, w->ctx->error);
        w->rows_bad = true;
        return 1;
    }
    /* covers the code start (what the rest covers, pc by pc, is
     * jitdump_rows.c's part) */
    if (!w->covered && fde->pc_begin <= w->text && w->text - fde->pc_begin < fde->pc_range) {
        w->covered = true;
        w->fde_addr = w->ctx->address + fde->offset;
    }
    return 0;
}

struct hdr_rows {
    uint64_t text, fde_addr;
    bool found;
};

static void hdr_row_cb(void *arg, uint64_t pc, uint64_t fde)
{
    struct hdr_rows *h = arg;
    if (pc == h->text && fde == h->fde_addr)
        h->found = true;
}

/* Decodes the unwinding info as genelf lays it out next to code of
 * `code_size` bytes with .text at address `text`.  Returns true when it
 * is usable; otherwise describes the first problem in `why`. */
static bool eh_usable_at(struct vstate *s, const struct pt_jd_record *u, uint64_t code_size, uint64_t text,
                         char *why, size_t why_len)
{
    size_t hdr_size = (size_t)u->eh_frame_hdr_size;
    size_t eh_size = (size_t)u->unwinding_size - hdr_size;
    uint64_t eh_addr = align8(text + code_size);
    uint64_t hdr_addr = eh_addr + eh_size;
    struct pt_eh_ctx ctx = {.data = u->unwinding, .len = eh_size, .address = eh_addr,
                            .big_endian = s->big_endian, .addr_size = 8};
    struct eh_walk w = {.ctx = &ctx, .rows = s->rows, .max_rows = PT_JD_MAX_ROWS, .text = text, .end = text + code_size};
    size_t n_cies = 0, n_fdes = 0;
    int r = pt_eh_walk(&ctx, eh_walk_cb, &w, &n_cies, &n_fdes);
    if (w.rows_bad) {
        snprintf(why, why_len, ".eh_frame: %s", w.why);
        return false;
    }
    if (r < 0) {
        snprintf(why, why_len, ".eh_frame at +%zu: %s", ctx.error_offset, ctx.error);
        return false;
    }
    if (!w.covered) {
        snprintf(why, why_len, ".eh_frame: none of its %zu FDEs covers the %llu code bytes in the genelf layout",
                 n_fdes, (unsigned long long)code_size);
        return false;
    }
    struct pt_eh_ctx hctx = {.data = u->unwinding + eh_size, .len = hdr_size, .address = hdr_addr,
                             .big_endian = s->big_endian, .addr_size = 8};
    struct pt_eh_hdr_info hi;
    struct hdr_rows hr = {.text = text, .fde_addr = w.fde_addr};
    if (pt_eh_hdr_decode(&hctx, &hi, hdr_row_cb, &hr) < 0) {
        snprintf(why, why_len, ".eh_frame_hdr: %s", hctx.error);
        return false;
    }
    if (hi.eh_frame_ptr != eh_addr) {
        snprintf(why, why_len,
                 ".eh_frame_hdr eh_frame_ptr is %+lld bytes off .eh_frame (genelf: .eh_frame first, hdr last)",
                 (long long)(hi.eh_frame_ptr - eh_addr));
        return false;
    }
    if (!hi.sorted) {
        snprintf(why, why_len, ".eh_frame_hdr table is not sorted by pc");
        return false;
    }
    if (!hr.found) {
        snprintf(why, why_len, ".eh_frame_hdr: no table row {code start, covering FDE} among %llu rows",
                 (unsigned long long)hi.fde_count);
        return false;
    }
    return true;
}

static void rows_issue(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg)
{
    issue(arg, K_ROWS, sev, offset, "%s", msg);
}

static void check_unwinding(struct vstate *s, const struct pt_jd_record *u, const struct pt_jd_record *load)
{
    /* V8 (node --perf-prof-unwinding-info) writes this for code without
     * CFI (builtins): no .eh_frame bytes, only a 20-byte .eh_frame_hdr with
     * fde_count 0, mapped_size 0 -- its way to ask for frame-pointer
     * unwinding.  A warning, like unwinding_size 0. */
    if (u->unwinding_size == 0 || (u->unwinding_size == u->eh_frame_hdr_size && u->mapped_size == 0)) {
        issue(s, K_UNWIND, PT_JD_WARNING, u->offset,
              "empty unwinding info for LOAD at %zu: perf --call-graph dwarf cannot unwind it", load->offset);
        return;
    }
    if (u->eh_frame_hdr_size == 0) {
        issue(s, K_UNWIND, PT_JD_ERROR, u->offset,
              "eh_frame_hdr_size is 0: perf ignores this unwinding info (it needs the hdr)");
        return;
    }
    if (u->mapped_size == 0)
        issue(s, K_UNWIND, PT_JD_ERROR, u->offset,
              "mapped_size is 0: perf maps only the code and --call-graph dwarf cannot find .eh_frame");
    else if (u->mapped_size < u->unwinding_size)
        issue(s, K_UNWIND, PT_JD_WARNING, u->offset, "mapped_size %llu is smaller than unwinding_size %llu",
              (unsigned long long)u->mapped_size, (unsigned long long)u->unwinding_size);
    /* position independence: the same answer wherever perf puts .text */
    char why[256];
    for (size_t i = 0; i < sizeof genelf_text_offsets / sizeof genelf_text_offsets[0]; i++) {
        if (!eh_usable_at(s, u, load->code_size, genelf_text_offsets[i], why, sizeof why)) {
            issue(s, K_EH, PT_JD_ERROR, u->offset, "%s (with .text at 0x%llx)", why,
                  (unsigned long long)genelf_text_offsets[i]);
            return;
        }
    }
    /* the rules at every pc: a CFA and a return address everywhere, and
     * the table's rules where the code is a built-in trampoline */
    pt_jd_rows_check(s->row_check, s->sum->header.elf_mach, s->big_endian, u, load, rows_issue, s);
}

static bool add_load(struct vstate *s, const struct pt_jd_record *r, uint64_t mapped_size)
{
    if (s->n_loads == s->cap_loads) {
        size_t cap = s->cap_loads ? s->cap_loads * 2 : 64;
        struct load_info *p = realloc(s->loads, cap * sizeof *p);
        if (!p) {
            issue(s, K_NOMEM, PT_JD_ERROR, r->offset, "out of memory: cross-record checks incomplete");
            return false;
        }
        s->loads = p;
        s->cap_loads = cap;
    }
    struct load_info *l = &s->loads[s->n_loads++];
    l->offset = r->offset;
    l->code_addr = r->code_addr;
    l->code_size = r->code_size;
    l->code_index = r->code_index;
    uint64_t span = mapped_size ? align8(r->code_size) + mapped_size : r->code_size;
    l->map_end = r->code_addr + span < r->code_addr ? UINT64_MAX : r->code_addr + span;
    l->code = r->code;
    l->hash = fnv1a(r->code, (size_t)r->code_size);
    return true;
}

static void check_load(struct vstate *s, const struct pt_jd_record *r, const struct pt_jd_header *h)
{
    if (r->malformed) {
        issue(s, K_LOAD, PT_JD_ERROR, r->offset,
              "LOAD does not hold fields + NUL-terminated name + %llu code bytes in its %u bytes",
              (unsigned long long)r->code_size, r->total_size);
        return;
    }
    if (r->code_size == 0)
        issue(s, K_LOAD, PT_JD_WARNING, r->offset, "LOAD with code_size 0");
    if (r->code_size > 0x7fffffff)
        issue(s, K_LOAD, PT_JD_ERROR, r->offset, "code_size %llu does not fit perf's int",
              (unsigned long long)r->code_size);
    if (r->code_addr == 0)
        issue(s, K_LOAD, PT_JD_WARNING, r->offset, "LOAD at code_addr 0");
    if (r->name_len == 0)
        issue(s, K_NAME, PT_JD_WARNING, r->offset, "LOAD with an empty name");
    for (size_t i = 0; i < r->name_len; i++)
        if ((unsigned char)r->name[i] < 0x20 || r->name[i] == 0x7f) {
            issue(s, K_NAME, PT_JD_WARNING, r->offset, "name holds control byte 0x%02x at %zu",
                  (unsigned char)r->name[i], i);
            break;
        }
    if (r->pid != h->pid)
        issue(s, K_PID, PT_JD_WARNING, r->offset, "LOAD pid %u differs from the header pid %u", r->pid, h->pid);
}

static int cmp_index(const void *a, const void *b)
{
    const struct load_info *x = a, *y = b;
    if (x->code_index != y->code_index)
        return x->code_index < y->code_index ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_hash(const void *a, const void *b)
{
    const struct load_info *x = a, *y = b;
    if (x->hash != y->hash)
        return x->hash < y->hash ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

static int cmp_range(const void *a, const void *b)
{
    const struct load_info *x = a, *y = b;
    if (x->code_addr != y->code_addr)
        return x->code_addr < y->code_addr ? -1 : 1;
    if (x->map_end != y->map_end)
        return x->map_end < y->map_end ? -1 : 1;
    return x->offset < y->offset ? -1 : x->offset > y->offset;
}

/* Checks across all LOADs: sorting makes each one O(n log n). */
static void check_loads(struct vstate *s)
{
    struct load_info *l = s->loads;
    size_t n = s->n_loads;
    if (n < 2)
        return;
    qsort(l, n, sizeof *l, cmp_index);
    for (size_t i = 1; i < n; i++)
        if (l[i].code_index == l[i - 1].code_index)
            issue(s, K_DUP_INDEX, PT_JD_ERROR, l[i].offset,
                  "code_index %llu reused (first at %zu): perf overwrites jitted-<pid>-%llu.so",
                  (unsigned long long)l[i].code_index, l[i - 1].offset, (unsigned long long)l[i].code_index);
    qsort(l, n, sizeof *l, cmp_hash);
    for (size_t i = 1; i < n; i++) {
        /* compare against every earlier entry with the same hash */
        for (size_t j = i; j-- > 0 && l[j].hash == l[i].hash;) {
            if (l[j].code_size == l[i].code_size && memcmp(l[j].code, l[i].code, (size_t)l[i].code_size) == 0) {
                /* a warning: the dump is valid and perf accepts it, only names may
                 * merge; node 20 itself repeats code (e.g. identical stubs) */
                issue(s, K_DUP_CODE, PT_JD_WARNING, l[i].offset,
                      "same code bytes as the LOAD at %zu: perf derives equal build-ids and merges their names",
                      l[j].offset);
                break;
            }
        }
    }
    qsort(l, n, sizeof *l, cmp_range);
    for (size_t i = 1; i < n; i++) {
        bool overlap = l[i].code_addr < l[i - 1].map_end;
        bool same = l[i].code_addr == l[i - 1].code_addr && l[i].map_end == l[i - 1].map_end;
        if (overlap && !same)
            issue(s, K_OVERLAP, PT_JD_ERROR, l[i].offset,
                  "mapped range [0x%llx,0x%llx) partially overlaps [0x%llx,0x%llx) of the LOAD at %zu",
                  (unsigned long long)l[i].code_addr, (unsigned long long)l[i].map_end,
                  (unsigned long long)l[i - 1].code_addr, (unsigned long long)l[i - 1].map_end, l[i - 1].offset);
    }
}

static void check_debug_info(struct vstate *s, const struct pt_jd_record *r)
{
    if (r->malformed) {
        issue(s, K_DEBUG, PT_JD_ERROR, r->offset, "DEBUG_INFO shorter than its fixed fields");
        return;
    }
    /* entries: u64 addr, u32 lineno, u32 discrim, NUL-terminated name */
    const uint8_t *p = r->body + 16, *end = r->body + r->body_len;
    for (uint64_t i = 0; i < r->nr_entry; i++) {
        const uint8_t *nul = (size_t)(end - p) > 16 ? memchr(p + 16, 0, (size_t)(end - p - 16)) : NULL;
        if (!nul) {
            issue(s, K_DEBUG, PT_JD_ERROR, r->offset, "DEBUG_INFO entry %llu of %llu runs past the record",
                  (unsigned long long)i, (unsigned long long)r->nr_entry);
            return;
        }
        p = nul + 1;
    }
}

size_t pt_jitdump_validate(const uint8_t *data, size_t len, struct pt_jd_summary *sum, pt_jd_issue_fn fn,
                           void *arg)
{
    struct pt_jd_summary local;
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    struct vstate s = {.fn = fn, .arg = arg, .sum = sum};
    struct pt_jd_iter it;
    if (pt_jd_iter_init(&it, data, len) < 0) {
        issue(&s, K_HEADER, PT_JD_ERROR, 0, "%s", it.error);
        sum->trailing_bytes = len;
        return sum->errors;
    }
    sum->header = it.header;
    sum->header_ok = true;
    s.big_endian = host_big_endian() != it.header.swapped;
    s.rows = malloc(PT_JD_MAX_ROWS * sizeof *s.rows);
    s.row_check = pt_jd_rows_new();
    if (!s.rows || !s.row_check) {
        issue(&s, K_NOMEM, PT_JD_ERROR, 0, "out of memory");
        free(s.rows);
        pt_jd_rows_free(s.row_check);
        return sum->errors;
    }
    check_header(&s, &it.header, len);
    sum->valid_bytes = it.off;

    struct pt_jd_record r, pending_unwind = {0};
    bool have_unwind = false, have_debug = false;
    uint64_t debug_addr = 0, last_ts = 0;
    size_t debug_off = 0;
    int k;
    while ((k = pt_jd_next(&it, &r)) == 1) {
        sum->records++;
        sum->valid_bytes = it.off;
        if (r.id < PT_JD_ID_COUNT) {
            sum->by_id[r.id]++;
            sum->bytes_by_id[r.id] += r.total_size;
        } else {
            sum->unknown++;
            issue(&s, K_ID, PT_JD_WARNING, r.offset, "unknown record id %u (%u bytes): perf skips it", r.id,
                  r.total_size);
        }
        if (sum->records == 1)
            sum->first_timestamp = r.timestamp;
        else if (r.timestamp < last_ts)
            issue(&s, K_TIME, PT_JD_ERROR, r.offset, "timestamp goes back by %llu ns",
                  (unsigned long long)(last_ts - r.timestamp));
        if (sum->records == 1 && r.timestamp < it.header.timestamp)
            issue(&s, K_TIME, PT_JD_WARNING, r.offset, "first record is older than the header");
        if (r.timestamp > last_ts)
            last_ts = r.timestamp;
        sum->last_timestamp = last_ts;
        if (sum->closed)
            issue(&s, K_CLOSE, PT_JD_WARNING, r.offset, "%s after the CLOSE record", pt_jd_record_name(r.id));

        switch (r.id) {
        case PT_JD_UNWINDING_INFO:
            if (r.malformed) {
                issue(&s, K_UNWIND, PT_JD_ERROR, r.offset,
                      "UNWINDING_INFO sizes do not fit its %u bytes (unwinding %llu, hdr %llu)", r.total_size,
                      (unsigned long long)r.unwinding_size, (unsigned long long)r.eh_frame_hdr_size);
                break;
            }
            if (have_unwind)
                issue(&s, K_BIND, PT_JD_WARNING, pending_unwind.offset,
                      "UNWINDING_INFO replaced by the one at %zu before any LOAD used it", r.offset);
            pending_unwind = r;
            have_unwind = true;
            break;
        case PT_JD_DEBUG_INFO:
            check_debug_info(&s, &r);
            have_debug = !r.malformed;
            debug_addr = r.code_addr;
            debug_off = r.offset;
            break;
        case PT_JD_LOAD: {
            check_load(&s, &r, &it.header);
            if (r.malformed) {
                have_unwind = have_debug = false;
                break;
            }
            if (r.code_size < sum->min_code_size || sum->by_id[PT_JD_LOAD] == 1)
                sum->min_code_size = r.code_size;
            if (r.code_size > sum->max_code_size)
                sum->max_code_size = r.code_size;
            if (have_debug && debug_addr != r.code_addr)
                issue(&s, K_DEBUG, PT_JD_WARNING, debug_off, "DEBUG_INFO code_addr differs from its LOAD's");
            uint64_t mapped = 0;
            /* perf binds unwinding info only when eh_frame_hdr_size != 0 */
            if (have_unwind) {
                check_unwinding(&s, &pending_unwind, &r);
                if (pending_unwind.eh_frame_hdr_size) {
                    mapped = pending_unwind.mapped_size;
                    if (pending_unwind.unwinding_size)
                        sum->loads_with_unwind++;
                }
            } else {
                issue(&s, K_UNWIND, PT_JD_WARNING, r.offset,
                      "LOAD without UNWINDING_INFO: perf --call-graph dwarf cannot unwind it");
            }
            add_load(&s, &r, mapped);
            have_unwind = have_debug = false;
            break;
        }
        case PT_JD_MOVE:
            if (r.malformed)
                issue(&s, K_MOVE, PT_JD_ERROR, r.offset, "MOVE shorter than its fixed fields");
            break;
        case PT_JD_CLOSE:
            sum->closed = true;
            break;
        default:
            break;
        }
    }
    if (k < 0) {
        sum->trailing_bytes = len - it.off;
        issue(&s, K_FRAMING, PT_JD_ERROR, it.off, "%s", it.error);
    }
    if (have_unwind)
        issue(&s, K_BIND, PT_JD_WARNING, pending_unwind.offset, "UNWINDING_INFO at the end, with no LOAD after it");
    check_loads(&s);
    struct pt_jd_rows_stats rs;
    pt_jd_rows_get_stats(s.row_check, &rs);
    sum->rows_loads = rs.loads;
    sum->rows_pcs = rs.pcs;
    sum->rows_table_loads = rs.table_loads;
    sum->rows_boundaries = rs.boundaries;
    sum->rows_table = rs.table;
    pt_jd_rows_free(s.row_check);
    free(s.loads);
    free(s.rows);
    return sum->errors;
}
