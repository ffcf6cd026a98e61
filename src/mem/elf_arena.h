/* SPDX-License-Identifier: MIT */
/* Code memory in file-backed ELF arenas (PERFTRAMP_ELF): each arena is a
 * shared object <dir>/perftramp-<pid>-<n>.so (layout: emit/elf_so.h),
 * executed from a file-backed mapping, so perf reads its names and unwind
 * info like any library's: no -k 1, no jitdump, no perf inject, and a perf
 * that attaches later sees it too.
 *
 * The executable view is mapped from file offset 0 and the writable view
 * of the same pages ABOVE it: perf takes the load base from the lowest
 * mapping of a file it knows about, and a writable view below silently
 * hides the unwind info.  A third view, above both, holds the section
 * headers and the name tables, so naming a trampoline is a few stores,
 * not system calls.  Headers, the build-id and .eh_frame_hdr are
 * written (pwrite) before the executable mmap: the kernel reads the
 * build-id then.  Files stay after exit (perf reads them at report time);
 * pt_elf_dir_clean removes those of processes that are gone. */
#ifndef PERFTRAMP_MEM_ELF_ARENA_H
#define PERFTRAMP_MEM_ELF_ARENA_H

#include "emit/elf_so.h"
#include "mem/codemem.h"

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* The directory the arenas go to, opened once per context. */
struct pt_elf_dir {
    int fd;          /* O_DIRECTORY|O_NOFOLLOW, checked: ours, a directory */
    char *path;
    pid_t pid;       /* the file names' pid */
    unsigned next_n; /* the next file's <n> */
};

/* Opens `dir` (NULL: $PERFTRAMP_ELF_DIR, else /tmp/perftramp-<euid>,
 * created 0700).  The directory must be a directory (not a symlink) owned
 * by our effective uid, on a file system that allows exec; the default
 * one must also be private (mode 0700).  0, or -1 with errno: ELOOP (a
 * symlink), ENOTDIR, EPERM (owned by someone else, or not private), EACCES
 * (mounted noexec), ENOMEM, or the errno of mkdir/open. */
int pt_elf_dir_open(struct pt_elf_dir *d, const char *dir, pid_t pid);
void pt_elf_dir_close(struct pt_elf_dir *d);
/* A forked child names its files after itself. */
void pt_elf_dir_set_pid(struct pt_elf_dir *d, pid_t pid);

/* Removes perftramp-<pid>-<n>.so files of processes that no longer exist
 * (regular files owned by our effective uid): kill(pid, 0) says ESRCH, or
 * the process that has the pid now started after the file last changed
 * (the pid was reused).  Never a file of a live process: it changed
 * after that process started.  Returns how many were removed, or -1 with
 * errno. */
int pt_elf_dir_clean(int dirfd);

/* One open arena file. */
struct pt_elf_file {
    int fd;
    char name[64];               /* perftramp-<pid>-<n>.so, in the directory */
    struct pt_elf_so_plan plan;
    size_t n_syms;               /* symbols after the null one */
    size_t strtab_len;           /* bytes of .strtab written */
    size_t info_len, line_len;   /* bytes of .debug_info/.debug_line written */
    size_t lines_dropped;        /* slots past the DWARF rooms: no line */
    uint8_t *tail;               /* writable view of [shstr_off, file_size): section
                                  * headers, .symtab, the DWARF rooms, .strtab's room;
                                  * above the others */
    size_t tail_len;
    bool big_endian;
    bool parted;                 /* a forked child's copy: never written to the file */
};

/* A block whose bytes are the arena `g` describes, in a new file of d:
 * b->x is the executable address of the block (.text), b->elf the file.
 * 0, or -1 with errno (the file is removed again): EACCES/EPERM (exec
 * refused), ENOSPC, EFBIG, EEXIST (a planted file), ELOOP, ENOMEM... */
int pt_elf_arena_alloc(struct pt_code_block *b, struct pt_elf_dir *d, const struct pt_arch *arch,
                       const struct pt_elf_so_geometry *g);

/* Writes all n bytes at file offset `at` (retries short writes and EINTR).
 * 0, or -1 with errno (ENOSPC for a write of 0 bytes). */
int pt_elf_pwrite(int fd, const void *p, size_t n, size_t at);

extern const struct pt_code_backend pt_code_elf;

#endif
