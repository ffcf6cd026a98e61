/* SPDX-License-Identifier: MIT */
/* perftramp check [--json] [--all] FILE...: validates jitdump files.
 *
 * The rules live in the library (src/read/jitdump_reader.c, pt_jitdump_validate)
 * so the tests, the fuzzer and this command judge a dump the same way;
 * this file only reads files, collects the issues and prints them. */
#include "cli.h"

#include "read/jitdump_reader.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Issues shown per severity in text mode unless --all. */
#define TEXT_ISSUE_LIMIT 20
/* Input that is not a regular file (a pipe, /dev/zero) stops here. */
#define READ_LIMIT ((size_t)1 << 30)

struct issue {
    enum pt_jd_severity sev;
    size_t offset;
    char *msg;
};

struct issues {
    struct issue *v;
    size_t n, cap;
    bool oom;
};

static void collect(void *arg, enum pt_jd_severity sev, size_t offset, const char *msg)
{
    struct issues *is = arg;
    if (is->oom)
        return;
    if (is->n == is->cap) {
        size_t cap = is->cap ? is->cap * 2 : 16;
        struct issue *v = realloc(is->v, cap * sizeof *v);
        if (!v) {
            is->oom = true;
            return;
        }
        is->v = v;
        is->cap = cap;
    }
    char *copy = strdup(msg ? msg : "");
    if (!copy) {
        is->oom = true;
        return;
    }
    is->v[is->n++] = (struct issue){sev, offset, copy};
}

static void issues_free(struct issues *is)
{
    for (size_t i = 0; i < is->n; i++)
        free(is->v[i].msg);
    free(is->v);
    *is = (struct issues){0};
}

/* Reads a whole file.  Returns 0, or -1 with errno set. */
static int slurp(const char *path, uint8_t **out, size_t *out_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    struct stat st;
    if (fstat(fd, &st) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    if (S_ISDIR(st.st_mode)) {
        close(fd);
        errno = EISDIR;
        return -1;
    }
    /* room for the read that sees end of file, so a regular file is read in one buffer */
    size_t cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096, len = 0;
    uint8_t *buf = malloc(cap + 1);
    if (!buf) {
        close(fd);
        errno = ENOMEM;
        return -1;
    }
    for (;;) {
        if (len == cap) { /* a pipe, or a file that grew while we read it */
            if (cap >= READ_LIMIT && !S_ISREG(st.st_mode)) {
                free(buf);
                close(fd);
                errno = EFBIG;
                return -1;
            }
            uint8_t *nb = realloc(buf, cap * 2 + 1);
            if (!nb) {
                free(buf);
                close(fd);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + len, cap - len);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return -1;
        }
        if (r == 0)
            break;
        len += (size_t)r;
    }
    close(fd);
    *out = buf;
    *out_len = len;
    return 0;
}

/* The producer's architecture from the header's ELF machine number:
 * perftramp's own tables first, then the machines other JITs target
 * (System V gABI, e_machine values). */
static const char *machine_name(uint32_t m)
{
    for (size_t i = 0; i < pt_arch_count; i++)
        if (pt_arch_list[i]->elf_machine == m)
            return pt_arch_list[i]->name;
    switch (m) {
    case 3: return "i386";
    case 8: return "mips";
    case 20: return "ppc";
    case 21: return "ppc64";
    case 22: return "s390";
    case 40: return "arm";
    case 62: return "x86_64";
    case 183: return "aarch64";
    case 243: return "riscv";
    case 258: return "loongarch";
    default: return "unknown";
    }
}

static const char *sev_name(enum pt_jd_severity s)
{
    return s == PT_JD_ERROR ? "error" : "warning";
}

/* ---- JSON, written by hand ------------------------------------------ */
static void json_str(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        default:
            /* control bytes and anything non-ASCII (names from a dump need
             * not be UTF-8): escaped, so the output is always valid JSON */
            if (*p < 0x20 || *p >= 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

/* UNWINDING_INFO records without .eh_frame bytes (V8's builtins): the
 * summary counts them among the LOADs with unwinding info. */
static size_t count_empty_unwind(const uint8_t *data, size_t len)
{
    struct pt_jd_iter it;
    struct pt_jd_record r;
    size_t n = 0;
    if (pt_jd_iter_init(&it, data, len) < 0)
        return 0;
    while (pt_jd_next(&it, &r) == 1)
        if (r.id == PT_JD_UNWINDING_INFO && !r.malformed && r.unwinding_size <= r.eh_frame_hdr_size)
            n++;
    return n;
}

static void json_file(FILE *out, const char *path, const struct pt_jd_summary *s, const struct issues *is,
                      size_t errors, size_t empty_unwind)
{
    fputs("{\"file\":", out);
    json_str(out, path);
    fprintf(out, ",\"valid\":%s,\"errors\":%zu,\"warnings\":%zu", errors ? "false" : "true", errors,
            s->warnings);
    fprintf(out,
            ",\"header\":{\"ok\":%s,\"magic\":%" PRIu32 ",\"version\":%" PRIu32 ",\"total_size\":%" PRIu32
            ",\"elf_mach\":%" PRIu32 ",\"arch\":",
            s->header_ok ? "true" : "false", s->header.magic, s->header.version, s->header.total_size,
            s->header.elf_mach);
    json_str(out, machine_name(s->header.elf_mach));
    fprintf(out, ",\"pid\":%" PRIu32 ",\"timestamp\":%" PRIu64 ",\"flags\":%" PRIu64 ",\"byte_order\":\"%s\"}",
            s->header.pid, s->header.timestamp, s->header.flags, s->header.swapped ? "swapped" : "native");
    fprintf(out, ",\"records\":{\"total\":%zu", s->records);
    for (uint32_t id = 0; id < PT_JD_ID_COUNT; id++) {
        fputc(',', out);
        json_str(out, pt_jd_record_name(id));
        fprintf(out, ":%zu", s->by_id[id]);
    }
    fprintf(out, ",\"unknown\":%zu}", s->unknown);
    fprintf(out,
            ",\"loads_with_unwinding_info\":%zu,\"unwinding_info_without_eh_frame\":%zu,\"valid_bytes\":%zu,\"trailing_bytes\":%zu"
            ",\"first_timestamp\":%" PRIu64 ",\"last_timestamp\":%" PRIu64 ",\"closed\":%s",
            s->loads_with_unwind, empty_unwind, s->valid_bytes, s->trailing_bytes, s->first_timestamp, s->last_timestamp,
            s->closed ? "true" : "false");
    fprintf(out, ",\"rows\":{\"loads\":%zu,\"pcs_with_cfa_and_ra\":%" PRIu64 ",\"table\":", s->rows_loads,
            s->rows_pcs);
    if (s->rows_table)
        json_str(out, s->rows_table);
    else
        fputs("null", out);
    fprintf(out, ",\"table_loads\":%zu,\"boundaries_compared\":%zu}", s->rows_table_loads, s->rows_boundaries);
    fputs(",\"issues\":[", out);
    for (size_t i = 0; i < is->n; i++) {
        fprintf(out, "%s{\"severity\":\"%s\",\"offset\":%zu,\"message\":", i ? "," : "", sev_name(is->v[i].sev),
                is->v[i].offset);
        json_str(out, is->v[i].msg);
        fputc('}', out);
    }
    fputs("]}", out);
}

static void json_io_error(FILE *out, const char *path, const char *why)
{
    fputs("{\"file\":", out);
    json_str(out, path);
    fputs(",\"valid\":false,\"io_error\":", out);
    json_str(out, why);
    fputc('}', out);
}

/* ---- text ----------------------------------------------------------- */
static void text_file(FILE *out, const char *path, const struct pt_jd_summary *s, const struct issues *is,
                      size_t errors, bool all, size_t empty_unwind)
{
    fprintf(out, "%s: %s (%zu error%s, %zu warning%s)\n", path, errors ? "INVALID" : "valid", errors,
            errors == 1 ? "" : "s", s->warnings, s->warnings == 1 ? "" : "s");
    if (s->header_ok)
        fprintf(out,
                "  producer: pid %" PRIu32 ", architecture %s (ELF machine %" PRIu32 "), jitdump version %" PRIu32
                ", %s byte order, flags 0x%" PRIx64 "\n",
                s->header.pid, machine_name(s->header.elf_mach), s->header.elf_mach, s->header.version,
                s->header.swapped ? "foreign" : "native", s->header.flags);
    fprintf(out, "  records: %zu (", s->records);
    for (uint32_t id = 0; id < PT_JD_ID_COUNT; id++)
        fprintf(out, "%s %zu, ", pt_jd_record_name(id), s->by_id[id]);
    fprintf(out, "unknown %zu)\n", s->unknown);
    if (s->by_id[PT_JD_LOAD])
        fprintf(out,
                "  LOADs with unwinding info: %zu of %zu (%zu of them without .eh_frame); code sizes %" PRIu64 "..%" PRIu64
                " bytes\n",
                s->loads_with_unwind, s->by_id[PT_JD_LOAD], empty_unwind, s->min_code_size, s->max_code_size);
    if (s->records)
        fprintf(out, "  timestamps: %" PRIu64 " .. %" PRIu64 " ns%s\n", s->first_timestamp, s->last_timestamp,
                s->closed ? "; closed" : "");
    if (s->rows_loads) {
        fprintf(out, "  rows: %zu LOAD%s checked pc by pc, %" PRIu64 " code bytes with a CFA and a return-address rule",
                s->rows_loads, s->rows_loads == 1 ? "" : "s", s->rows_pcs);
        if (s->rows_table_loads)
            fprintf(out, "; %zu LOAD%s the %s trampoline, %zu instruction boundaries compared with its table",
                    s->rows_table_loads, s->rows_table_loads == 1 ? " is" : "s are", s->rows_table,
                    s->rows_boundaries);
        fputc('\n', out);
    }
    if (s->trailing_bytes)
        fprintf(out, "  %zu bytes after the last whole record\n", s->trailing_bytes);
    size_t shown[3] = {0}, hidden[3] = {0};
    for (size_t i = 0; i < is->n; i++) {
        unsigned k = is->v[i].sev == PT_JD_ERROR ? 2 : 1;
        if (!all && shown[k] == TEXT_ISSUE_LIMIT) {
            hidden[k]++;
            continue;
        }
        shown[k]++;
        fprintf(out, "  %-7s at offset 0x%zx: %s\n", sev_name(is->v[i].sev), is->v[i].offset, is->v[i].msg);
    }
    if (hidden[2] || hidden[1])
        fprintf(out, "  ... %zu more errors, %zu more warnings listed by --all or --json\n", hidden[2], hidden[1]);
    if (s->errors + s->warnings > shown[2] + shown[1] + hidden[2] + hidden[1])
        fprintf(out, "  (repeated issues of one kind are counted in the totals, listed once per kind up to a limit)\n");
}

/* --records: one line per framed record, for humans and for tests that
 * need record offsets (corrupting a chosen record). */
static void print_records(FILE *out, const uint8_t *data, size_t len)
{
    struct pt_jd_iter it;
    struct pt_jd_record r;
    if (pt_jd_iter_init(&it, data, len) < 0) {
        fprintf(out, "  (no records: %s)\n", it.error);
        return;
    }
    int k;
    while ((k = pt_jd_next(&it, &r)) == 1) {
        fprintf(out, "  record 0x%08zx %-14s size %-6" PRIu32 " ts %" PRIu64, r.offset, pt_jd_record_name(r.id),
                r.total_size, r.timestamp);
        if (r.malformed) {
            fputs(" (malformed)\n", out);
            continue;
        }
        if (r.id == PT_JD_LOAD) {
            fprintf(out, " code_index %" PRIu64 " code_addr 0x%" PRIx64 " code_size %" PRIu64 " name \"", r.code_index,
                    r.code_addr, r.code_size);
            for (size_t i = 0; r.name && i < r.name_len; i++) {
                unsigned char c = (unsigned char)r.name[i];
                if (c < 0x20 || c >= 0x7f || c == '"' || c == '\\')
                    fprintf(out, "\\x%02x", c);
                else
                    fputc(c, out);
            }
            fputc('"', out);
        } else if (r.id == PT_JD_UNWINDING_INFO) {
            fprintf(out, " unwinding_size %" PRIu64 " eh_frame_hdr_size %" PRIu64 " mapped_size %" PRIu64,
                    r.unwinding_size, r.eh_frame_hdr_size, r.mapped_size);
        }
        fputc('\n', out);
    }
    if (k < 0)
        fprintf(out, "  record 0x%08zx cannot be framed: %s\n", it.off, it.error);
}

static void check_usage(FILE *f)
{
    fprintf(f, "usage: perftramp check [--json] [--all] [--records] FILE...\n");
}

int cli_check_main(int argc, char **argv)
{
    bool json = false, all = false, records = false, end_of_opts = false;
    int n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (end_of_opts || argv[i][0] != '-' || strcmp(argv[i], "-") == 0) {
            n_files++;
        } else if (strcmp(argv[i], "--") == 0) {
            end_of_opts = true;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = true;
        } else if (strcmp(argv[i], "--all") == 0) {
            all = true;
        } else if (strcmp(argv[i], "--records") == 0) {
            records = true;
        } else if (strcmp(argv[i], "-h") == 0 || strcmp(argv[i], "--help") == 0) {
            check_usage(stdout);
            return CLI_OK;
        } else {
            fprintf(stderr, "perftramp check: unknown option '%s'\n", argv[i]);
            check_usage(stderr);
            return CLI_USAGE;
        }
    }
    if (n_files == 0) {
        fprintf(stderr, "perftramp check: no FILE given\n");
        check_usage(stderr);
        return CLI_USAGE;
    }

    int rc = CLI_OK;
    bool first = true;
    end_of_opts = false;
    if (json)
        fputs("{\"files\":[", stdout);
    for (int i = 1; i < argc; i++) {
        if (!end_of_opts && argv[i][0] == '-' && strcmp(argv[i], "-") != 0) {
            end_of_opts = strcmp(argv[i], "--") == 0;
            continue;
        }
        const char *path = argv[i];
        uint8_t *data = NULL;
        size_t len = 0;
        if (json && !first)
            fputc(',', stdout);
        first = false;
        if (slurp(path, &data, &len) < 0) {
            const char *why = strerror(errno);
            fprintf(stderr, "perftramp check: %s: %s\n", path, why);
            if (json)
                json_io_error(stdout, path, why);
            rc = CLI_USAGE;
            continue;
        }
        struct issues is = {0};
        struct pt_jd_summary sum;
        memset(&sum, 0, sizeof sum);
        size_t errors = pt_jitdump_validate(data, len, &sum, collect, &is);
        if (is.oom) {
            fprintf(stderr, "perftramp check: %s: out of memory collecting issues\n", path);
            rc = CLI_USAGE;
        }
        if (json)
            json_file(stdout, path, &sum, &is, errors, count_empty_unwind(data, len));
        else
            text_file(stdout, path, &sum, &is, errors, all, count_empty_unwind(data, len));
        if (records && !json)
            print_records(stdout, data, len);
        if (errors && rc == CLI_OK)
            rc = CLI_INVALID;
        issues_free(&is);
        free(data);
    }
    if (json)
        printf("],\"valid\":%s}\n", rc == CLI_OK ? "true" : "false");
    if (fflush(stdout) != 0 || ferror(stdout))
        return CLI_USAGE;
    return rc;
}
