/* SPDX-License-Identifier: MIT */
/* Outputs layer: reads the NSpid line of /proc/<pid>/status (proc(5),
 * Linux 4.1+: "NSpid: outer ... inner", one id per pid namespace from the
 * one of the /proc mount down to the process's own). */
#include "outputs/pid_ns.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

pid_t pt_outer_pid(const char *status_path)
{
    FILE *f = fopen(status_path, "re");
    if (!f)
        return 0;
    char line[256];
    pid_t outer = 0;
    while (fgets(line, sizeof line, f)) {
        if (strncmp(line, "NSpid:", 6) != 0)
            continue;
        char *p = line + 6, *end;
        long first = strtol(p, &end, 10);
        if (end == p || first <= 0)
            break;
        p = end;
        (void)strtol(p, &end, 10);
        if (end != p) /* a second field: an outer namespace is visible */
            outer = (pid_t)first;
        break;
    }
    fclose(f);
    return outer;
}
