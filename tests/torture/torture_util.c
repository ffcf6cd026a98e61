/* SPDX-License-Identifier: MIT */
/* Helpers shared by the torture suites. */
#define _GNU_SOURCE
#include "torture.h"

#include <check.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

/* noinline + distinct constants: the result names the target reached. */
__attribute__((noinline)) static long target0(long a, long b) { return a * 3 + b + 1000; }
__attribute__((noinline)) static long target1(long a, long b) { return a * 5 - b + 2000; }
__attribute__((noinline)) static long target2(long a, long b) { return a * 7 + b * 2 + 3000; }
__attribute__((noinline)) static long target3(long a, long b) { return a * 11 - b * 3 + 4000; }

tt_fn tt_target(unsigned k)
{
    static const tt_fn targets[4] = {target0, target1, target2, target3};
    return targets[k % 4];
}

long tt_expect(unsigned k, long a, long b)
{
    switch (k % 4) {
    case 0: return a * 3 + b + 1000;
    case 1: return a * 5 - b + 2000;
    case 2: return a * 7 + b * 2 + 3000;
    default: return a * 11 - b * 3 + 4000;
    }
}

char *tt_mkdtemp(void)
{
    const char *base = getenv("TMPDIR");
    char *path;
    if (!base || !*base)
        base = "/tmp";
    if (asprintf(&path, "%s/pt-torture-XXXXXX", base) < 0 || !mkdtemp(path)) {
        perror("tt_mkdtemp");
        abort();
    }
    return path;
}

static int rm_one(const char *p, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(p) < 0 ? 0 : 0;
}

void tt_rmtree(const char *dir)
{
    nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

unsigned char *tt_slurp(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return NULL;
    size_t cap = 1 << 16, n = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            close(fd);
            errno = ENOMEM;
            return NULL;
        }
        if (n == cap) {
            unsigned char *p = realloc(buf, cap * 2);
            if (!p) {
                free(buf);
                buf = NULL;
                continue;
            }
            buf = p;
            cap *= 2;
        }
        ssize_t r = read(fd, buf + n, cap - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            free(buf);
            close(fd);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    *len = n;
    return buf;
}

_Noreturn void tt_send_report(int fd, const void *r, size_t n)
{
    ssize_t w = write(fd, r, n);
    _exit(w == (ssize_t)n ? 0 : 3);
}

void tt_read_report(int fd, pid_t child, void *r, size_t n)
{
    memset(r, 0, n);
    ssize_t got = read(fd, r, n);
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %#x", status);
    ck_assert_int_eq(got, (ssize_t)n);
    close(fd);
}
