/* SPDX-License-Identifier: MIT */
/* Reads and validates jitdump files from untrusted bytes, record by record
 * as perf inject reads them (tools/perf/util/jitdump.c, genelf.c), and
 * grades every finding by what perf will do with the dump: refuse it, lose
 * records, mis-name samples, or cope.  Every read is bounds checked:
 * garbage in, findings out, never a crash.  Both byte orders.
 *
 * Two ways in: the streaming validator (pt_jd_validator_*: bytes fed in
 * any chunking, memory bounded whatever the input size) and, on top of it,
 * pt_jitdump_validate for a dump already in memory. */
#ifndef PERFTRAMP_JITDUMP_READER_H
#define PERFTRAMP_JITDUMP_READER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Format constants (tools/perf/util/jitdump.h). */
#define PT_JD_MAGIC 0x4A695444u      /* "JiTD" read as a native u32 */
#define PT_JD_VERSION 1u             /* perf rejects anything newer */
#define PT_JD_HEADER_SIZE 40u
#define PT_JD_PREFIX_SIZE 16u        /* u32 id, u32 total_size, u64 timestamp */
/* The most zeros a writer that maps its dump's end leaves past its last
 * record: perftramp allocates 64 KiB ahead, a page more for a bigger group
 * (pages of up to 64 KiB).  A longer run of zeros is no such room. */
#define PT_JD_RESERVED_MAX (128u * 1024)
#define PT_JD_LOAD_FIXED 56u         /* prefix + pid,tid,vma,code_addr,code_size,code_index */
#define PT_JD_UNWIND_FIXED 40u       /* prefix + unwinding_size, eh_frame_hdr_size, mapped_size */
#define PT_JD_FLAG_ARCH_TIMESTAMP 1u /* the only header flag perf knows */

enum pt_jd_record_id {
    PT_JD_LOAD = 0,
    PT_JD_MOVE = 1,
    PT_JD_DEBUG_INFO = 2,
    PT_JD_CLOSE = 3,
    PT_JD_UNWINDING_INFO = 4,
    PT_JD_ID_COUNT = 5 /* ids >= this are unknown (perf skips them) */
};

/* "LOAD", "MOVE", ... or "UNKNOWN". */
const char *pt_jd_record_name(uint32_t id);

/* The file header, in host byte order. */
struct pt_jd_header {
    uint32_t magic, version, total_size, elf_mach, pad1, pid;
    uint64_t timestamp, flags;
    bool swapped; /* written in the other byte order */
};

/* One record, decoded to host byte order.  Pointers point into the
 * caller's buffer and are valid while it is. */
struct pt_jd_record {
    size_t offset;        /* file offset of the record prefix */
    uint32_t id;          /* enum pt_jd_record_id, or unknown */
    uint32_t total_size;  /* prefix included */
    uint64_t timestamp;
    const uint8_t *body;  /* after the prefix */
    size_t body_len;      /* total_size - 16 */
    bool malformed;       /* id-specific fields did not fit: only the prefix is valid */

    /* LOAD (and MOVE: pid, tid, vma, code_addr = new_code_addr, code_size, code_index) */
    uint32_t pid, tid;
    uint64_t vma, code_addr, code_size, code_index;
    uint64_t old_code_addr;  /* MOVE */
    const char *name;        /* LOAD: NUL-terminated inside the record when !malformed */
    size_t name_len;         /* without the NUL */
    const uint8_t *code;     /* LOAD: the last code_size bytes of the record */

    /* UNWINDING_INFO */
    uint64_t unwinding_size, eh_frame_hdr_size, mapped_size;
    const uint8_t *unwinding;   /* unwinding_size bytes: .eh_frame, then .eh_frame_hdr */

    /* DEBUG_INFO */
    uint64_t nr_entry;
};

/* Decodes a header from its 40 bytes.  Returns 0, or -1 when the magic is
 * not jitdump's in either byte order. */
int pt_jd_header_decode(const uint8_t p[PT_JD_HEADER_SIZE], struct pt_jd_header *h);

/* Decodes one whole record (prefix + body, `len` == its total_size) that
 * starts at file offset `offset`, in the byte order of `h`. */
void pt_jd_record_decode(const struct pt_jd_header *h, const uint8_t *p, size_t len, size_t offset,
                         struct pt_jd_record *r);

/* Sequential reader over a dump in memory, framing records as perf does:
 * the first record right after the 40-byte header.  pt_jd_iter_init
 * decodes the header; returns 0, or -1 with a reason in it->error (too
 * short, bad magic). */
struct pt_jd_iter {
    const uint8_t *data;
    size_t len;
    size_t off;           /* next record offset */
    struct pt_jd_header header;
    char error[160];
};
int pt_jd_iter_init(struct pt_jd_iter *it, const uint8_t *data, size_t len);
/* Returns 1 with the next record, 0 at a clean end of data (zeros to the
 * end count as one: a live writer's reserved room, and so does a record of
 * total_size 0 in that room, which a writer that stores the size last left
 * uncommitted when it was killed), or -1 with a reason in
 * it->error for a record that cannot be framed (size < 16, past the end: a
 * torn record); the iterator then stays at that offset. */
int pt_jd_next(struct pt_jd_iter *it, struct pt_jd_record *rec);

/* ---- findings ---------------------------------------------------------- */

enum pt_jd_severity {
    PT_JD_NOTE = 0,    /* worth knowing; perf is not affected */
    PT_JD_WARNING = 1, /* perf copes; the profile may be degraded (e.g. no DWARF unwinding) */
    PT_JD_ERROR = 2,   /* perf refuses the dump, loses records or mis-names samples */
};

/* What perf does because of a finding, from worst to harmless. */
enum pt_jd_effect {
    PT_JD_COPES = 0,
    PT_JD_MISNAMES,  /* samples get the wrong name, no name, or a broken call chain */
    PT_JD_LOSES,     /* perf stops reading or drops records */
    PT_JD_REFUSES,   /* perf inject rejects the whole dump */
};
const char *pt_jd_effect_text(enum pt_jd_effect e); /* "perf refuses the dump", ... */

#define PT_JD_NO_RECORD UINT64_MAX /* a finding about the header or the file */

struct pt_jd_finding {
    enum pt_jd_severity sev;
    enum pt_jd_effect effect;
    const char *kind;    /* stable short id ("overlap.tail"): repeats of a kind are summarised */
    uint64_t offset;     /* absolute file offset the finding is about */
    uint64_t record;     /* index of the record (0 = first after the header), or PT_JD_NO_RECORD */
    const char *record_name; /* "LOAD", ... or NULL */
    const char *msg;     /* what is wrong, offsets in hex */
    const char *advice;  /* what the producer should change; "" when nothing */
};
typedef void (*pt_jd_finding_fn)(void *arg, const struct pt_jd_finding *f);

/* The older, simpler callback (severity, offset, one message). */
typedef void (*pt_jd_issue_fn)(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg);

/* ---- the perf the verdict is for --------------------------------------- */

/* Some rules depend on perf's version and build (docs/perftramp.1 has the
 * table): where genelf puts .text, and how it derives build-ids. */
struct pt_jd_perf {
    unsigned major, minor; /* 0.0: unknown, judged by the newest rules */
    int libcrypto;         /* 1 built with libcrypto, 0 without, -1 unknown */
    /* 1: unwinds user stacks with libdw (built without libunwind), which
     * unwinds perf inject's .so files only as /tmp/jitted-*; 0: with
     * libunwind; -1 unknown */
    int libdw_unwind;
};
/* genelf's .text offset: 0x40 before 6.1, 0x80 from 6.1 on. */
uint64_t pt_jd_perf_text_offset(const struct pt_jd_perf *p);
enum pt_jd_buildid_mode {
    PT_JD_BUILDID_RANDOM,     /* < 6.17 without libcrypto: never equal */
    PT_JD_BUILDID_ADDR_CODE,  /* < 6.17 with libcrypto: MD5(load address, code) */
    PT_JD_BUILDID_CODE,       /* 6.17, 6.18: SHA-1(code): equal code merges */
    PT_JD_BUILDID_CODE_NAME,  /* 6.19 on: code + symbol and string tables */
};
enum pt_jd_buildid_mode pt_jd_perf_buildid_mode(const struct pt_jd_perf *p);
/* Parses "6.1", "6.1.187", "6.17": returns 0, or -1. */
int pt_jd_perf_parse(const char *s, struct pt_jd_perf *p);

/* ---- validation --------------------------------------------------------- */

struct pt_jd_options {
    struct pt_jd_perf perf;
    /* The file's name as written (a path; its basename is checked against
     * perf's jit-<pid>.dump rule), or NULL for a dump without a name. */
    const char *file_name;
};

struct pt_jd_summary {
    struct pt_jd_header header;
    bool header_ok;             /* magic known, header fully present */
    bool perf_reads;            /* perf inject would read this file at all (name, header) */
    size_t records;             /* framed records perf reads */
    size_t by_id[PT_JD_ID_COUNT];
    size_t unknown;             /* records with an unknown id */
    uint64_t bytes_by_id[PT_JD_ID_COUNT]; /* sum of total_size per id */
    size_t loads_with_unwind;   /* LOADs bound to UNWINDING_INFO with .eh_frame bytes */
    size_t loads_empty_unwind;  /* LOADs bound to UNWINDING_INFO without .eh_frame (V8's builtins) */
    size_t loads_without_unwind;/* LOADs with no UNWINDING_INFO before them */
    uint64_t valid_bytes;       /* header + records perf reads */
    uint64_t trailing_bytes;    /* bytes after them: perf never reads these (reserved_bytes aside) */
    uint64_t reserved_bytes;    /* zeros from a record boundary to the end: room a writer mapped
                                 * ahead and has not cut off yet (still running, or never closed) */
    uint64_t uncommitted_bytes; /* at the start of that room: a record of total_size 0 and the bytes
                                 * of it written (up to its last non-zero byte); a writer that stores
                                 * the size last stopped while copying it (killed) */
    uint64_t total_bytes;       /* bytes in the input (read or skipped) */
    uint64_t first_timestamp, last_timestamp; /* of records (0 if none) */
    bool arch_timestamps;       /* timestamps are arch ticks (TSC), not ns */
    uint64_t min_code_size, max_code_size;    /* over LOADs */
    bool closed;                /* a CLOSE record was seen */
    size_t errors, warnings, notes; /* findings reported */
    size_t reused_addresses;    /* LOADs that replaced live code at the same addresses */
    bool limits_hit;            /* a memory bound stopped some cross-record checks */
    /* rules checked pc by pc (read/jitdump_rows.h) */
    size_t rows_loads;          /* LOADs whose rows were checked */
    uint64_t rows_pcs;          /* code bytes with a CFA and a return-address rule */
    size_t rows_table_loads;    /* LOADs that are a built-in table's trampoline */
    size_t rows_boundaries;     /* their instruction boundaries compared with the table */
    const char *rows_table;     /* that table's name (static), or NULL */
};

/* The streaming validator.  Feed the bytes of one file in order, in any
 * chunking; the validator holds at most one record (up to a bound) and
 * bounded cross-record state, so memory does not grow with the file.
 * `known_size` is the file's size when known (a regular file), else
 * UINT64_MAX.  Returns NULL when out of memory. */
struct pt_jd_validator;
struct pt_jd_validator *pt_jd_validator_new(const struct pt_jd_options *opts, uint64_t known_size,
                                            pt_jd_finding_fn fn, void *arg);
/* Returns 0 to go on, 1 when nothing after this matters (perf stops
 * reading here): the caller may stop reading. */
int pt_jd_validator_feed(struct pt_jd_validator *v, const uint8_t *p, size_t n);
/* Bytes the validator would only discard next (the body of a record too big
 * to hold): a caller reading a regular file may seek past them and call
 * pt_jd_validator_skip instead of feeding them. */
uint64_t pt_jd_validator_discardable(const struct pt_jd_validator *v);
void pt_jd_validator_skip(struct pt_jd_validator *v, uint64_t n);
/* Ends the input (EOF) and runs the checks that need all of it; fills `sum`
 * and returns the number of errors. */
size_t pt_jd_validator_finish(struct pt_jd_validator *v, struct pt_jd_summary *sum);
void pt_jd_validator_free(struct pt_jd_validator *v);

/* Validates a dump in memory with the newest perf rules and no file name.
 * Each finding goes to fn (may be NULL) as "message [effect]"; `sum` (may
 * be NULL) is filled.  Returns the number of errors (0: perf reads the
 * whole dump and names and unwinds every LOAD), never negative. */
size_t pt_jitdump_validate(const uint8_t *data, size_t len, struct pt_jd_summary *sum, pt_jd_issue_fn fn,
                           void *arg);
/* The same with options and findings in full. */
size_t pt_jitdump_validate_ex(const uint8_t *data, size_t len, const struct pt_jd_options *opts,
                              struct pt_jd_summary *sum, pt_jd_finding_fn fn, void *arg);

#endif
