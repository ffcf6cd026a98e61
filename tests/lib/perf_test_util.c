/* SPDX-License-Identifier: MIT */
/* Tests (shared by the perf-output Check suites): reading whole files,
 * temporary directories, what the process has mapped and open. */
#include "perf_test_util.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

uint8_t *ptt_read_file(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, n = 0;
    uint8_t *buf = malloc(cap);
    while (buf) {
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (n < cap)
            break;
        uint8_t *b = realloc(buf, cap * 2);
        if (!b) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = b;
        cap *= 2;
    }
    fclose(f);
    if (buf)
        buf[n] = 0; /* n < cap: a NUL after the bytes, for strstr (not counted) */
    *len = n;
    return buf;
}

char *ptt_tempdir(void)
{
    const char *base = getenv("TMPDIR");
    char tmpl[512];
    snprintf(tmpl, sizeof tmpl, "%s/perftramp-test-XXXXXX", base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    return d ? strdup(d) : NULL;
}

void ptt_rmdir(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d))) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char p[1024];
            snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
            unlink(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

int ptt_mapped(const char *suffix, char perms[5])
{
    FILE *f = fopen("/proc/self/maps", "r");
    if (!f)
        return 0;
    char line[1024];
    int found = 0;
    size_t sl = strlen(suffix);
    while (fgets(line, sizeof line, f)) {
        size_t n = strlen(line);
        while (n && (line[n - 1] == '\n' || line[n - 1] == ' '))
            line[--n] = 0;
        if (n >= sl && !strcmp(line + n - sl, suffix)) {
            /* an executable mapping of it, if any: a jitdump's file is
             * also mapped writable, where its writer copies records */
            char p[5] = "";
            sscanf(line, "%*s %4s", p);
            if (perms && (!found || p[2] == 'x'))
                memcpy(perms, p, sizeof p);
            found = 1;
            if (p[2] == 'x')
                break;
        }
    }
    fclose(f);
    return found;
}

int ptt_fd_of(const char *path)
{
    for (int fd = 0; fd < 1024; fd++) {
        char link[64], target[1024];
        snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, target, sizeof target - 1);
        if (n < 0)
            continue;
        target[n] = 0;
        if (!strcmp(target, path))
            return fd;
    }
    return -1;
}
