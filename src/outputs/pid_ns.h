/* SPDX-License-Identifier: MIT */
/* Outputs layer: the pid a profiler outside this process's pid namespace
 * knows it by (docs/perf.md, "Containers"). */
#ifndef PT_OUTPUTS_PID_NS_H
#define PT_OUTPUTS_PID_NS_H

#include <sys/types.h>

/* The first NSpid field of a /proc status file (`status_path`, e.g.
 * "/proc/self/status"): this process's id in the pid namespace of the
 * /proc mount, when that is an ancestor of its own.  0 when the line
 * has one field (no outer namespace is visible), is absent (kernels
 * before 4.1) or the file cannot be read. */
pid_t pt_outer_pid(const char *status_path);

#endif
