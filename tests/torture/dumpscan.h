/* SPDX-License-Identifier: MIT */
/* Independent readers for the files perftramp writes, used by the torture
 * suites to prove what is (and is not) in them.  Written from the format
 * facts in docs/DESIGN (tools/perf/util/jitdump.h layouts), not from the
 * library's writer, so a writer bug cannot hide behind a shared mistake. */
#ifndef PERFTRAMP_DUMPSCAN_H
#define PERFTRAMP_DUMPSCAN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ds_map_stats {
    size_t lines;
    size_t blank;     /* empty lines (perftramp's padding before a 4 KiB boundary) */
    size_t bytes;
    size_t torn_tail; /* bytes after the last newline (a torn last line) */
    char error[200]; /* why a scan failed */
};

/* One perf map line "START SIZE name\n" (hex, no 0x).  Return non-zero to
 * stop.  name is not NUL-terminated. */
typedef int (*ds_map_fn)(void *arg, uint64_t start, uint64_t size, const char *name, size_t len);

/* 0: every complete line well-formed (cb may be NULL; a last line without
 * its newline is not passed on, its length goes to torn_tail); -1: malformed (stats->error)
 * or cb stopped; -2: cannot read the file (errno). */
int ds_scan_map(const char *path, ds_map_fn cb, void *arg, struct ds_map_stats *stats);

struct ds_load {
    uint32_t pid, tid;
    uint64_t timestamp, vma, code_addr, code_size, code_index;
    const char *name; /* NUL-terminated inside the record */
    const uint8_t *code;
};

struct ds_dump_stats {
    uint32_t pid, elf_mach;
    size_t records, loads, unwinding, debug, moves, closes;
    size_t torn_tail;      /* bytes after the last complete record */
    size_t reserved;       /* zeros from a record boundary to the end: a live writer's room */
    size_t uncommitted;    /* in that room: a record of total_size 0 and the bytes after it up to
                            * the last non-zero one (a writer killed while copying it in) */
    size_t dup_code;       /* LOADs whose code bytes equal an earlier LOAD's */
    char error[200];
};

typedef int (*ds_load_fn)(void *arg, const struct ds_load *load);

/* Validates a jitdump: header (magic, version 1, size 40), every record's
 * prefix and size, LOAD layout (name NUL, code right at the record end),
 * unique code_index, UNWINDING_INFO sizes and padding, the group order
 * UNWINDING_INFO [DEBUG_INFO] LOAD, CLOSE last.  A partial record at the
 * end is not an error: its length goes to torn_tail; zeros from a record
 * boundary to the end (a live writer's room) go to reserved, except the
 * bytes of a record of total_size 0 at its start, which go to uncommitted
 * (perftramp stores a group's size last: docs/jitdump-producers.md).
 * 0: valid; -1: invalid (stats->error) or cb stopped; -2: unreadable. */
int ds_scan_jitdump(const char *path, ds_load_fn cb, void *arg, struct ds_dump_stats *stats);

/* When the perftramp CLI was built, asserts `perftramp check <dump>`
 * accepts the dump (Check assertion); prints a note when it was not. */
void ds_run_cli_check(const char *dump);


struct pt_jd_summary;
/* The library's validator (src/read/jitdump_reader.h, what `perftramp check`
 * runs) on a file: its error count (SIZE_MAX: unreadable), the first
 * error's text in why. */
size_t ds_validate_jitdump(const char *path, struct pt_jd_summary *sum, char *why, size_t why_len);

#endif
