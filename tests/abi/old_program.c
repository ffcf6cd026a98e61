/* SPDX-License-Identifier: MIT */
/* An "old" program: tests/abi/abi_grown.sh compiles it against
 * tests/abi/old/, a frozen copy of the headers of release 0.1.0, and runs
 * it against libraries whose struct perftramp_options has grown since.
 * Its options end exactly where a PROT_NONE page starts: a library that
 * read one byte past what this program declared would crash it.
 * Prints the library it ran against; exits 0 when everything worked. */
#define _GNU_SOURCE
#include "perftramp.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

static long twice(long v)
{
    return 2 * v;
}

int main(void)
{
    long page = sysconf(_SC_PAGESIZE);
    char *map = mmap(NULL, 2 * (size_t)page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED || mprotect(map + page, (size_t)page, PROT_NONE) != 0) {
        perror("mmap");
        return 1;
    }
    struct perftramp_options *o = (struct perftramp_options *)(map + page - sizeof *o);
    *o = (struct perftramp_options){.outputs = PERFTRAMP_PERF_MAP};
    perftramp *pt = perftramp_open(o);
    if (!pt) {
        printf("FAIL: perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    long (*t)(long) = (long (*)(long))perftramp_wrap(pt, (perftramp_fn)twice, "old::twice");
    char path[64], line[256] = "";
    snprintf(path, sizeof path, "/tmp/perf-%d.map", (int)getpid());
    FILE *f = fopen(path, "r");
    if (f) {
        if (!fgets(line, sizeof line, f))
            line[0] = 0;
        fclose(f);
    }
    remove(path);
    if (!t || t(21) != 42 || !strstr(line, " old::twice")) {
        printf("FAIL: wrap/call/map line: %s '%s'\n", t ? "" : strerror(errno), line);
        return 1;
    }
    Dl_info info;
    if (!dladdr((void *)perftramp_open_sized, &info) || !info.dli_fname) {
        printf("FAIL: dladdr\n");
        return 1;
    }
    if (perftramp_close(pt) != 0) {
        printf("FAIL: close: %s\n", strerror(errno));
        return 1;
    }
    printf("ok: header %s (options %zu bytes) against %s, library %s\n", PERFTRAMP_VERSION, sizeof *o,
           info.dli_fname, perftramp_version());
    return 0;
}
