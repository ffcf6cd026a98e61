/* SPDX-License-Identifier: MIT */
/* Mem layer: the directory of the ELF arenas: chosen, created and checked like the
 * perf map's place (never through a symlink, never someone else's), and
 * cleaned of the files of processes that are gone. */
#include "config.h"

#include "mem/elf_arena.h"
#include "mem/proc_start.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

int pt_elf_dir_open(struct pt_elf_dir *d, const char *dir, pid_t pid)
{
    *d = (struct pt_elf_dir){.fd = -1, .pid = pid};
    char def[64];
    bool is_default = false;
    if (!dir || !*dir)
        dir = secure_getenv("PERFTRAMP_ELF_DIR");
    if (!dir || !*dir) {
        snprintf(def, sizeof def, "/tmp/perftramp-%lu", (unsigned long)geteuid());
        if (mkdir(def, 0700) < 0 && errno != EEXIST)
            return -1;
        dir = def;
        is_default = true;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        /* O_NOFOLLOW on a symlink to a directory: ENOTDIR on Linux */
        struct stat st;
        if ((errno == ENOTDIR || errno == ELOOP) && lstat(dir, &st) == 0 && S_ISLNK(st.st_mode))
            errno = ELOOP;
        return -1;
    }
    struct stat st;
    struct statvfs vfs;
    int e = 0;
    if (fstat(fd, &st) < 0 || fstatvfs(fd, &vfs) < 0)
        e = errno;
    else if (st.st_uid != geteuid() || (is_default && (st.st_mode & 077)))
        e = EPERM; /* someone else's, or (ours by default) readable by others */
    else if (vfs.f_flag & ST_NOEXEC)
        e = EACCES; /* mmap(PROT_EXEC) of its files would fail with EPERM */
    if (!e && !(d->path = strdup(dir)))
        e = ENOMEM;
    if (e) {
        close(fd);
        errno = e;
        return -1;
    }
    d->fd = fd;
    return 0;
}

void pt_elf_dir_close(struct pt_elf_dir *d)
{
    if (d->fd >= 0)
        close(d->fd);
    free(d->path);
    d->fd = -1;
    d->path = NULL;
}

void pt_elf_dir_set_pid(struct pt_elf_dir *d, pid_t pid)
{
    d->pid = pid;
    d->next_n = 0;
}

/* perftramp-<pid>-<n>.so -> pid, or 0 for any other name. */
static pid_t pid_of(const char *name)
{
    long pid;
    unsigned n;
    int end = 0;
    if (sscanf(name, "perftramp-%ld-%u.so%n", &pid, &n, &end) != 2 || end == 0 || name[end] || pid <= 0)
        return 0;
    return (pid_t)pid;
}

/* Whether a file of `pid`'s name, changed last as `st` says, was left by
 * a process that had that pid before the one that has it now: it was
 * last changed before that one started (mem/proc_start.h).  False when
 * /proc cannot say: the file is kept. */
static bool left_before(pid_t pid, const struct stat *st)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    int64_t start = pt_proc_start_ns(path);
    int64_t m = (int64_t)st->st_mtim.tv_sec * 1000000000 + st->st_mtim.tv_nsec;
    int64_t c = (int64_t)st->st_ctim.tv_sec * 1000000000 + st->st_ctim.tv_nsec;
    return start != 0 && (m > c ? m : c) < start - PT_PROC_START_SLACK_NS;
}

int pt_elf_dir_clean(int dirfd)
{
    int fd = dup(dirfd); /* fdopendir owns and closes it */
    if (fd < 0)
        return -1;
    DIR *dir = fdopendir(fd);
    if (!dir) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    rewinddir(dir);
    int removed = 0;
    struct dirent *ent;
    while ((ent = readdir(dir))) {
        pid_t pid = pid_of(ent->d_name);
        struct stat st;
        if (!pid || fstatat(dirfd, ent->d_name, &st, AT_SYMLINK_NOFOLLOW) < 0)
            continue;
        if (!S_ISREG(st.st_mode) || st.st_uid != geteuid())
            continue;
        if ((kill(pid, 0) == 0 || errno != ESRCH) && !left_before(pid, &st))
            continue; /* alive (or someone else's process: EPERM), and the file may be its */
        if (unlinkat(dirfd, ent->d_name, 0) == 0)
            removed++;
    }
    closedir(dir);
    return removed;
}
