/* SPDX-License-Identifier: MIT */
/* Which perf `perftramp check` judges for: --perf-version, or the perf
 * installed here (`perf version --build-options`: its version and whether
 * it was built with libcrypto, which decides its build-ids before 6.17). */
#include "cli_check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cli_perf_from_option(struct cli_perf *p, const char *arg)
{
    memset(p, 0, sizeof *p);
    char v[32];
    snprintf(v, sizeof v, "%s", arg);
    char *plus = strchr(v, '+');
    p->perf.libcrypto = 0;
    if (plus) {
        if (strcmp(plus, "+libcrypto") != 0)
            return -1;
        *plus = '\0';
        p->perf.libcrypto = 1;
    }
    if (pt_jd_perf_parse(v, &p->perf) < 0)
        return -1;
    snprintf(p->source, sizeof p->source, "--perf-version %s", arg);
    return 0;
}

void cli_perf_detect(struct cli_perf *p)
{
    memset(p, 0, sizeof *p);
    p->perf.libcrypto = -1;
    snprintf(p->source, sizeof p->source, "no perf found: the newest rules");
    /* `timeout`: a broken perf must not hang the check */
    FILE *f = popen("timeout 10 perf version --build-options 2>/dev/null", "r");
    if (!f)
        return;
    char line[256], version[64] = "";
    int crypto = -1;
    while (fgets(line, sizeof line, f)) {
        if (sscanf(line, "perf version %63s", version) == 1)
            continue;
        char *c = strstr(line, "libcrypto:");
        if (c)
            crypto = strstr(c, "on") != NULL && strstr(c, "OFF") == NULL;
    }
    pclose(f);
    if (version[0] && pt_jd_perf_parse(version, &p->perf) == 0) {
        p->perf.libcrypto = crypto;
        snprintf(p->source, sizeof p->source, "perf %s on this machine%s", version,
                 crypto == 1 ? ", with libcrypto" : crypto == 0 ? ", without libcrypto" : "");
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
