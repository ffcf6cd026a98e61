/* SPDX-License-Identifier: MIT */
/* Which perf `perftramp check` judges for: --perf-version, or the perf
 * installed here (`perf version --build-options`: its version, whether it
 * was built with libcrypto, which decides its build-ids before 6.17, and
 * whether it unwinds with libdw, which finds JIT .so files only in /tmp). */
#include "cli_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_perf_from_option(struct cli_perf *p, const char *arg)
{
    memset(p, 0, sizeof *p);
    char v[32];
    if (snprintf(v, sizeof v, "%s", arg) >= (int)sizeof v)
        return -1;
    p->perf.libcrypto = 0;
    p->perf.libdw_unwind = -1;
    /* flags after the version, in any order: +libcrypto, +libdw */
    char *f = strchr(v, '+');
    if (f)
        *f++ = '\0';
    while (f) {
        char *next = strchr(f, '+');
        if (next)
            *next++ = '\0';
        if (strcmp(f, "libcrypto") == 0)
            p->perf.libcrypto = 1;
        else if (strcmp(f, "libdw") == 0)
            p->perf.libdw_unwind = 1;
        else
            return -1;
        f = next;
    }
    if (pt_jd_perf_parse(v, &p->perf) < 0)
        return -1;
    snprintf(p->source, sizeof p->source, "--perf-version %s", arg);
    return 0;
}

/* "  [ on  ]  # HAVE_..." after a feature's colon: 1 on, 0 OFF, -1 neither */
int cli_perf_flag_on(const char *after_colon)
{
    const char *b = strchr(after_colon, '[');
    if (!b)
        return -1;
    b += strspn(b + 1, " ") + 1;
    return strncmp(b, "on", 2) == 0 ? 1 : strncmp(b, "OFF", 3) == 0 ? 0 : -1;
}

void cli_perf_detect(struct cli_perf *p)
{
    memset(p, 0, sizeof *p);
    p->perf.libcrypto = -1;
    p->perf.libdw_unwind = -1;
    snprintf(p->source, sizeof p->source, "no perf found: the newest rules");
    /* `timeout`: a broken perf must not hang the check */
    FILE *f = popen("timeout 10 perf version --build-options 2>/dev/null", "r");
    if (!f)
        return;
    char line[256], version[64] = "";
    int crypto = -1, libunwind = -1, libdw = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "perf version %63s", version) == 1)
            continue;
        int *flag = strstr(line, "libcrypto:")            ? &crypto
                    : strstr(line, " libunwind:")         ? &libunwind
                    : strstr(line, "libdw-dwarf-unwind:") ? &libdw
                                                          : NULL;
        if (flag)
            *flag = cli_perf_flag_on(strchr(line, ':') + 1);
    }
    pclose(f);
    if (version[0] && pt_jd_perf_parse(version, &p->perf) == 0) {
        p->perf.libcrypto = crypto;
        p->perf.libdw_unwind = libunwind == 1 ? 0 : libunwind == 0 && libdw == 1 ? 1 : -1;
        snprintf(p->source, sizeof p->source, "perf %s on this machine%s%s", version,
                 crypto == 1 ? ", with libcrypto" : crypto == 0 ? ", without libcrypto" : "",
                 p->perf.libdw_unwind == 1 ? ", unwinding with libdw" : "");
    }
}

const char *cli_perf_buildid_text(const struct pt_jd_perf *p)
{
    switch (pt_jd_perf_buildid_mode(p)) {
    case PT_JD_BUILDID_RANDOM: return "random build-ids: no merging";
    case PT_JD_BUILDID_ADDR_CODE: return "build-ids from address + code (MD5)";
    case PT_JD_BUILDID_CODE: return "build-ids from the code alone (equal code merges names)";
    default: return "build-ids from code + name";
    }
}
