/* SPDX-License-Identifier: MIT */
/* Mem layer: when a process started (mem/proc_start.h). */
#include "mem/proc_start.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int64_t pt_proc_start_ns(const char *stat_path)
{
    FILE *f = fopen(stat_path, "re");
    if (!f)
        return 0;
    char buf[1024];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* field 22, starttime, in clock ticks since boot; the command name
     * (field 2) may hold spaces and parentheses, so count from the last
     * ')' (proc(5)) */
    char *p = strrchr(buf, ')');
    for (int field = 2; p && field < 22; field++)
        p = strchr(p + 1, ' ');
    long hz = sysconf(_SC_CLK_TCK);
    if (!p || hz <= 0)
        return 0;
    unsigned long long ticks = strtoull(p + 1, NULL, 10);
    struct timespec real, boot;
    if (clock_gettime(CLOCK_REALTIME, &real) < 0 || clock_gettime(CLOCK_BOOTTIME, &boot) < 0)
        return 0;
    int64_t since_boot_ns = (int64_t)(ticks / (unsigned long long)hz) * 1000000000 +
                            (int64_t)(ticks % (unsigned long long)hz) * (1000000000 / hz);
    int64_t boot_ns = (int64_t)boot.tv_sec * 1000000000 + boot.tv_nsec;
    return (int64_t)real.tv_sec * 1000000000 + real.tv_nsec - (boot_ns - since_boot_ns);
}
