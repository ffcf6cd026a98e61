/* SPDX-License-Identifier: MIT */
/* The parts of `perftramp check`: input (files, FIFOs, standard input),
 * the perf the verdict is for, and the report (text or JSON). */
#ifndef PERFTRAMP_CLI_CHECK_H
#define PERFTRAMP_CLI_CHECK_H

#include "read/jitdump_reader.h"

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

/* ---- input (cli_check_input.c) ---- */

/* Feeds the file at `path` ("-": standard input) to `v`, reading as far as
 * perf would.  Regular files are read directly (known size, big record
 * bodies seeked over); FIFOs, pipes and terminals are read with `timeout_s`
 * seconds allowed between bytes (a FIFO without a writer does not block
 * open()); devices, directories and sockets are refused.  Returns 0, or -1
 * with a message in `why`.  `known_size` gets the file's size or
 * UINT64_MAX; `kind` a word for it ("file", "FIFO", ...). */
struct cli_input {
    const char *path;
    int fd;
    bool regular;
    uint64_t size;
    const char *kind;
};
int cli_input_open(struct cli_input *in, const char *path, char *why, size_t why_len);
int cli_input_feed(struct cli_input *in, struct pt_jd_validator *v, double timeout_s, char *why, size_t why_len);
void cli_input_close(struct cli_input *in);
/* --records: lists the records of an opened input, streaming. */
int cli_input_list_records(struct cli_input *in, FILE *out, double timeout_s, char *why, size_t why_len);

/* ---- the perf the rules are for (cli_perf.c) ---- */

struct cli_perf {
    struct pt_jd_perf perf;
    /* "perf 6.1.187 on this machine", "--perf-version 6.17", "no perf found";
     * room for a 63-byte version and ", without libcrypto" */
    char source[128];
};
/* Parses "X.Y", then "+libcrypto" and "+libdw" in any order; returns 0 or -1. */
int cli_perf_from_option(struct cli_perf *p, const char *arg);
/* A feature's state in `perf version --build-options`, from the text after
 * its colon ("  [ on  ]  # HAVE_..."): 1 on, 0 OFF, -1 neither. */
int cli_perf_flag_on(const char *after_colon);
/* Asks the installed perf (`perf version --build-options`). */
void cli_perf_detect(struct cli_perf *p);
const char *cli_perf_buildid_text(const struct pt_jd_perf *p);

/* ---- the report (cli_check_report.c) ---- */

struct cli_report;
/* all: list every finding (spooled to a temporary file, so memory stays
 * bounded); otherwise repeats of a kind are summarised. */
struct cli_report *cli_report_new(bool all);
void cli_report_free(struct cli_report *r);
/* The validator's callback. */
void cli_report_finding(void *arg, const struct pt_jd_finding *f);
bool cli_report_failed(const struct cli_report *r); /* out of memory or spool I/O */
void cli_report_text(FILE *out, const struct cli_report *r, const char *path, const struct pt_jd_summary *s,
                     const struct cli_perf *perf);
void cli_report_json(FILE *out, const struct cli_report *r, const char *path, const struct pt_jd_summary *s,
                     const struct cli_perf *perf);
void cli_json_str(FILE *out, const char *s);

/* ---- PERFTRAMP_ELF arena files (cli_check_arena.c) ---- */

/* A path whose file name is perftramp-<pid>-<n>.so. */
bool cli_is_arena_name(const char *path);
/* Reports on one arena file: CLI_OK (complete), CLI_INVALID (incomplete
 * or invalid) or CLI_USAGE (unreadable). */
int cli_check_arena(const char *path, bool json);
/* The producer's architecture from an ELF machine number. */
const char *cli_machine_name(uint32_t m);

#endif
