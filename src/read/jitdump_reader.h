/* SPDX-License-Identifier: MIT */
/* Reads and validates jitdump files from untrusted bytes: everything perf
 * checks when it injects a dump (tools/perf/util/jitdump.c, genelf.c), plus
 * perftramp's layout rules (docs/facts.md "jitdump").  Every read is bounds
 * checked: garbage in, issues out, never a crash.  Both byte orders. */
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

/* Sequential reader.  pt_jd_iter_init decodes the header; returns 0, or -1
 * with a reason in it->error (too short, bad magic). */
struct pt_jd_iter {
    const uint8_t *data;
    size_t len;
    size_t off;           /* next record offset */
    struct pt_jd_header header;
    char error[160];
};
int pt_jd_iter_init(struct pt_jd_iter *it, const uint8_t *data, size_t len);
/* Returns 1 with the next record, 0 at a clean end of data, or -1 with a
 * reason in it->error for a record that cannot be framed (size < 16, past
 * the end: a torn record); the iterator then stays at that offset. */
int pt_jd_next(struct pt_jd_iter *it, struct pt_jd_record *rec);

/* Validation. */
enum pt_jd_severity {
    PT_JD_WARNING = 1, /* perf copes; the profile may be degraded */
    PT_JD_ERROR = 2,   /* perf rejects the dump or mis-resolves/mis-unwinds */
};
typedef void (*pt_jd_issue_fn)(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg);

struct pt_jd_summary {
    struct pt_jd_header header;
    bool header_ok;             /* magic known, header fully present */
    size_t records;             /* framed records */
    size_t by_id[PT_JD_ID_COUNT];
    size_t unknown;             /* records with an unknown id */
    uint64_t bytes_by_id[PT_JD_ID_COUNT]; /* sum of total_size per id */
    size_t loads_with_unwind;   /* LOADs preceded by their own UNWINDING_INFO */
    size_t valid_bytes;         /* header + framed records */
    size_t trailing_bytes;      /* bytes after the last framed record (torn tail) */
    uint64_t first_timestamp, last_timestamp; /* of records (0 if none) */
    uint64_t min_code_size, max_code_size;    /* over LOADs */
    bool closed;                /* a CLOSE record was seen */
    size_t errors, warnings;    /* issues reported */
    /* rules checked pc by pc (read/jitdump_rows.h) */
    size_t rows_loads;          /* LOADs whose rows were checked */
    uint64_t rows_pcs;          /* code bytes with a CFA and a return-address rule */
    size_t rows_table_loads;    /* LOADs that are a built-in table's trampoline */
    size_t rows_boundaries;     /* their instruction boundaries compared with the table */
    const char *rows_table;     /* that table's name (static), or NULL */
};

/* Validates a whole dump.  Each issue goes to fn (may be NULL) with its
 * severity and file offset; `sum` (may be NULL) is filled.  Returns the
 * number of errors (0: perf will accept the dump and resolve and unwind
 * every LOAD), never negative.  Checks: header (magic, version <= 1, size,
 * flags), record framing, LOAD name NUL-terminated and code at the record
 * end, unique code_index, UNWINDING_INFO applies to the next LOAD only,
 * .eh_frame + .eh_frame_hdr decode in the genelf layout with an FDE
 * covering the code start, mapped_size > 0 and mapped ranges not partially
 * overlapping, non-decreasing timestamps; and row by row
 * (read/jitdump_rows.h): a CFA and a return-address rule at every code
 * byte, no code byte outside every FDE, and for a built-in table's
 * trampoline the table's rules at every instruction boundary.  Warnings
 * (perf accepts the dump but the profile suffers): two LOADs with
 * identical code bytes (perf derives equal build-ids and merges their
 * names), a LOAD with empty unwinding info (--call-graph dwarf cannot
 * unwind it), trailing padding no FDE covers, LOAD pids differing from the
 * header.  perftramp's own dumps produce neither errors nor warnings. */
size_t pt_jitdump_validate(const uint8_t *data, size_t len, struct pt_jd_summary *sum, pt_jd_issue_fn fn,
                           void *arg);

#endif
