/* SPDX-License-Identifier: MIT */
/* Judges a PERFTRAMP_ELF arena file (<dir>/perftramp-<pid>-<n>.so, layout
 * emit/elf_so.h) from untrusted bytes, as `perftramp check` reports it:
 * complete (headers, .text, .eh_frame, .eh_frame_hdr, .symtab and
 * .strtab whole and consistent: what perf reads), incomplete (its process
 * stopped while creating it: the file was allocated, then part of the
 * headers or none were written; perf never mapped it, so no sample can
 * land in it), or invalid (anything else).  Every read is bounds checked.
 * Formats: System V gABI "Object Files", LSB 5.0 "Exception Frames". */
#ifndef PERFTRAMP_ELF_ARENA_CHECK_H
#define PERFTRAMP_ELF_ARENA_CHECK_H

#include <stddef.h>
#include <stdint.h>

enum pt_arena_state { PT_ARENA_COMPLETE, PT_ARENA_INCOMPLETE, PT_ARENA_INVALID };

struct pt_arena_report {
    enum pt_arena_state state;
    uint16_t machine;  /* e_machine */
    uint64_t slots;    /* rows of .eh_frame_hdr: one per slot */
    uint64_t symbols;  /* named .symtab entries (the null one and unnamed slots aside) */
    char why[240];     /* incomplete or invalid: what */
};

const char *pt_arena_state_name(enum pt_arena_state s);

void pt_elf_arena_check(const uint8_t *data, size_t len, struct pt_arena_report *r);

#endif
