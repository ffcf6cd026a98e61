/* SPDX-License-Identifier: MIT */
/* Read layer: the streaming jitdump validator (jitdump_reader.h).  It reads a dump the
 * way perf inject does (tools/perf/util/jitdump.c: jit_open, then
 * jit_get_next_entry record by record until a read fails) and grades each
 * finding by its effect on perf.  Facts it relies on:
 *  - jit_open refuses a bad magic, version > 1, flags other than
 *    JITDUMP_FLAGS_ARCH_TIMESTAMP, arch timestamps without a TSC conversion
 *    in perf.data, and a header total_size above 80 (it then tries to read
 *    0 bytes, which fread reports as a failure); any other total_size is
 *    ignored: the first record is read at offset 40.
 *  - jit_get_next_entry stops (silently) at a record shorter than its
 *    prefix or one the file cannot hold: the rest is never read.
 *  - jit_detect reads only files named jit-<pid>.dump whose pid is the one
 *    of the process that mapped it.
 *  - UNWINDING_INFO and DEBUG_INFO apply to the next LOAD; code_index names
 *    jitted-<pid>-<code_index>.so.
 * Memory is bounded: one record held (up to PT_JD_HOLD_MAX bytes, larger
 * bodies are discarded unread), one pending UNWINDING_INFO, and the
 * bounded sets of jitdump_maps.h and jitdump_seen.h. */
#include "read/jitdump_reader.h"

#include "read/eh_decode.h"
#include "read/jitdump_maps.h"
#include "read/jitdump_rows.h"
#include "read/jitdump_seen.h"

#include <ctype.h>
#include <limits.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PT_JD_HOLD_MAX ((size_t)8 << 20) /* bytes of one record held */
#define PT_JD_PEEK 4096u                 /* of a larger record: its first bytes */
#define PT_JD_MAX_ROWS 1024              /* rows per FDE program decoded */
#define SEEN_MAX ((size_t)1 << 17)       /* code_index values / code hashes remembered */

struct pt_jd_validator {
    struct pt_jd_options opts;
    pt_jd_finding_fn fn;
    void *arg;
    uint64_t known_size;
    struct pt_jd_summary sum;

    /* input */
    enum { ST_HEADER, ST_RECORDS, ST_STOPPED } state;
    uint64_t pos;          /* absolute offset of the next byte */
    uint8_t hdr[PT_JD_HEADER_SIZE];
    size_t hdr_len;
    struct pt_jd_header header;
    bool big_endian;       /* of the data inside records */
    uint8_t *buf;          /* the record being assembled */
    size_t buf_cap, have;  /* bytes held */
    uint64_t rec_off, rec_size, rec_seen; /* offset, total_size, bytes of it consumed */
    bool rec_prefix;       /* its prefix is known */
    uint64_t index;        /* of the next record */

    /* where perf stopped reading, and why */
    uint64_t stop_off;
    bool stop_second_header;
    bool zeros;            /* stopped at a total_size of 0: a writer's room, if short enough */
    uint32_t stop_id;      /* the id field of the record stopped at */
    uint64_t nonzero_end;  /* in that room: the offset after its last non-zero byte (0: none) */
    uint32_t second_pid;
    uint64_t hash_first, hash_rest, rest_len; /* a dump appended twice? */

    /* state across records */
    uint8_t *unwind_buf;
    size_t unwind_cap;
    struct pt_jd_record unwind; /* pending, pointing into unwind_buf */
    uint64_t unwind_index;
    bool have_unwind, have_debug;
    uint64_t debug_off, debug_index, debug_addr;
    uint64_t last_ts, last_ts_off, last_ts_index;
    bool any_ts;
    struct pt_row *rows;
    struct pt_jd_rows *row_check;
    struct pt_jd_maps *maps;
    struct pt_jd_seen by_index, by_code;
    uint64_t cur_record; /* for the rows callback */
    const char *cur_name;
};

/* ---- findings ------------------------------------------------------------ */

__attribute__((format(printf, 9, 10))) static void find(struct pt_jd_validator *v, enum pt_jd_severity sev,
                                                      enum pt_jd_effect effect, const char *kind, uint64_t off,
                                                      uint64_t record, const char *record_name, const char *advice,
                                                      const char *fmt, ...)
{
    if (sev == PT_JD_ERROR)
        v->sum.errors++;
    else if (sev == PT_JD_WARNING)
        v->sum.warnings++;
    else
        v->sum.notes++;
    if (!v->fn)
        return;
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    struct pt_jd_finding f = {.sev = sev, .effect = effect, .kind = kind, .offset = off, .record = record,
                              .record_name = record_name, .msg = msg, .advice = advice ? advice : ""};
    v->fn(v->arg, &f);
}

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

static uint64_t fnv1a(uint64_t h, const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h = (h ^ p[i]) * 0x100000001b3ull;
    return h;
}
#define FNV_SEED 0xcbf29ce484222325ull

/* A second, independent hash (a 64-bit multiply-xorshift), so two code
 * byte strings are taken as equal only when both hashes agree. */
static uint64_t mixhash(const uint8_t *p, size_t n)
{
    uint64_t h = 0x9e3779b97f4a7c15ull ^ n;
    for (size_t i = 0; i < n; i++) {
        h ^= p[i];
        h *= 0xbf58476d1ce4e5b9ull;
        h ^= h >> 29;
    }
    return h;
}

/* ---- the header ------------------------------------------------------------ */

/* What a file that is not a jitdump most likely is, from its first bytes. */
static const char *looks_like(const uint8_t *p, size_t n)
{
    if (n >= 4 && memcmp(p, "\177ELF", 4) == 0)
        return "an ELF file (a jitted-<pid>-<n>.so perf inject wrote, or a binary?)";
    if (n >= 8 && memcmp(p, "PERFILE2", 8) == 0)
        return "a perf.data file";
    if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
        return "a gzip file (uncompress it first)";
    /* a perf map: lines "START SIZE name", hex without 0x */
    size_t i = 0, fields = 0;
    while (i < n && fields < 2) {
        size_t s = i;
        if (i + 1 < n && p[i] == '0' && (p[i + 1] == 'x' || p[i + 1] == 'X'))
            i += 2;
        while (i < n && isxdigit(p[i]))
            i++;
        if (i == s || i >= n || p[i] != ' ')
            break;
        i++;
        fields++;
    }
    if (fields == 2)
        return "a perf map (/tmp/perf-<pid>.map: \"START SIZE name\" lines), which perf reads directly; "
               "the jitdump is the jit-<pid>.dump file";
    size_t text = 0;
    for (i = 0; i < n; i++)
        text += isprint(p[i]) || p[i] == '\n' || p[i] == '\t';
    if (n > 0 && text == n)
        return "a text file";
    return NULL;
}

static void bad_magic(struct pt_jd_validator *v, size_t n)
{
    uint32_t magic = 0;
    for (size_t i = 0; i < 4 && i < n; i++)
        magic |= (uint32_t)v->hdr[i] << (8 * i);
    const char *what = looks_like(v->hdr, n);
    if (what)
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.magic", 0, PT_JD_NO_RECORD, NULL,
             "pass the jit-<pid>.dump file the runtime wrote", "not a jitdump: this looks like %s", what);
    else
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.magic", 0, PT_JD_NO_RECORD, NULL,
             "start the file with the 40-byte jitdump header (magic 0x4A695444 \"JiTD\")",
             "bad magic 0x%08x (a jitdump starts with 0x%08x, \"JiTD\" in the writer's byte order)", magic,
             PT_JD_MAGIC);
}

/* perf inject writes its jitted-<pid>-<n>.so files beside the dump, and a
 * perf that unwinds with libdw (built without libunwind) reports a JIT .so
 * to libdw at the right address only when its path starts with
 * "/tmp/jitted-" (unwind-libdw.c, "Handle JIT-generated DSOs properly",
 * Linux 6.8, backported to 6.1.91): elsewhere --call-graph dwarf stops at
 * the first JIT frame (measured on s390x, Debian's perf 6.1.176). */
static void check_dir_for_libdw(struct pt_jd_validator *v, const char *path, const char *base)
{
    if (v->opts.perf.libdw_unwind != 1)
        return;
    char dir[PATH_MAX];
    size_t len = (size_t)(base - path);
    if (len >= sizeof dir)
        return;
    memcpy(dir, path, len);
    dir[len] = '\0';
    char real[PATH_MAX];
    /* perf sees the mapping's resolved path */
    const char *where = realpath(len ? dir : ".", real) ? real : dir;
    if (strcmp(where, "/tmp") == 0)
        return;
    find(v, PT_JD_WARNING, PT_JD_MISNAMES, "name.dir-libdw", 0, PT_JD_NO_RECORD, NULL,
         "write the dump in /tmp itself (JITDUMPDIR unset or /tmp), or use a perf built with libunwind",
         "the dump is in %s, not /tmp: this perf unwinds with libdw, which unwinds the jitted-*.so files perf "
         "inject writes beside the dump only as /tmp/jitted-*; --call-graph dwarf chains stop at the first "
         "JIT frame",
         where);
}

/* perf reads only files named jit-<pid>.dump, pid of the mapping process. */
static void check_name(struct pt_jd_validator *v)
{
    const char *path = v->opts.file_name;
    if (!path)
        return;
    if (strcmp(path, "-") == 0) {
        find(v, PT_JD_NOTE, PT_JD_COPES, "name.stdin", 0, PT_JD_NO_RECORD, NULL, "",
             "read from standard input: the file name perf requires (jit-%" PRIu32 ".dump) is not checked",
             v->header.pid);
        return;
    }
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    if (strncmp(base, "jit-", 4) != 0) {
        find(v, PT_JD_NOTE, PT_JD_COPES, "name.renamed", 0, PT_JD_NO_RECORD, NULL, "",
             "file name \"%s\" is not the jit-<pid>.dump a runtime writes (a copy?): perf reads a dump only under "
             "the name jit-%" PRIu32 ".dump; checked as if it had that name",
             base, v->header.pid);
        return;
    }
    const char *p = base + 4;
    char *end = NULL;
    unsigned long long n = isdigit((unsigned char)*p) ? strtoull(p, &end, 10) : 0;
    if (!end || end == p || strcmp(end, ".dump") != 0) {
        v->sum.perf_reads = false;
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "name.pattern", 0, PT_JD_NO_RECORD, NULL,
             "name the file jit-<pid>.dump, <pid> the process id (getpid()), in any directory",
             "file name \"%s\" is not jit-<pid>.dump: perf inject never reads it (jit_detect wants \"jit-\", "
             "digits, \".dump\")",
             base);
        return;
    }
    if (n != v->header.pid) {
        v->sum.perf_reads = false;
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "name.pid", 0, PT_JD_NO_RECORD, NULL,
             "name the file after the process that writes and maps it: jit-<getpid()>.dump",
             "file name \"%s\" names pid %llu but the header says pid %" PRIu32
             ": perf reads the dump only when the process that mapped it has the pid in the name",
             base, n, v->header.pid);
        return;
    }
    check_dir_for_libdw(v, path, base);
}

static void check_header(struct pt_jd_validator *v)
{
    const struct pt_jd_header *h = &v->header;
    check_name(v);
    if (h->version > PT_JD_VERSION) {
        v->sum.perf_reads = false;
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.version", 4, PT_JD_NO_RECORD, NULL, "write version 1",
             "version %" PRIu32 ": perf accepts only version %u and older (\"wrong jitdump version\")", h->version,
             PT_JD_VERSION);
    } else if (h->version == 0) {
        find(v, PT_JD_NOTE, PT_JD_COPES, "header.version", 4, PT_JD_NO_RECORD, NULL, "write version 1",
             "version 0 (perf accepts it; the current version is %u)", PT_JD_VERSION);
    }
    if (h->total_size > 2 * PT_JD_HEADER_SIZE) {
        v->sum.perf_reads = false;
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.size", 8, PT_JD_NO_RECORD, NULL,
             "write total_size 40 (the header is 40 bytes)",
             "header total_size %" PRIu32 " (0x%" PRIx32 "): perf tries to skip the %" PRIu32
             " bytes past its 40 with a zero-length read, which fails: it refuses the dump",
             h->total_size, h->total_size, h->total_size - PT_JD_HEADER_SIZE);
    } else if (h->total_size != PT_JD_HEADER_SIZE) {
        find(v, PT_JD_WARNING, PT_JD_COPES, "header.size", 8, PT_JD_NO_RECORD, NULL,
             "write total_size 40 (the header is 40 bytes)",
             "header total_size %" PRIu32 ", not 40: perf ignores it and reads the first record at offset 0x28",
             h->total_size);
    }
    uint64_t reserved = h->flags & ~(uint64_t)PT_JD_FLAG_ARCH_TIMESTAMP;
    if (reserved) {
        v->sum.perf_reads = false;
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.flags", 32, PT_JD_NO_RECORD, NULL,
             "set no flag but JITDUMP_FLAGS_ARCH_TIMESTAMP (bit 0)",
             "unknown header flags 0x%" PRIx64 ": perf refuses the dump (\"invalid or unsupported flags\")",
             reserved);
    }
    if (h->flags & PT_JD_FLAG_ARCH_TIMESTAMP) {
        v->sum.arch_timestamps = true;
        v->sum.perf_reads = false;
        find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.arch_timestamp", 32, PT_JD_NO_RECORD, NULL,
             "write CLOCK_MONOTONIC nanoseconds and clear the flag (users record with perf record -k 1)",
             "JITDUMP_FLAGS_ARCH_TIMESTAMP: timestamps are TSC ticks; perf inject refuses the dump (exit 255, "
             "\"jitdump file uses arch timestamps but there is no timestamp conversion\") unless perf.data holds "
             "a TSC conversion (x86 with a TSC usable from user space, cap_user_time_zero)");
    }
    if (h->elf_mach == 0)
        find(v, PT_JD_NOTE, PT_JD_COPES, "header.elf_mach", 12, PT_JD_NO_RECORD, NULL,
             "write the machine's ELF e_machine (62 for x86-64)", "elf_mach is 0 (EM_NONE); perf does not use it");
    if (h->swapped)
        find(v, PT_JD_NOTE, PT_JD_COPES, "header.byte_order", 0, PT_JD_NO_RECORD, NULL, "",
             "written in the other byte order than this host; perf byte-swaps it");
}

/* ---- unwinding info ---------------------------------------------------------- */

struct eh_walk {
    struct pt_eh_ctx *ctx;
    struct pt_row *rows;
    uint64_t text, end;
    bool covered, rows_bad;
    uint64_t fde_addr;
    char why[240];
};

static int eh_walk_cb(void *arg, const struct pt_cie *cie, const struct pt_fde *fde)
{
    struct eh_walk *w = arg;
    if (pt_eh_rows(w->ctx, cie, fde, w->rows, PT_JD_MAX_ROWS) < 0) {
        snprintf(w->why, sizeof w->why, "FDE at 0x%llx: %s",
                 (unsigned long long)(w->ctx->file_offset + fde->offset), w->ctx->error);
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
 * `code_size` bytes with .text at address `text`.  Returns true when it is
 * usable; otherwise describes the first problem in `why`. */
static bool eh_usable_at(struct pt_jd_validator *v, const struct pt_jd_record *u, uint64_t code_size, uint64_t text,
                         char *why, size_t why_len)
{
    size_t hdr_size = (size_t)u->eh_frame_hdr_size;
    size_t eh_size = (size_t)u->unwinding_size - hdr_size;
    uint64_t eh_addr = align8(text + code_size);
    uint64_t hdr_addr = eh_addr + eh_size;
    uint64_t eh_file = u->offset + PT_JD_UNWIND_FIXED;
    struct pt_eh_ctx ctx = {.data = u->unwinding, .len = eh_size, .address = eh_addr, .big_endian = v->big_endian,
                            .addr_size = 8, .file_offset = eh_file};
    struct eh_walk w = {.ctx = &ctx, .rows = v->rows, .text = text, .end = text + code_size};
    size_t n_cies = 0, n_fdes = 0;
    int r = pt_eh_walk(&ctx, eh_walk_cb, &w, &n_cies, &n_fdes);
    if (w.rows_bad) {
        snprintf(why, why_len, ".eh_frame: %s", w.why);
        return false;
    }
    if (r < 0) {
        snprintf(why, why_len, ".eh_frame at 0x%llx: %s", (unsigned long long)(eh_file + ctx.error_offset),
                 ctx.error);
        return false;
    }
    if (!w.covered) {
        snprintf(why, why_len, ".eh_frame: none of its %zu FDEs covers the start of the %llu code bytes", n_fdes,
                 (unsigned long long)code_size);
        return false;
    }
    struct pt_eh_ctx hctx = {.data = u->unwinding + eh_size, .len = hdr_size, .address = hdr_addr,
                             .big_endian = v->big_endian, .addr_size = 8, .file_offset = eh_file + eh_size};
    struct pt_eh_hdr_info hi;
    struct hdr_rows hr = {.text = text, .fde_addr = w.fde_addr};
    if (pt_eh_hdr_decode(&hctx, &hi, hdr_row_cb, &hr) < 0) {
        snprintf(why, why_len, ".eh_frame_hdr at 0x%llx: %s", (unsigned long long)(eh_file + eh_size), hctx.error);
        return false;
    }
    if (hi.eh_frame_ptr != eh_addr) {
        snprintf(why, why_len,
                 ".eh_frame_hdr at 0x%llx: eh_frame_ptr is %+lld bytes off .eh_frame (genelf: .eh_frame first, "
                 "the header last)",
                 (unsigned long long)(eh_file + eh_size), (long long)(hi.eh_frame_ptr - eh_addr));
        return false;
    }
    if (!hi.sorted) {
        snprintf(why, why_len, ".eh_frame_hdr at 0x%llx: its table is not sorted by pc",
                 (unsigned long long)(eh_file + eh_size));
        return false;
    }
    if (!hr.found) {
        snprintf(why, why_len, ".eh_frame_hdr at 0x%llx: no table row {code start, covering FDE} among %llu rows",
                 (unsigned long long)(eh_file + eh_size), (unsigned long long)hi.fde_count);
        return false;
    }
    return true;
}

static void rows_issue(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg)
{
    struct pt_jd_validator *v = arg;
    find(v, sev, sev == PT_JD_ERROR ? PT_JD_MISNAMES : PT_JD_COPES, "unwind.rows", offset, v->unwind_index,
         "UNWINDING_INFO",
         sev == PT_JD_ERROR ? "give every code byte an FDE row with a CFA and a return-address rule" : "",
         "%s%s", msg, sev == PT_JD_ERROR ? " (perf --call-graph dwarf unwinds wrongly there)" : "");
}

/* Returns true when the LOAD gets .eh_frame perf can use. */
static bool check_unwinding(struct pt_jd_validator *v, const struct pt_jd_record *u, const struct pt_jd_record *load,
                            uint64_t load_index)
{
    /* V8 writes this for code without CFI (builtins): no .eh_frame bytes,
     * a 20-byte .eh_frame_hdr with fde_count 0 (mapped_size 0) */
    if (u->unwinding_size == 0 || u->unwinding_size <= u->eh_frame_hdr_size) {
        v->sum.loads_empty_unwind++;
        find(v, PT_JD_WARNING, PT_JD_COPES, "unwind.empty", u->offset, v->unwind_index, "UNWINDING_INFO",
             "keep frame pointers in such code (perf --call-graph fp), or write its .eh_frame",
             "UNWINDING_INFO without .eh_frame for the LOAD at 0x%zx (record %" PRIu64
             "): perf names it, --call-graph dwarf cannot unwind it",
             load->offset, load_index);
        return false;
    }
    if (u->eh_frame_hdr_size == 0) {
        find(v, PT_JD_ERROR, PT_JD_MISNAMES, "unwind.no_hdr", u->offset, v->unwind_index, "UNWINDING_INFO",
             "put the .eh_frame_hdr (eh_frame_hdr_size bytes) after the .eh_frame",
             "eh_frame_hdr_size is 0: perf ignores this unwinding info, --call-graph dwarf cannot unwind the LOAD at "
             "0x%zx",
             load->offset);
        return false;
    }
    if (u->mapped_size == 0)
        find(v, PT_JD_ERROR, PT_JD_MISNAMES, "unwind.mapped_size", u->offset, v->unwind_index, "UNWINDING_INFO",
             "set mapped_size to the size of .eh_frame + .eh_frame_hdr (rounded up to 8)",
             "mapped_size is 0: perf maps only the code, so --call-graph dwarf cannot find its .eh_frame");
    else if (u->mapped_size < u->unwinding_size)
        find(v, PT_JD_WARNING, PT_JD_COPES, "unwind.mapped_size", u->offset, v->unwind_index, "UNWINDING_INFO",
             "set mapped_size to at least unwinding_size",
             "mapped_size %" PRIu64 " is smaller than unwinding_size %" PRIu64, u->mapped_size, u->unwinding_size);
    /* decoding rows needs scratch space: allocated on the first use */
    if (!v->rows && !(v->rows = malloc(PT_JD_MAX_ROWS * sizeof *v->rows))) {
        find(v, PT_JD_ERROR, PT_JD_COPES, "nomem", u->offset, v->unwind_index, "UNWINDING_INFO", "",
             "out of memory: .eh_frame not checked");
        return true;
    }
    /* position independence: perf's genelf puts .text at 0x80 (6.1 on) or
     * 0x40 (older); the version in use decides which failure matters */
    uint64_t mine = pt_jd_perf_text_offset(&v->opts.perf), other = mine == 0x80 ? 0x40 : 0x80;
    char why[320];
    if (!eh_usable_at(v, u, load->code_size, mine, why, sizeof why)) {
        find(v, PT_JD_ERROR, PT_JD_MISNAMES, "unwind.eh_frame", u->offset, v->unwind_index, "UNWINDING_INFO",
             "write .eh_frame then .eh_frame_hdr with pc-relative pointers, laid out as genelf places them after "
             "the code",
             "%s (genelf .text at 0x%" PRIx64 ", as this perf places it): --call-graph dwarf cannot unwind the LOAD "
             "at 0x%zx",
             why, mine, load->offset);
        return true;
    }
    if (!eh_usable_at(v, u, load->code_size, other, why, sizeof why))
        find(v, PT_JD_WARNING, PT_JD_COPES, "unwind.position", u->offset, v->unwind_index, "UNWINDING_INFO",
             "use only pc-relative and data-relative pointer encodings",
             "%s with .text at 0x%" PRIx64 ", where perf %s puts it: the .eh_frame depends on where genelf "
             "places the code",
             why, other, other == 0x40 ? "before 6.1" : "6.1 and later");
    v->cur_record = v->unwind_index;
    pt_jd_rows_check(v->row_check, v->header.elf_mach, v->big_endian, u, load, rows_issue, v);
    return true;
}

/* ---- LOADs -------------------------------------------------------------------- */

static void overlap_found(void *arg, const struct pt_jd_shadow *sh)
{
    struct pt_jd_validator *v = arg;
    const struct pt_jd_map_load *e = sh->earlier;
    char more[64] = "";
    if (sh->count > 1)
        snprintf(more, sizeof more, " (and %" PRIu32 " later LOADs)", sh->count - 1);
    /* The dump cannot say whether the shadowed code still runs: a warning
     * when nothing says it died, a note when its addresses were reused. */
    enum pt_jd_severity sev = sh->freed ? PT_JD_NOTE : PT_JD_WARNING;
    if (sh->kind == PT_JD_OVERLAP_TAIL_ON_CODE)
        find(v, sev, sh->freed ? PT_JD_COPES : PT_JD_MISNAMES,
             sh->freed ? "overlap.tail_on_freed_code" : "overlap.tail_on_code", sh->later_offset, sh->later_record,
             "LOAD",
             "make mapped_size only the .eh_frame + .eh_frame_hdr size, and keep it clear of other live code",
             "perf maps this LOAD's .eh_frame area%s over [0x%" PRIx64 ", 0x%" PRIx64
             ") of the code of the older LOAD at 0x%" PRIx64 " (record %" PRIu64 "): %s",
             more, sh->lo, sh->hi, e->offset, e->record,
             sh->freed ? "that code's addresses were reused later, so it was most likely freed already"
                       : "if that code still runs, perf names its samples there as this LOAD's .so, past its symbol");
    else
        find(v, sev, PT_JD_COPES, sh->freed ? "overlap.code_on_freed_tail" : "overlap.code_on_tail",
             sh->later_offset, sh->later_record, "LOAD",
             "space code at least ALIGN8(code_size) + mapped_size apart while it lives",
             "code [0x%" PRIx64 ", 0x%" PRIx64 ")%s lands in the mapped .eh_frame area of the older LOAD at 0x%" PRIx64
             " (record %" PRIu64 "): %s",
             sh->lo, sh->hi, more, e->offset, e->record,
             sh->freed ? "that code's addresses were reused later, so it was most likely freed already"
                       : "perf keeps that LOAD's name, but if its code still runs --call-graph dwarf cannot unwind it "
                         "after this LOAD");
}

static void check_load(struct pt_jd_validator *v, const struct pt_jd_record *r, uint64_t index, bool body_held)
{
    const struct pt_jd_header *h = &v->header;
    if (r->malformed) {
        find(v, PT_JD_ERROR, PT_JD_LOSES, "load.malformed", r->offset, index, "LOAD",
             "write the fixed fields, the NUL-terminated name, then exactly code_size code bytes",
             "LOAD does not hold its fields, a NUL-terminated name and %" PRIu64 " code bytes in its %" PRIu32
             " bytes: perf reads garbage for it",
             r->code_size, r->total_size);
        return;
    }
    if (r->code_size == 0)
        find(v, PT_JD_WARNING, PT_JD_COPES, "load.empty", r->offset, index, "LOAD", "do not write empty code",
             "LOAD with code_size 0: nothing for perf to name");
    if (r->code_size > 0x7fffffff)
        find(v, PT_JD_ERROR, PT_JD_LOSES, "load.size", r->offset, index, "LOAD", "split the code",
             "code_size %" PRIu64 " does not fit perf's int: it cannot write the .so", r->code_size);
    if (r->code_addr == 0)
        find(v, PT_JD_WARNING, PT_JD_COPES, "load.addr0", r->offset, index, "LOAD", "write the code's run-time address",
             "LOAD at code_addr 0");
    if (r->name_len == 0)
        find(v, PT_JD_WARNING, PT_JD_COPES, "load.name", r->offset, index, "LOAD", "give every LOAD a name",
             "LOAD with an empty name: its samples get no name");
    for (size_t i = 0; i < r->name_len; i++)
        if ((unsigned char)r->name[i] < 0x20 || r->name[i] == 0x7f) {
            find(v, PT_JD_WARNING, PT_JD_COPES, "load.name", r->offset, index, "LOAD",
                 "keep names printable", "name holds control byte 0x%02x at byte %zu", (unsigned char)r->name[i],
                 i);
            break;
        }
    if (r->pid != h->pid)
        find(v, PT_JD_ERROR, PT_JD_MISNAMES, "load.pid", r->offset, index, "LOAD",
             "write the process id (getpid()) in every LOAD, the header's",
             "LOAD pid %" PRIu32 " differs from the header pid %" PRIu32
             ": perf attaches the code to pid %" PRIu32 ", samples of pid %" PRIu32 " do not see it",
             r->pid, h->pid, r->pid, h->pid);

    uint64_t first_off = 0, first_rec = 0;
    if (pt_jd_seen_check(&v->by_index, r->code_index, r->offset, index, &first_off, &first_rec))
        find(v, PT_JD_ERROR, PT_JD_MISNAMES, "load.code_index", r->offset, index, "LOAD",
             "give every LOAD its own code_index (a counter)",
             "code_index %" PRIu64 " already used by the LOAD at 0x%" PRIx64 " (record %" PRIu64
             "): perf writes both to jitted-%" PRIu32 "-%" PRIu64
             ".so, the later overwrites the earlier, whose samples then get the later's symbol",
             r->code_index, first_off, first_rec, r->pid, r->code_index);

    /* equal build-ids merge names (docs/perftramp.1, "perf versions") */
    enum pt_jd_buildid_mode mode = pt_jd_perf_buildid_mode(&v->opts.perf);
    if (body_held && (mode == PT_JD_BUILDID_CODE || mode == PT_JD_BUILDID_ADDR_CODE) && r->code_size > 0) {
        uint64_t key = fnv1a(FNV_SEED, r->code, (size_t)r->code_size) ^ (mixhash(r->code, (size_t)r->code_size) << 1);
        if (mode == PT_JD_BUILDID_ADDR_CODE)
            key = fnv1a(key, (const uint8_t *)&r->code_addr, sizeof r->code_addr);
        uint64_t name_hash = fnv1a(FNV_SEED, (const uint8_t *)r->name, r->name_len);
        uint64_t other_name = 0, other_off = 0;
        if (pt_jd_seen_check(&v->by_code, key, name_hash, r->offset, &other_name, &other_off) &&
            other_name != name_hash)
            find(v, PT_JD_ERROR, PT_JD_MISNAMES, "load.buildid", r->offset, index, "LOAD",
                 "make each LOAD's code bytes unique (e.g. a per-function constant in the code)",
                 "same code bytes%s as the LOAD at 0x%" PRIx64 ", another name: perf %u.%u derives %s build-id "
                 "for both and names both with one of the names",
                 mode == PT_JD_BUILDID_ADDR_CODE ? " at the same address" : "", other_off, v->opts.perf.major,
                 v->opts.perf.minor,
                 mode == PT_JD_BUILDID_ADDR_CODE ? "the same MD5 (address + code)" : "the same SHA-1 (code only)");
    }
}

/* ---- one record ---------------------------------------------------------------- */

static bool keep_unwind(struct pt_jd_validator *v, const struct pt_jd_record *r, const uint8_t *p, size_t len)
{
    if (len > v->unwind_cap) {
        uint8_t *b = realloc(v->unwind_buf, len);
        if (!b)
            return false;
        v->unwind_buf = b;
        v->unwind_cap = len;
    }
    memcpy(v->unwind_buf, p, len);
    pt_jd_record_decode(&v->header, v->unwind_buf, len, r->offset, &v->unwind);
    return true;
}

static void check_debug_info(struct pt_jd_validator *v, const struct pt_jd_record *r, uint64_t index)
{
    if (r->malformed) {
        find(v, PT_JD_WARNING, PT_JD_COPES, "debug.malformed", r->offset, index, "DEBUG_INFO",
             "write code_addr and nr_entry", "DEBUG_INFO shorter than its fixed fields: perf drops it");
        return;
    }
    /* entries: u64 addr, u32 lineno, u32 discrim, NUL-terminated name */
    const uint8_t *p = r->body + 16, *end = r->body + r->body_len;
    for (uint64_t i = 0; i < r->nr_entry; i++) {
        const uint8_t *nul = (size_t)(end - p) > 16 ? memchr(p + 16, 0, (size_t)(end - p - 16)) : NULL;
        if (!nul) {
            find(v, PT_JD_ERROR, PT_JD_LOSES, "debug.entries", r->offset, index, "DEBUG_INFO",
                 "make nr_entry the number of entries the record holds",
                 "DEBUG_INFO entry %" PRIu64 " of %" PRIu64 " runs past the record: perf reads past it", i,
                 r->nr_entry);
            return;
        }
        p = nul + 1;
    }
}

/* A whole record (or, for one larger than PT_JD_HOLD_MAX, its first
 * PT_JD_PEEK bytes: body_held false). */
static void on_record(struct pt_jd_validator *v, const uint8_t *p, size_t held, bool body_held)
{
    struct pt_jd_record r;
    uint64_t index = v->index++;
    pt_jd_record_decode(&v->header, p, held, (size_t)v->rec_off, &r);
    r.total_size = (uint32_t)v->rec_size;
    struct pt_jd_summary *s = &v->sum;
    s->records++;
    if (r.id < PT_JD_ID_COUNT) {
        s->by_id[r.id]++;
        s->bytes_by_id[r.id] += r.total_size;
    } else {
        s->unknown++;
        find(v, PT_JD_WARNING, PT_JD_COPES, "record.unknown_id", r.offset, index, NULL,
             "write only the record types of jitdump version 1",
             "unknown record id %" PRIu32 " (%" PRIu32 " bytes): perf skips it", r.id, r.total_size);
    }
    if (!body_held)
        find(v, PT_JD_NOTE, PT_JD_COPES, "record.big", r.offset, index, pt_jd_record_name(r.id), "",
             "record of %" PRIu32 " bytes, larger than the %zu MiB this check holds: only its first %u bytes "
             "checked",
             r.total_size, PT_JD_HOLD_MAX >> 20, PT_JD_PEEK);

    /* time order: perf sorts the records' MMAP events by time */
    if (!v->any_ts) {
        s->first_timestamp = r.timestamp;
        v->any_ts = true;
    } else if (r.timestamp < v->last_ts) {
        find(v, PT_JD_WARNING, PT_JD_COPES, "record.time", r.offset, index, pt_jd_record_name(r.id),
             "take each record's timestamp when it is written, under the lock that orders the writes",
             "timestamp %" PRIu64 " is older than %" PRIu64 " of the record at 0x%" PRIx64 " (record %" PRIu64
             "): perf applies records in time order, so this one takes effect before it",
             r.timestamp, v->last_ts, v->last_ts_off, v->last_ts_index);
    }
    if (!v->any_ts || r.timestamp >= v->last_ts) {
        v->last_ts = r.timestamp;
        v->last_ts_off = r.offset;
        v->last_ts_index = index;
    }
    s->last_timestamp = v->last_ts;
    if (s->closed)
        find(v, PT_JD_NOTE, PT_JD_COPES, "record.after_close", r.offset, index, pt_jd_record_name(r.id), "",
             "%s after the CLOSE record: perf reads it anyway", pt_jd_record_name(r.id));

    switch (r.id) {
    case PT_JD_UNWINDING_INFO:
        if (!body_held)
            break;
        if (r.malformed) {
            find(v, PT_JD_ERROR, PT_JD_MISNAMES, "unwind.malformed", r.offset, index, "UNWINDING_INFO",
                 "make unwinding_size the bytes that follow the fixed fields, eh_frame_hdr_size part of them",
                 "UNWINDING_INFO sizes do not fit its %" PRIu32 " bytes (unwinding_size %" PRIu64
                 ", eh_frame_hdr_size %" PRIu64 "): perf reads past it",
                 r.total_size, r.unwinding_size, r.eh_frame_hdr_size);
            break;
        }
        if (v->have_unwind)
            find(v, PT_JD_WARNING, PT_JD_COPES, "unwind.unused", v->unwind.offset, v->unwind_index,
                 "UNWINDING_INFO", "write exactly one UNWINDING_INFO before each LOAD",
                 "UNWINDING_INFO replaced by the one at 0x%zx (record %" PRIu64 ") before any LOAD used it",
                 r.offset, index);
        v->have_unwind = keep_unwind(v, &r, p, held);
        v->unwind_index = index;
        break;
    case PT_JD_DEBUG_INFO:
        if (!body_held)
            break;
        check_debug_info(v, &r, index);
        v->have_debug = !r.malformed;
        v->debug_addr = r.code_addr;
        v->debug_off = r.offset;
        v->debug_index = index;
        break;
    case PT_JD_LOAD: {
        if (!body_held) {
            /* the code sits at the end, unread: the fixed fields only */
            v->have_unwind = v->have_debug = false;
            break;
        }
        check_load(v, &r, index, body_held);
        if (r.malformed) {
            v->have_unwind = v->have_debug = false;
            break;
        }
        if (r.code_size < s->min_code_size || s->by_id[PT_JD_LOAD] == 1)
            s->min_code_size = r.code_size;
        if (r.code_size > s->max_code_size)
            s->max_code_size = r.code_size;
        if (v->have_debug && v->debug_addr != r.code_addr)
            find(v, PT_JD_WARNING, PT_JD_COPES, "debug.addr", v->debug_off, v->debug_index, "DEBUG_INFO",
                 "write the LOAD's code_addr in its DEBUG_INFO",
                 "DEBUG_INFO code_addr 0x%" PRIx64 " differs from its LOAD's 0x%" PRIx64, v->debug_addr,
                 r.code_addr);
        uint64_t mapped = 0;
        if (v->have_unwind) {
            bool eh = check_unwinding(v, &v->unwind, &r, index);
            /* perf binds unwinding info only when eh_frame_hdr_size != 0 */
            if (v->unwind.eh_frame_hdr_size)
                mapped = v->unwind.mapped_size;
            if (eh)
                s->loads_with_unwind++;
        } else {
            s->loads_without_unwind++;
            find(v, PT_JD_WARNING, PT_JD_COPES, "load.no_unwind", r.offset, index, "LOAD",
                 "write an UNWINDING_INFO (.eh_frame) before each LOAD, or keep frame pointers and tell users "
                 "to profile with perf --call-graph fp",
                 "LOAD without UNWINDING_INFO: perf names it, but --call-graph dwarf cannot unwind through it");
        }
        struct pt_jd_map_load ml = {.offset = r.offset, .record = index, .timestamp = r.timestamp,
                                    .code_addr = r.code_addr};
        ml.code_end = r.code_addr + r.code_size < r.code_addr ? UINT64_MAX : r.code_addr + r.code_size;
        uint64_t span = mapped ? align8(r.code_size) + mapped : r.code_size;
        ml.map_end = r.code_addr + span < r.code_addr ? UINT64_MAX : r.code_addr + span;
        pt_jd_maps_add(v->maps, &ml, overlap_found, v);
        v->have_unwind = v->have_debug = false;
        break;
    }
    case PT_JD_MOVE:
        if (r.malformed)
            find(v, PT_JD_ERROR, PT_JD_LOSES, "move.malformed", r.offset, index, "MOVE",
                 "write MOVE's fixed fields", "MOVE shorter than its fixed fields: perf reads garbage for it");
        break;
    case PT_JD_CLOSE:
        s->closed = true;
        break;
    default:
        break;
    }
}

/* ---- input ------------------------------------------------------------------- */

struct pt_jd_validator *pt_jd_validator_new(const struct pt_jd_options *opts, uint64_t known_size,
                                            pt_jd_finding_fn fn, void *arg)
{
    struct pt_jd_validator *v = calloc(1, sizeof *v);
    if (!v)
        return NULL;
    if (opts)
        v->opts = *opts;
    v->fn = fn;
    v->arg = arg;
    v->known_size = known_size;
    v->sum.perf_reads = true;
    v->row_check = pt_jd_rows_new();
    v->maps = pt_jd_maps_new();
    pt_jd_seen_init(&v->by_index, SEEN_MAX);
    pt_jd_seen_init(&v->by_code, SEEN_MAX);
    v->hash_first = v->hash_rest = FNV_SEED;
    if (!v->row_check || !v->maps) {
        pt_jd_validator_free(v);
        return NULL;
    }
    return v;
}

void pt_jd_validator_free(struct pt_jd_validator *v)
{
    if (!v)
        return;
    free(v->rows);
    pt_jd_rows_free(v->row_check);
    pt_jd_maps_free(v->maps);
    pt_jd_seen_free(&v->by_index);
    pt_jd_seen_free(&v->by_code);
    free(v->buf);
    free(v->unwind_buf);
    free(v);
}

/* perf stops reading at v->rec_off: the rest of the input is never read. */
static void stop(struct pt_jd_validator *v)
{
    v->state = ST_STOPPED;
    v->stop_off = v->rec_off;
}

static bool is_magic(const struct pt_jd_validator *v, const uint8_t *prefix)
{
    uint32_t m = (uint32_t)prefix[0] | (uint32_t)prefix[1] << 8 | (uint32_t)prefix[2] << 16 |
                 (uint32_t)prefix[3] << 24;
    (void)v;
    return m == PT_JD_MAGIC || __builtin_bswap32(m) == PT_JD_MAGIC;
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static void size_finding(struct pt_jd_validator *v, uint32_t id, uint32_t total_size)
{
    find(v, PT_JD_ERROR, PT_JD_LOSES, "frame.size", v->stop_off, v->index, pt_jd_record_name(id),
         "write total_size as the whole record's size, prefix included",
         "record total_size %" PRIu32 " is smaller than its 16-byte prefix: perf stops reading here", total_size);
}

/* The prefix of the record at rec_off is in buf: frame it as perf does. */
static void on_prefix(struct pt_jd_validator *v)
{
    struct pt_jd_record r;
    pt_jd_record_decode(&v->header, v->buf, PT_JD_PREFIX_SIZE, (size_t)v->rec_off, &r);
    v->rec_size = r.total_size;
    v->rec_prefix = true;
    if (is_magic(v, v->buf)) {
        /* a second header: the file was appended to.  perf reads the
         * version field (1) as the record size and stops. */
        v->stop_second_header = true;
        v->second_pid = 0; /* known once its bytes 20..23 arrive: see feed */
        stop(v);
        return;
    }
    if (r.total_size < PT_JD_PREFIX_SIZE) {
        stop(v);
        v->stop_id = r.id;
        if (r.total_size == 0)
            v->zeros = true; /* a writer's room (zeros, maybe one uncommitted record): judged as it comes */
        else
            size_finding(v, r.id, r.total_size);
        return;
    }
    if (v->known_size != UINT64_MAX && v->rec_off + r.total_size > v->known_size) {
        /* torn: judged at the end (what is lost depends on the record) */
        return;
    }
}

/* The record at rec_off is whole: check it and move on. */
static void complete_if_done(struct pt_jd_validator *v)
{
    if (!v->rec_prefix || v->rec_seen != v->rec_size)
        return;
    bool hold = v->rec_size <= PT_JD_HOLD_MAX;
    v->hash_first = fnv1a(v->hash_first, v->buf, v->have);
    on_record(v, v->buf, v->have, hold);
    v->rec_off += v->rec_size;
    v->rec_seen = v->have = 0;
    v->rec_prefix = false;
}

int pt_jd_validator_feed(struct pt_jd_validator *v, const uint8_t *p, size_t n)
{
    while (n > 0) {
        if (v->state == ST_HEADER) {
            size_t k = PT_JD_HEADER_SIZE - v->hdr_len < n ? PT_JD_HEADER_SIZE - v->hdr_len : n;
            memcpy(v->hdr + v->hdr_len, p, k);
            v->hdr_len += k;
            v->pos += k;
            p += k;
            n -= k;
            if (v->hdr_len < PT_JD_HEADER_SIZE)
                continue;
            if (pt_jd_header_decode(v->hdr, &v->header) < 0) {
                bad_magic(v, v->hdr_len);
                v->sum.perf_reads = false;
                v->rec_off = 0;
                stop(v);
                continue;
            }
            v->sum.header = v->header;
            v->sum.header_ok = true;
            const uint16_t one = 1;
            v->big_endian = (*(const uint8_t *)&one == 0) != v->header.swapped;
            check_header(v);
            v->state = ST_RECORDS;
            v->rec_off = PT_JD_HEADER_SIZE;
            continue;
        }
        if (v->state == ST_STOPPED && v->zeros) {
            /* a writer's room: zeros, where the record being copied in
             * when the writer stopped may have left bytes before its
             * total_size (which a writer that commits stores last) */
            size_t z = n;
            while (z > 0 && p[z - 1] == 0)
                z--;
            if (z)
                v->nonzero_end = v->pos + z;
            v->pos += n;
            if (v->pos - v->stop_off <= PT_JD_RESERVED_MAX)
                return 0; /* still short enough: keep reading */
            /* no writer's room: a record of total_size 0 */
            v->zeros = false;
            size_finding(v, v->stop_id, 0);
            return 1;
        }
        if (v->state == ST_STOPPED) {
            /* what perf never reads: hashed, to tell a dump appended twice */
            if (v->stop_second_header) {
                uint64_t in_tail = v->pos - v->stop_off;
                for (size_t i = 0; i < n; i++, in_tail++) {
                    if (in_tail >= 20 && in_tail < 24)
                        v->second_pid |= (uint32_t)p[i] << (8 * (in_tail - 20));
                    if (in_tail >= PT_JD_HEADER_SIZE) {
                        v->hash_rest = (v->hash_rest ^ p[i]) * 0x100000001b3ull;
                        v->rest_len++;
                    }
                }
                v->pos += n;
                return 0;
            }
            v->pos += n;
            return 1;
        }
        /* ST_RECORDS: assemble the record at rec_off */
        if (!v->rec_prefix) {
            size_t k = PT_JD_PREFIX_SIZE - v->have < n ? PT_JD_PREFIX_SIZE - v->have : n;
            if (v->buf_cap < PT_JD_PEEK) {
                uint8_t *b = realloc(v->buf, PT_JD_PEEK);
                if (!b)
                    return -1;
                v->buf = b;
                v->buf_cap = PT_JD_PEEK;
            }
            memcpy(v->buf + v->have, p, k);
            v->have += k;
            v->rec_seen += k;
            v->pos += k;
            p += k;
            n -= k;
            if (v->have == PT_JD_PREFIX_SIZE) {
                on_prefix(v);
                if (v->state == ST_STOPPED) {
                    /* the prefix bytes belong to what perf never reads */
                    v->pos -= PT_JD_PREFIX_SIZE;
                    uint8_t again[PT_JD_PREFIX_SIZE];
                    memcpy(again, v->buf, PT_JD_PREFIX_SIZE);
                    v->have = 0;
                    pt_jd_validator_feed(v, again, PT_JD_PREFIX_SIZE);
                    if (!v->stop_second_header && !v->zeros)
                        return 1;
                } else if (v->known_size != UINT64_MAX && v->rec_off + v->rec_size > v->known_size) {
                    return 1; /* torn: nothing after it can be a record; finish judges it */
                } else {
                    complete_if_done(v); /* a record that is only a prefix (CLOSE) */
                }
            }
            continue;
        }
        bool hold = v->rec_size <= PT_JD_HOLD_MAX;
        uint64_t want = v->rec_size - v->rec_seen;
        size_t k = want < n ? (size_t)want : n;
        if (hold || v->have < PT_JD_PEEK) {
            size_t room = hold ? (size_t)v->rec_size : PT_JD_PEEK;
            size_t take = v->have + k <= room ? k : room - v->have;
            if (room > v->buf_cap) {
                uint8_t *b = realloc(v->buf, room);
                if (!b)
                    return -1;
                v->buf = b;
                v->buf_cap = room;
            }
            memcpy(v->buf + v->have, p, take);
            v->have += take;
        }
        v->rec_seen += k;
        v->pos += k;
        p += k;
        n -= k;
        complete_if_done(v);
    }
    /* stopped: nothing more to judge, unless the rest must be seen (the
     * tail after a second header, zeros that may be reserved room) */
    return v->state == ST_STOPPED && !v->stop_second_header && !v->zeros ? 1 : 0;
}

uint64_t pt_jd_validator_discardable(const struct pt_jd_validator *v)
{
    if (v->state != ST_RECORDS || !v->rec_prefix || v->rec_size <= PT_JD_HOLD_MAX || v->have < PT_JD_PEEK)
        return 0;
    return v->rec_size - v->rec_seen;
}

void pt_jd_validator_skip(struct pt_jd_validator *v, uint64_t n)
{
    uint64_t d = pt_jd_validator_discardable(v);
    if (n > d)
        n = d;
    v->rec_seen += n;
    v->pos += n;
    if (n && v->rec_seen == v->rec_size) {
        on_record(v, v->buf, v->have, false);
        v->rec_off += v->rec_size;
        v->rec_seen = v->have = 0;
        v->rec_prefix = false;
    }
}

/* The input ended inside a record. */
static void torn_at_end(struct pt_jd_validator *v)
{
    uint64_t left = v->rec_seen;
    if (!v->rec_prefix) {
        find(v, PT_JD_WARNING, PT_JD_COPES, "frame.trailing", v->rec_off, v->index, NULL,
             "write whole records only", "%" PRIu64 " trailing byte%s, fewer than a record prefix: perf stops "
             "there and loses nothing",
             left, left == 1 ? "" : "s");
        return;
    }
    struct pt_jd_record r;
    pt_jd_record_decode(&v->header, v->buf, PT_JD_PREFIX_SIZE, (size_t)v->rec_off, &r);
    uint64_t total = v->known_size != UINT64_MAX ? v->known_size - v->rec_off : left;
    const char *name = pt_jd_record_name(r.id);
    if (r.id == PT_JD_LOAD)
        v->have_unwind = false; /* its UNWINDING_INFO went with it */
    if (r.id == PT_JD_LOAD || r.id == PT_JD_MOVE)
        find(v, PT_JD_ERROR, PT_JD_LOSES, "frame.torn", v->rec_off, v->index, name,
             "write each record whole (one write() of the record, under a lock) and let it finish before exit",
             "torn %s: %" PRIu32 " bytes, the file ends %" PRIu64 " bytes into it: perf drops it, its code stays "
             "unnamed",
             name, r.total_size, total);
    else if (r.id == PT_JD_UNWINDING_INFO || r.id == PT_JD_DEBUG_INFO)
        /* written right before their LOAD: that LOAD never made it */
        find(v, PT_JD_ERROR, PT_JD_LOSES, "frame.torn", v->rec_off, v->index, name,
             "write each [UNWINDING_INFO][DEBUG_INFO][LOAD] group whole and let it finish before exit",
             "torn %s: %" PRIu32 " bytes, the file ends %" PRIu64
             " bytes into it: perf stops there, and the LOAD written after it is missing",
             name, r.total_size, total);
    else
        find(v, PT_JD_WARNING, PT_JD_COPES, "frame.torn", v->rec_off, v->index, name,
             "write each record whole and let it finish before exit",
             "torn %s at the end: %" PRIu32 " bytes, the file ends %" PRIu64 " bytes into it: perf stops there; %s",
             name, r.total_size, total,
             r.id == PT_JD_CLOSE ? "a CLOSE carries nothing perf needs" : "perf skips this record type anyway");
}

size_t pt_jd_validator_finish(struct pt_jd_validator *v, struct pt_jd_summary *out)
{
    struct pt_jd_summary *s = &v->sum;
    /* what the caller did not read (perf stopped before it) counts too */
    if (v->known_size != UINT64_MAX && v->known_size > v->pos) {
        if (v->zeros) { /* the unread rest may hold anything */
            v->zeros = false;
            size_finding(v, v->stop_id, 0);
        }
        v->pos = v->known_size;
    }
    if (v->state == ST_RECORDS && !v->rec_prefix && v->have > 0 && v->pos == v->rec_off + v->have &&
        all_zero(v->buf, v->have)) {
        /* fewer zeros than a prefix at the end: the same reserved room */
        stop(v);
        v->zeros = true;
        v->have = v->rec_seen = 0;
    }
    if (v->state == ST_HEADER) {
        if (v->hdr_len >= 4 && !is_magic(v, v->hdr)) {
            bad_magic(v, v->hdr_len);
        } else {
            const char *what = looks_like(v->hdr, v->hdr_len);
            find(v, PT_JD_ERROR, PT_JD_REFUSES, "header.short", 0, PT_JD_NO_RECORD, NULL,
                 "write the 40-byte header first", "file of %zu bytes is shorter than the 40-byte header%s%s",
                 v->hdr_len, what ? "; it looks like " : "", what ? what : "");
        }
        s->perf_reads = false;
        s->trailing_bytes = v->hdr_len;
    } else if (v->state == ST_RECORDS) {
        if (v->have > 0 || v->rec_seen > 0)
            torn_at_end(v);
        s->valid_bytes = v->rec_off;
        s->trailing_bytes = v->pos - v->rec_off;
    } else { /* stopped */
        s->valid_bytes = v->stop_off;
        s->trailing_bytes = v->pos - v->stop_off;
        if (v->stop_second_header) {
            uint64_t first_len = v->stop_off - PT_JD_HEADER_SIZE;
            uint32_t first_raw = (uint32_t)v->hdr[20] | (uint32_t)v->hdr[21] << 8 | (uint32_t)v->hdr[22] << 16 |
                                 (uint32_t)v->hdr[23] << 24;
            bool same_pid = v->second_pid == first_raw;
            bool same = same_pid && v->rest_len == first_len && v->hash_rest == v->hash_first;
            if (same)
                find(v, PT_JD_WARNING, PT_JD_COPES, "frame.appended", v->stop_off, v->index, NULL,
                     "open the dump with O_TRUNC (or a new name) instead of appending",
                     "a second jitdump header: the same dump follows again (%" PRIu64
                     " bytes, the same records): perf stops at it and loses nothing",
                     s->trailing_bytes);
            else
                find(v, PT_JD_ERROR, PT_JD_LOSES, "frame.appended", v->stop_off, v->index, NULL,
                     "open the dump with O_TRUNC (or a new name) instead of appending",
                     "a second jitdump header (%s): another dump was appended; perf stops at it and "
                     "never reads its %" PRIu64 " bytes",
                     same_pid ? "the same pid, other records" : "another pid", s->trailing_bytes);
        } else if (v->zeros && v->nonzero_end) {
            s->uncommitted_bytes = v->nonzero_end - v->stop_off;
            s->reserved_bytes = s->trailing_bytes - s->uncommitted_bytes;
            s->trailing_bytes = 0;
            find(v, PT_JD_WARNING, PT_JD_COPES, "frame.uncommitted", v->stop_off, v->index,
                 pt_jd_record_name(v->stop_id), "",
                 "the last record is uncommitted: total_size 0, with %" PRIu64 " bytes of it written after its "
                 "size field (zeros or the end of the file after them): its writer stopped while copying it in "
                 "(killed?) before it stored the size, which it stores last; perf stops here and reads every "
                 "record before it, and this one is not in the dump",
                 s->uncommitted_bytes);
        } else if (v->zeros) {
            s->reserved_bytes = s->trailing_bytes;
            s->trailing_bytes = 0;
            find(v, PT_JD_NOTE, PT_JD_COPES, "frame.reserved", v->stop_off, v->index, NULL, "",
                 "%" PRIu64 " zero bytes to the end: room the writer mapped ahead and has not cut off (it is "
                 "still running, or ended without closing the dump); perf stops at the first and loses nothing",
                 s->reserved_bytes);
        } else if (v->sum.header_ok && s->trailing_bytes > 0) {
            find(v, PT_JD_NOTE, PT_JD_LOSES, "frame.unread", v->stop_off, v->index, NULL, "",
                 "perf never reads the %" PRIu64 " bytes from here to the end", s->trailing_bytes);
        }
    }
    s->total_bytes = v->pos;
    if (v->have_unwind)
        find(v, PT_JD_WARNING, PT_JD_COPES, "unwind.unused", v->unwind.offset, v->unwind_index, "UNWINDING_INFO",
             "write UNWINDING_INFO right before the LOAD it describes",
             "UNWINDING_INFO at the end, with no LOAD after it");
    pt_jd_maps_flush(v->maps, overlap_found, v);
    struct pt_jd_maps_stats ms;
    pt_jd_maps_get_stats(v->maps, &ms);
    s->reused_addresses = ms.replaced;
    if (ms.full || v->by_index.full || v->by_code.full) {
        s->limits_hit = true;
        find(v, PT_JD_NOTE, PT_JD_COPES, "limits", 0, PT_JD_NO_RECORD, NULL, "",
             "more LOADs than this check remembers (%u live mappings, %zu code_index values): overlaps, "
             "code_index reuse and equal code were checked only among the first",
             PT_JD_MAPS_MAX_LIVE, SEEN_MAX);
    }
    if (ms.out_of_order)
        find(v, PT_JD_NOTE, PT_JD_COPES, "limits.order", 0, PT_JD_NO_RECORD, NULL, "",
             "%zu LOADs arrived more than %u LOADs out of time order: their overlaps were judged in file order",
             ms.out_of_order, PT_JD_MAPS_WINDOW);
    struct pt_jd_rows_stats rs;
    pt_jd_rows_get_stats(v->row_check, &rs);
    s->rows_loads = rs.loads;
    s->rows_pcs = rs.pcs;
    s->rows_table_loads = rs.table_loads;
    s->rows_boundaries = rs.boundaries;
    s->rows_table = rs.table;
    if (out)
        *out = *s;
    return s->errors;
}

/* ---- a dump in memory --------------------------------------------------------- */

size_t pt_jitdump_validate_ex(const uint8_t *data, size_t len, const struct pt_jd_options *opts,
                              struct pt_jd_summary *sum, pt_jd_finding_fn fn, void *arg)
{
    struct pt_jd_summary local;
    if (!sum)
        sum = &local;
    memset(sum, 0, sizeof *sum);
    struct pt_jd_validator *v = pt_jd_validator_new(opts, len, fn, arg);
    if (!v) {
        sum->errors = 1;
        if (fn) {
            struct pt_jd_finding f = {.sev = PT_JD_ERROR, .effect = PT_JD_COPES, .kind = "nomem",
                                      .record = PT_JD_NO_RECORD, .msg = "out of memory", .advice = ""};
            fn(arg, &f);
        }
        return 1;
    }
    size_t off = 0;
    while (off < len) {
        uint64_t d = pt_jd_validator_discardable(v);
        if (d) {
            uint64_t k = d < len - off ? d : len - off;
            pt_jd_validator_skip(v, k);
            off += (size_t)k;
            continue;
        }
        /* feed in slices so a held record is copied once */
        size_t k = len - off < ((size_t)1 << 20) ? len - off : (size_t)1 << 20;
        int r = pt_jd_validator_feed(v, data + off, k);
        off += k;
        if (r != 0)
            break;
    }
    size_t errors = pt_jd_validator_finish(v, sum);
    pt_jd_validator_free(v);
    return errors;
}

struct adapter {
    pt_jd_issue_fn fn;
    void *arg;
};

static void adapt(void *arg, const struct pt_jd_finding *f)
{
    struct adapter *a = arg;
    if (!a->fn)
        return;
    char msg[900];
    snprintf(msg, sizeof msg, "%s [%s]", f->msg, pt_jd_effect_text(f->effect));
    a->fn(a->arg, f->sev, (size_t)f->offset, msg);
}

size_t pt_jitdump_validate(const uint8_t *data, size_t len, struct pt_jd_summary *sum, pt_jd_issue_fn fn,
                           void *arg)
{
    struct adapter a = {fn, arg};
    return pt_jitdump_validate_ex(data, len, NULL, sum, fn ? adapt : NULL, &a);
}
