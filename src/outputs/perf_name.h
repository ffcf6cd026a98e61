/* SPDX-License-Identifier: MIT */
/* The name policy of the perf outputs: what perf shows for a trampoline.
 * perf map lines end at '\n', and perf script/report print names one per
 * line, so control bytes must never reach them raw. */
#ifndef PERFTRAMP_PERF_NAME_H
#define PERFTRAMP_PERF_NAME_H

#include <stddef.h>
#include <stdint.h>

/* Longest name written, in bytes, after escaping.  Longer names are cut
 * (on a UTF-8 character boundary) and end with PT_PERF_NAME_CUT. */
#define PT_PERF_NAME_MAX 4096
#define PT_PERF_NAME_CUT "..."

/* Writes `name` to dst (room for PT_PERF_NAME_MAX + 1 bytes) with every
 * C0 control byte and DEL written as \xNN (so "\n" becomes the four
 * characters \x0a); other bytes, UTF-8 included, unchanged.  Returns the
 * length (NUL not counted). */
size_t pt_perf_name(char *dst, const char *name);

/* The name every output shows for a trampoline wrapped with an empty
 * name: "[anonymous@0x<address>]".  Never blank (a blank perf map name
 * is a line perf cannot use, and gdb shows "??"), unique per live
 * trampoline (two anonymous functions stay apart in a profile), bracketed
 * like perf's own [unknown] so no one mistakes it for a real name.
 * Writes it to dst (PT_ANON_NAME_SIZE bytes) and returns dst. */
#define PT_ANON_NAME_SIZE sizeof "[anonymous@0x0123456789abcdef]"
char *pt_anon_name(char *dst, uintptr_t addr);

#endif
