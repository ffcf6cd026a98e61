/* SPDX-License-Identifier: MIT */
/* Prints what perftramp took from the environment: the outputs of
 * perftramp_open(NULL) ($PERFTRAMP) and the jitdump directory of a
 * context opened with .jitdump_dir = NULL ($JITDUMPDIR), and whether the
 * kernel marked this run secure (AT_SECURE: setuid/setgid).
 * tests/api/env_secure.sh runs it plainly and setgid. */
#include "api/context.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

/* Sanitizer builds: LeakSanitizer cannot run in a setgid (non-dumpable)
 * process, and there the runtime cannot read $ASAN_OPTIONS either. */
const char *__asan_default_options(void) __attribute__((used));
const char *__asan_default_options(void)
{
    return "detect_leaks=0";
}

int main(void)
{
    perftramp *pt = perftramp_open(NULL);
    if (!pt) {
        printf("FAIL: perftramp_open(NULL): %s\n", strerror(errno));
        return 1;
    }
    printf("secure %lu outputs %u", getauxval(AT_SECURE), pt->outputs);
    perftramp_close(pt);
    char map[64]; /* the perf map $PERFTRAMP may have opened */
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    unlink(map);
    pt = perftramp_open(&(struct perftramp_options){.outputs = 0});
    if (!pt) {
        printf("\nFAIL: perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    printf(" jitdump_dir %s\n", pt->jitdump_dir ? pt->jitdump_dir : "(default)");
    perftramp_close(pt);
    return 0;
}
