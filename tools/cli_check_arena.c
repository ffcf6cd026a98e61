/* SPDX-License-Identifier: MIT */
/* perftramp check on a PERFTRAMP_ELF arena file (perftramp-<pid>-<n>.so):
 * complete, or incomplete because its process stopped while creating it,
 * or invalid (the rules: src/read/elf_arena_check.h). */
#include "cli.h"
#include "cli_check.h"

#include "read/elf_arena_check.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Arena files are at most a few MiB; anything past this is no arena. */
#define ARENA_MAX ((off_t)1 << 30)

bool cli_is_arena_name(const char *path)
{
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    long pid;
    unsigned n;
    int end = 0;
    return sscanf(base, "perftramp-%ld-%u.so%n", &pid, &n, &end) == 2 && end > 0 && base[end] == 0;
}

static uint8_t *slurp(const char *path, size_t *len, char *why, size_t why_len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    struct stat st;
    uint8_t *buf = NULL;
    if (fd < 0 || fstat(fd, &st) < 0) {
        snprintf(why, why_len, "%s", strerror(errno));
    } else if (!S_ISREG(st.st_mode) || st.st_size > ARENA_MAX) {
        snprintf(why, why_len, "not a regular file of at most 1 GiB");
    } else if (!(buf = malloc(st.st_size ? (size_t)st.st_size : 1))) {
        snprintf(why, why_len, "out of memory");
    } else {
        size_t got = 0;
        while (got < (size_t)st.st_size) {
            ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0)
                break;
            got += (size_t)r;
        }
        *len = got;
    }
    if (fd >= 0)
        close(fd);
    return buf;
}

int cli_check_arena(const char *path, bool json)
{
    char why[256];
    size_t len = 0;
    uint8_t *d = slurp(path, &len, why, sizeof why);
    if (!d) {
        fprintf(stderr, "perftramp check: %s: %s\n", path, why);
        if (json) {
            fputs("{\"file\":", stdout);
            cli_json_str(stdout, path);
            fputs(",\"kind\":\"elf-arena\",\"valid\":false,\"io_error\":", stdout);
            cli_json_str(stdout, why);
            fputc('}', stdout);
        }
        return CLI_USAGE;
    }
    struct pt_arena_report r;
    pt_elf_arena_check(d, len, &r);
    free(d);
    bool ok = r.state == PT_ARENA_COMPLETE;
    if (json) {
        fputs("{\"file\":", stdout);
        cli_json_str(stdout, path);
        printf(",\"kind\":\"elf-arena\",\"valid\":%s,\"state\":\"%s\",\"bytes\":%zu,\"machine\":%u,\"slots\":%" PRIu64
               ",\"named\":%" PRIu64 ",\"why\":",
               ok ? "true" : "false", pt_arena_state_name(r.state), len, r.machine, r.slots, r.symbols);
        cli_json_str(stdout, r.why);
        fputc('}', stdout);
    } else if (ok) {
        printf("%s: valid PERFTRAMP_ELF arena: ELF machine %u, %" PRIu64 " slots (.eh_frame_hdr rows), %" PRIu64
               " named in .symtab, %zu bytes\n",
               path, r.machine, r.slots, r.symbols, len);
    } else if (r.state == PT_ARENA_INCOMPLETE) {
        printf("%s: incomplete PERFTRAMP_ELF arena: %s: its process stopped while creating it, before mapping "
               "it, so perf never read it and no sample names anything in it; `perftramp clean` removes it once "
               "that process is gone\n",
               path, r.why);
    } else {
        printf("%s: invalid PERFTRAMP_ELF arena: %s\n", path, r.why);
    }
    return ok ? CLI_OK : CLI_INVALID;
}
