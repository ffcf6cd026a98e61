/* SPDX-License-Identifier: MIT */
/* perftramp check [--json] [--all] [--records] [--perf-version X.Y]
 *                 [--timeout SECONDS] FILE...
 *
 * The rules live in the library (src/read: the streaming validator), so the
 * tests, the fuzzer and this command judge a dump the same way; this file
 * reads the options and drives the input (cli_check_input.c) and the
 * report (cli_check_report.c) for each file. */
#include "cli.h"
#include "cli_check.h"

#include <stdlib.h>
#include <string.h>

static void check_usage(FILE *f)
{
    fprintf(f, "usage: perftramp check [--json] [--all] [--records] [--perf-version X.Y[+libcrypto][+libdw]]\n"
               "                       [--timeout SECONDS] FILE...   (FILE - is standard input)\n");
}

struct opts {
    bool json, all, records;
    double timeout;
    struct cli_perf perf;
};

/* One file: 0 valid, 1 invalid, 2 I/O error. */
static int check_one(const struct opts *o, const char *path, bool first)
{
    if (o->json && !first)
        fputc(',', stdout);
    if (cli_is_arena_name(path))
        return cli_check_arena(path, o->json);
    char why[320];
    struct cli_input in;
    struct pt_jd_summary sum;
    memset(&sum, 0, sizeof sum);
    struct cli_report *rep = NULL;
    struct pt_jd_validator *v = NULL;
    int rc = CLI_USAGE;
    if (cli_input_open(&in, path, why, sizeof why) < 0)
        goto io_error;
    rep = cli_report_new(o->all);
    struct pt_jd_options vo = {.perf = o->perf.perf, .file_name = path};
    v = rep ? pt_jd_validator_new(&vo, in.size, cli_report_finding, rep) : NULL;
    if (!v) {
        snprintf(why, sizeof why, "out of memory");
        goto io_error;
    }
    if (cli_input_feed(&in, v, o->timeout, why, sizeof why) < 0)
        goto io_error;
    size_t errors = pt_jd_validator_finish(v, &sum);
    if (cli_report_failed(rep)) {
        snprintf(why, sizeof why, "out of memory or temporary file error collecting findings");
        goto io_error;
    }
    if (o->json)
        cli_report_json(stdout, rep, path, &sum, &o->perf);
    else
        cli_report_text(stdout, rep, path, &sum, &o->perf);
    rc = errors ? CLI_INVALID : CLI_OK;
    if (o->records && !o->json) {
        cli_input_close(&in);
        if (strcmp(path, "-") == 0) {
            fprintf(stdout, "  (--records: standard input was read once already)\n");
        } else if (cli_input_open(&in, path, why, sizeof why) < 0 ||
                   cli_input_list_records(&in, stdout, o->timeout, why, sizeof why) < 0) {
            fprintf(stderr, "perftramp check: %s: --records: %s\n", path, why);
            rc = CLI_USAGE;
        }
    }
    cli_input_close(&in);
    pt_jd_validator_free(v);
    cli_report_free(rep);
    return rc;

io_error:
    fprintf(stderr, "perftramp check: %s: %s\n", path, why);
    if (o->json) {
        fputs("{\"file\":", stdout);
        cli_json_str(stdout, path);
        fputs(",\"valid\":false,\"io_error\":", stdout);
        cli_json_str(stdout, why);
        fputc('}', stdout);
    }
    if (in.fd >= 0)
        cli_input_close(&in);
    pt_jd_validator_free(v);
    cli_report_free(rep);
    return CLI_USAGE;
}

int cli_check_main(int argc, char **argv)
{
    struct opts o = {.timeout = 10};
    bool end_of_opts = false, perf_given = false;
    int n_files = 0;
    /* options first: files are judged with all of them */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (end_of_opts || a[0] != '-' || strcmp(a, "-") == 0) {
            n_files++;
        } else if (strcmp(a, "--") == 0) {
            end_of_opts = true;
        } else if (strcmp(a, "--json") == 0) {
            o.json = true;
        } else if (strcmp(a, "--all") == 0) {
            o.all = true;
        } else if (strcmp(a, "--records") == 0) {
            o.records = true;
        } else if (strcmp(a, "--perf-version") == 0 || strcmp(a, "--timeout") == 0) {
            if (i + 1 >= argc) {
                fprintf(stderr, "perftramp check: %s needs a value\n", a);
                return CLI_USAGE;
            }
            const char *val = argv[++i];
            if (a[2] == 'p') {
                if (cli_perf_from_option(&o.perf, val) < 0) {
                    fprintf(stderr, "perftramp check: --perf-version '%s': want X.Y, then +libcrypto or +libdw (e.g. 6.1, 6.1+libdw)\n",
                            val);
                    return CLI_USAGE;
                }
                perf_given = true;
            } else {
                char *end = NULL;
                o.timeout = strtod(val, &end);
                if (!end || *end || !(o.timeout > 0) || o.timeout > 86400) {
                    fprintf(stderr, "perftramp check: --timeout '%s': want seconds, > 0\n", val);
                    return CLI_USAGE;
                }
            }
        } else if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            check_usage(stdout);
            return CLI_OK;
        } else {
            fprintf(stderr, "perftramp check: unknown option '%s'\n", a);
            check_usage(stderr);
            return CLI_USAGE;
        }
    }
    if (n_files == 0) {
        fprintf(stderr, "perftramp check: no FILE given\n");
        check_usage(stderr);
        return CLI_USAGE;
    }
    if (!perf_given)
        cli_perf_detect(&o.perf);

    int rc = CLI_OK;
    bool first = true;
    end_of_opts = false;
    if (o.json)
        fputs("{\"files\":[", stdout);
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!end_of_opts && a[0] == '-' && strcmp(a, "-") != 0) {
            end_of_opts = strcmp(a, "--") == 0;
            if (strcmp(a, "--perf-version") == 0 || strcmp(a, "--timeout") == 0)
                i++;
            continue;
        }
        int r = check_one(&o, a, first);
        first = false;
        if (r == CLI_USAGE || (r == CLI_INVALID && rc == CLI_OK))
            rc = r;
    }
    if (o.json)
        printf("],\"valid\":%s}\n", rc == CLI_OK ? "true" : "false");
    if (fflush(stdout) != 0 || ferror(stdout))
        return CLI_USAGE;
    return rc;
}
