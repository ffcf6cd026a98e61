/* SPDX-License-Identifier: MIT */
/* The report of `perftramp check`: findings grouped by kind (a count, the
 * first offsets), or every one with --all (spooled to a temporary file so
 * memory stays bounded whatever the dump holds); text or JSON. */
#include "cli_check.h"

#include "arch/table.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define EXAMPLES 4 /* offsets kept per kind: one shown in full, the rest listed */

struct group {
    char *kind, *msg, *advice, *record_name;
    enum pt_jd_severity sev;
    enum pt_jd_effect effect;
    size_t count;
    uint64_t offsets[EXAMPLES], records[EXAMPLES];
    size_t n_ex;
};

struct cli_report {
    bool all, failed;
    struct group *g;
    size_t n, cap;
    FILE *spool; /* --all: one finding per line, "S|effect|kind|offset|record|rname|msg|advice" */
};

struct cli_report *cli_report_new(bool all)
{
    struct cli_report *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->all = all;
    if (all && !(r->spool = tmpfile())) {
        free(r);
        return NULL;
    }
    return r;
}

void cli_report_free(struct cli_report *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->n; i++) {
        free(r->g[i].kind);
        free(r->g[i].msg);
        free(r->g[i].advice);
        free(r->g[i].record_name);
    }
    free(r->g);
    if (r->spool)
        fclose(r->spool);
    free(r);
}

bool cli_report_failed(const struct cli_report *r)
{
    return r->failed;
}

static char *dup_or_empty(const char *s)
{
    return strdup(s ? s : "");
}

/* Spooled fields may not hold the separators. */
static void spool_field(FILE *f, const char *s)
{
    for (; s && *s; s++)
        fputc(*s == '\n' || *s == '\x1f' ? ' ' : *s, f);
    fputc('\x1f', f);
}

void cli_report_finding(void *arg, const struct pt_jd_finding *f)
{
    struct cli_report *r = arg;
    if (r->spool) {
        fprintf(r->spool, "%d\x1f%d\x1f", (int)f->sev, (int)f->effect);
        spool_field(r->spool, f->kind);
        fprintf(r->spool, "%" PRIu64 "\x1f%" PRIu64 "\x1f", f->offset, f->record);
        spool_field(r->spool, f->record_name);
        spool_field(r->spool, f->msg);
        spool_field(r->spool, f->advice);
        fputc('\n', r->spool);
        if (ferror(r->spool))
            r->failed = true;
    }
    struct group *g = NULL;
    for (size_t i = 0; i < r->n; i++)
        if (r->g[i].sev == f->sev && strcmp(r->g[i].kind, f->kind) == 0) {
            g = &r->g[i];
            break;
        }
    if (!g) {
        if (r->n == r->cap) {
            size_t cap = r->cap ? r->cap * 2 : 16;
            struct group *v = realloc(r->g, cap * sizeof *v);
            if (!v) {
                r->failed = true;
                return;
            }
            r->g = v;
            r->cap = cap;
        }
        g = &r->g[r->n++];
        memset(g, 0, sizeof *g);
        g->kind = dup_or_empty(f->kind);
        g->msg = dup_or_empty(f->msg);
        g->advice = dup_or_empty(f->advice);
        g->record_name = f->record_name ? strdup(f->record_name) : NULL;
        g->sev = f->sev;
        g->effect = f->effect;
        if (!g->kind || !g->msg || !g->advice)
            r->failed = true;
    }
    g->count++;
    if (g->n_ex < EXAMPLES) {
        g->offsets[g->n_ex] = f->offset;
        g->records[g->n_ex] = f->record;
        g->n_ex++;
    }
}

const char *cli_machine_name(uint32_t m)
{
    for (size_t i = 0; i < pt_arch_count; i++)
        if (pt_arch_list[i]->elf_machine == m)
            return pt_arch_list[i]->name;
    /* System V gABI e_machine values of machines other JITs target that
     * have no table (a table's own name comes first, above) */
    switch (m) {
    case 3: return "i386";
    case 8: return "mips";
    case 20: return "ppc";
    case 40: return "arm";
    case 258: return "loongarch";
    default: return "unknown";
    }
}

static const char *sev_name(enum pt_jd_severity s)
{
    return s == PT_JD_ERROR ? "error" : s == PT_JD_WARNING ? "warning" : "note";
}

static const char *effect_id(enum pt_jd_effect e)
{
    switch (e) {
    case PT_JD_REFUSES: return "refuses";
    case PT_JD_LOSES: return "loses-records";
    case PT_JD_MISNAMES: return "misnames-samples";
    default: return "copes";
    }
}

/* ---- text ---------------------------------------------------------------- */

static void where(FILE *out, uint64_t offset, uint64_t record, const char *rname)
{
    fprintf(out, "at 0x%" PRIx64, offset);
    if (record != PT_JD_NO_RECORD)
        fprintf(out, ", record %" PRIu64 "%s%s%s", record, rname ? " (" : "", rname ? rname : "", rname ? ")" : "");
    else
        fputs(offset < PT_JD_HEADER_SIZE ? " (header)" : "", out);
}

static void text_finding(FILE *out, enum pt_jd_severity sev, enum pt_jd_effect effect, uint64_t offset,
                         uint64_t record, const char *rname, const char *msg, const char *advice)
{
    fprintf(out, "  %-7s ", sev_name(sev));
    where(out, offset, record, rname);
    fprintf(out, ": %s", msg);
    if (sev != PT_JD_NOTE)
        fprintf(out, " [%s]", pt_jd_effect_text(effect));
    fputc('\n', out);
    if (advice && *advice)
        fprintf(out, "          fix: %s\n", advice);
}

/* Reads one spooled finding; returns false at the end. */
struct spooled {
    int sev, effect;
    char *kind, *rname, *msg, *advice;
    uint64_t offset, record;
};

static bool next_spooled(FILE *f, char **line, size_t *cap, struct spooled *s)
{
    if (getline(line, cap, f) < 0)
        return false;
    char *fields[9] = {0}, *p = *line;
    for (int i = 0; i < 9 && p; i++) {
        fields[i] = p;
        p = strchr(p, '\x1f');
        if (p)
            *p++ = '\0';
    }
    s->sev = fields[0] ? atoi(fields[0]) : 0;
    s->effect = fields[1] ? atoi(fields[1]) : 0;
    s->kind = fields[2] ? fields[2] : "";
    s->offset = fields[3] ? strtoull(fields[3], NULL, 10) : 0;
    s->record = fields[4] ? strtoull(fields[4], NULL, 10) : PT_JD_NO_RECORD;
    s->rname = fields[5] && *fields[5] ? fields[5] : NULL;
    s->msg = fields[6] ? fields[6] : "";
    s->advice = fields[7] ? fields[7] : "";
    return true;
}

static void summary_text(FILE *out, const char *path, const struct pt_jd_summary *s, const struct cli_perf *perf)
{
    fprintf(out, "%s: %s (%zu error%s, %zu warning%s", path, s->errors ? "INVALID" : "valid", s->errors,
            s->errors == 1 ? "" : "s", s->warnings, s->warnings == 1 ? "" : "s");
    if (s->notes)
        fprintf(out, "; %zu note%s", s->notes, s->notes == 1 ? "" : "s");
    fputs(")\n", out);
    fprintf(out, "  judged for: %s (genelf .text at 0x%" PRIx64 ", %s)\n", perf->source,
            pt_jd_perf_text_offset(&perf->perf), cli_perf_buildid_text(&perf->perf));
    if (!s->header_ok)
        return;
    fprintf(out,
            "  producer: pid %" PRIu32 ", architecture %s (ELF machine %" PRIu32 "), jitdump version %" PRIu32
            ", %s byte order, flags 0x%" PRIx64 "\n",
            s->header.pid, cli_machine_name(s->header.elf_mach), s->header.elf_mach, s->header.version,
            s->header.swapped ? "foreign" : "native", s->header.flags);
    fprintf(out, "  records perf reads: %zu (", s->records);
    for (uint32_t id = 0; id < PT_JD_ID_COUNT; id++)
        fprintf(out, "%s %zu, ", pt_jd_record_name(id), s->by_id[id]);
    fprintf(out, "unknown %zu), %" PRIu64 " bytes with the header\n", s->unknown, s->valid_bytes);
    if (s->trailing_bytes)
        fprintf(out, "  never read by perf: %" PRIu64 " byte%s from offset 0x%" PRIx64 "\n", s->trailing_bytes,
                s->trailing_bytes == 1 ? "" : "s", s->valid_bytes);
    if (s->uncommitted_bytes)
        fprintf(out, "  uncommitted: a record of total_size 0 at offset 0x%" PRIx64 ", %" PRIu64
                " byte%s of it written (its writer stopped while copying it)\n",
                s->valid_bytes, s->uncommitted_bytes, s->uncommitted_bytes == 1 ? "" : "s");
    if (s->reserved_bytes)
        fprintf(out, "  reserved: %" PRIu64 " zero byte%s from offset 0x%" PRIx64 " (the writer's room ahead)\n",
                s->reserved_bytes, s->reserved_bytes == 1 ? "" : "s", s->valid_bytes + s->uncommitted_bytes);
    if (s->by_id[PT_JD_LOAD]) {
        fprintf(out, "  LOADs: %zu, code sizes %" PRIu64 "..%" PRIu64 " bytes; unwinding info: %zu with .eh_frame",
                s->by_id[PT_JD_LOAD], s->min_code_size, s->max_code_size, s->loads_with_unwind);
        if (s->loads_empty_unwind)
            fprintf(out, ", %zu with an UNWINDING_INFO holding no .eh_frame", s->loads_empty_unwind);
        fprintf(out, ", %zu without UNWINDING_INFO", s->loads_without_unwind);
        if (s->reused_addresses)
            fprintf(out, "; %zu replaced older code at the same addresses", s->reused_addresses);
        fputc('\n', out);
    }
    if (s->records)
        fprintf(out, "  timestamps: %" PRIu64 " .. %" PRIu64 " %s%s\n", s->first_timestamp, s->last_timestamp,
                s->arch_timestamps ? "TSC ticks (arch timestamps)" : "ns", s->closed ? "; closed" : "");
    if (s->rows_loads) {
        fprintf(out, "  rows: %zu LOAD%s checked pc by pc, %" PRIu64 " code bytes with a CFA and a return-address rule",
                s->rows_loads, s->rows_loads == 1 ? "" : "s", s->rows_pcs);
        if (s->rows_table_loads)
            fprintf(out, "; %zu LOAD%s the %s trampoline, %zu instruction boundaries compared with its table",
                    s->rows_table_loads, s->rows_table_loads == 1 ? " is" : "s are", s->rows_table,
                    s->rows_boundaries);
        fputc('\n', out);
    }
}

void cli_report_text(FILE *out, const struct cli_report *r, const char *path, const struct pt_jd_summary *s,
                     const struct cli_perf *perf)
{
    summary_text(out, path, s, perf);
    if (r->all) {
        rewind(r->spool);
        char *line = NULL;
        size_t cap = 0;
        struct spooled f;
        while (next_spooled(r->spool, &line, &cap, &f))
            text_finding(out, (enum pt_jd_severity)f.sev, (enum pt_jd_effect)f.effect, f.offset, f.record, f.rname,
                         f.msg, f.advice);
        free(line);
        return;
    }
    /* errors first, then warnings, then notes; each kind once */
    for (int sev = PT_JD_ERROR; sev >= PT_JD_NOTE; sev--)
        for (size_t i = 0; i < r->n; i++) {
            const struct group *g = &r->g[i];
            if ((int)g->sev != sev)
                continue;
            text_finding(out, g->sev, g->effect, g->offsets[0], g->records[0], g->record_name, g->msg, g->advice);
            if (g->count > 1) {
                fprintf(out, "          ... %zu more like it (%s), at", g->count - 1, g->kind);
                for (size_t k = 1; k < g->n_ex; k++)
                    fprintf(out, "%s 0x%" PRIx64, k > 1 ? "," : "", g->offsets[k]);
                fprintf(out, "%s; --all lists every one\n", g->count > g->n_ex ? ", ..." : "");
            }
        }
}

/* ---- JSON, written by hand ------------------------------------------------ */

/* Length of the valid UTF-8 sequence at p (RFC 3629: no overlongs, no
 * surrogates, at most U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *p)
{
    if (p[0] >= 0xc2 && p[0] <= 0xdf)
        return (p[1] & 0xc0) == 0x80 ? 2 : 0;
    if (p[0] >= 0xe0 && p[0] <= 0xef) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xe0 && p[1] < 0xa0) || (p[0] == 0xed && p[1] >= 0xa0))
            return 0;
        return 3;
    }
    if (p[0] >= 0xf0 && p[0] <= 0xf4) {
        if ((p[1] & 0xc0) != 0x80 || (p[2] & 0xc0) != 0x80 || (p[3] & 0xc0) != 0x80)
            return 0;
        if ((p[0] == 0xf0 && p[1] < 0x90) || (p[0] == 0xf4 && p[1] >= 0x90))
            return 0;
        return 4;
    }
    return 0;
}

void cli_json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        switch (*p) {
        case '"': fputs("\\\"", out); p++; continue;
        case '\\': fputs("\\\\", out); p++; continue;
        case '\n': fputs("\\n", out); p++; continue;
        case '\r': fputs("\\r", out); p++; continue;
        case '\t': fputs("\\t", out); p++; continue;
        default: break;
        }
        if (*p < 0x20 || *p == 0x7f) {
            fprintf(out, "\\u%04x", *p++);
        } else if (*p < 0x80) {
            fputc(*p++, out);
        } else {
            /* UTF-8 passes through as it is (JSON text is UTF-8); a byte
             * that is not part of valid UTF-8 becomes \u00XX, the code
             * point of that byte read as Latin-1, so the output stays
             * valid JSON */
            size_t n = utf8_len(p);
            if (n) {
                fwrite(p, 1, n, out);
                p += n;
            } else {
                fprintf(out, "\\u%04x", *p++);
            }
        }
    }
    fputc('"', out);
}

static void json_finding(FILE *out, bool first, int sev, int effect, const char *kind, uint64_t offset,
                         uint64_t record, const char *msg, const char *advice)
{
    fprintf(out, "%s{\"severity\":\"%s\",\"effect\":\"%s\",\"kind\":", first ? "" : ",",
            sev_name((enum pt_jd_severity)sev), effect_id((enum pt_jd_effect)effect));
    cli_json_str(out, kind);
    fprintf(out, ",\"offset\":%" PRIu64 ",\"record\":", offset);
    if (record == PT_JD_NO_RECORD)
        fputs("null", out);
    else
        fprintf(out, "%" PRIu64, record);
    fputs(",\"message\":", out);
    cli_json_str(out, msg);
    fputs(",\"advice\":", out);
    cli_json_str(out, advice);
    fputc('}', out);
}

void cli_report_json(FILE *out, const struct cli_report *r, const char *path, const struct pt_jd_summary *s,
                     const struct cli_perf *perf)
{
    fputs("{\"file\":", out);
    cli_json_str(out, path);
    fprintf(out, ",\"valid\":%s,\"perf_reads\":%s,\"errors\":%zu,\"warnings\":%zu,\"notes\":%zu",
            s->errors ? "false" : "true", s->perf_reads ? "true" : "false", s->errors, s->warnings, s->notes);
    fputs(",\"perf\":{\"source\":", out);
    cli_json_str(out, perf->source);
    fprintf(out, ",\"version\":\"%u.%u\",\"libcrypto\":%s,\"libdw_unwind\":%s,\"text_offset\":%" PRIu64 ",\"build_ids\":", perf->perf.major,
            perf->perf.minor, perf->perf.libcrypto == 1 ? "true" : perf->perf.libcrypto == 0 ? "false" : "null",
            perf->perf.libdw_unwind == 1 ? "true" : perf->perf.libdw_unwind == 0 ? "false" : "null",
            pt_jd_perf_text_offset(&perf->perf));
    cli_json_str(out, cli_perf_buildid_text(&perf->perf));
    fputc('}', out);
    fprintf(out,
            ",\"header\":{\"ok\":%s,\"magic\":%" PRIu32 ",\"version\":%" PRIu32 ",\"total_size\":%" PRIu32
            ",\"elf_mach\":%" PRIu32 ",\"arch\":",
            s->header_ok ? "true" : "false", s->header.magic, s->header.version, s->header.total_size,
            s->header.elf_mach);
    cli_json_str(out, cli_machine_name(s->header.elf_mach));
    fprintf(out, ",\"pid\":%" PRIu32 ",\"timestamp\":%" PRIu64 ",\"flags\":%" PRIu64 ",\"byte_order\":\"%s\"}",
            s->header.pid, s->header.timestamp, s->header.flags, s->header.swapped ? "swapped" : "native");
    fprintf(out, ",\"records\":{\"total\":%zu", s->records);
    for (uint32_t id = 0; id < PT_JD_ID_COUNT; id++) {
        fputc(',', out);
        cli_json_str(out, pt_jd_record_name(id));
        fprintf(out, ":%zu", s->by_id[id]);
    }
    fprintf(out, ",\"unknown\":%zu}", s->unknown);
    fprintf(out,
            ",\"loads\":{\"with_eh_frame\":%zu,\"unwinding_info_without_eh_frame\":%zu,\"without_unwinding_info\":%zu"
            ",\"reused_addresses\":%zu,\"min_code_size\":%" PRIu64 ",\"max_code_size\":%" PRIu64 "}",
            s->loads_with_unwind, s->loads_empty_unwind, s->loads_without_unwind, s->reused_addresses,
            s->min_code_size, s->max_code_size);
    fprintf(out,
            ",\"valid_bytes\":%" PRIu64 ",\"trailing_bytes\":%" PRIu64 ",\"reserved_bytes\":%" PRIu64
            ",\"uncommitted_bytes\":%" PRIu64 ",\"timestamps\":{\"first\":%" PRIu64 ",\"last\":%" PRIu64 ",\"unit\":\"%s\"},\"closed\":%s",
            s->valid_bytes, s->trailing_bytes, s->reserved_bytes, s->uncommitted_bytes, s->first_timestamp, s->last_timestamp,
            s->arch_timestamps ? "tsc-ticks" : "ns", s->closed ? "true" : "false");
    fprintf(out, ",\"rows\":{\"loads\":%zu,\"pcs_with_cfa_and_ra\":%" PRIu64 ",\"table\":", s->rows_loads, s->rows_pcs);
    if (s->rows_table)
        cli_json_str(out, s->rows_table);
    else
        fputs("null", out);
    fprintf(out, ",\"table_loads\":%zu,\"boundaries_compared\":%zu}", s->rows_table_loads, s->rows_boundaries);
    /* one entry per kind: its count and first offsets */
    fputs(",\"findings\":[", out);
    for (size_t i = 0; i < r->n; i++) {
        const struct group *g = &r->g[i];
        fprintf(out, "%s{\"kind\":", i ? "," : "");
        cli_json_str(out, g->kind);
        fprintf(out, ",\"severity\":\"%s\",\"effect\":\"%s\",\"count\":%zu,\"offsets\":[", sev_name(g->sev),
                effect_id(g->effect), g->count);
        for (size_t k = 0; k < g->n_ex; k++)
            fprintf(out, "%s%" PRIu64, k ? "," : "", g->offsets[k]);
        fputs("],\"message\":", out);
        cli_json_str(out, g->msg);
        fputs(",\"advice\":", out);
        cli_json_str(out, g->advice);
        fputc('}', out);
    }
    /* the issues themselves: every one with --all, else the first per kind */
    fputs("],\"issues\":[", out);
    bool first = true;
    if (r->all) {
        rewind(r->spool);
        char *line = NULL;
        size_t cap = 0;
        struct spooled f;
        while (next_spooled(r->spool, &line, &cap, &f)) {
            json_finding(out, first, f.sev, f.effect, f.kind, f.offset, f.record, f.msg, f.advice);
            first = false;
        }
        free(line);
    } else {
        for (size_t i = 0; i < r->n; i++) {
            json_finding(out, first, r->g[i].sev, r->g[i].effect, r->g[i].kind, r->g[i].offsets[0],
                         r->g[i].records[0], r->g[i].msg, r->g[i].advice);
            first = false;
        }
    }
    fputs("]}", out);
}
