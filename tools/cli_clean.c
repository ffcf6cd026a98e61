/* SPDX-License-Identifier: MIT */
/* perftramp clean [DIR]: removes the ELF arena files (PERFTRAMP_ELF) of
 * processes that no longer exist.  The files stay after a process exits
 * because perf reads them at report time; run this once the profiles are
 * reported (perftramp_open with PERFTRAMP_ELF does the same). */
#include "config.h"

#include "cli.h"

#include "mem/elf_arena.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int cli_clean_main(int argc, char **argv)
{
    if (argc > 2 || (argc == 2 && argv[1][0] == '-')) {
        fprintf(stderr, "usage: perftramp clean [DIR]\n");
        return CLI_USAGE;
    }
    char def[64];
    const char *dir = argc == 2 ? argv[1] : secure_getenv("PERFTRAMP_ELF_DIR");
    if (!dir || !*dir) {
        snprintf(def, sizeof def, "/tmp/perftramp-%lu", (unsigned long)geteuid());
        dir = def;
    }
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) {
        if (errno == ENOENT && argc < 2) {
            printf("perftramp clean: %s: no such directory, nothing to remove\n", dir);
            return CLI_OK;
        }
        fprintf(stderr, "perftramp clean: %s: %s\n", dir, strerror(errno));
        return CLI_USAGE;
    }
    int n = pt_elf_dir_clean(fd);
    int e = errno;
    close(fd);
    if (n < 0) {
        fprintf(stderr, "perftramp clean: %s: %s\n", dir, strerror(e));
        return CLI_USAGE;
    }
    printf("perftramp clean: removed %d file%s of processes that are gone from %s\n", n, n == 1 ? "" : "s", dir);
    return CLI_OK;
}
