/* SPDX-License-Identifier: MIT */
/* The outputs a context feeds (the API reaches them through its table of
 * outputs, api/output_rows.c).  Each is a leaf: it owns its state, learns
 * what it needs through these hooks, and never calls back into the core.
 * The core calls every hook with its lock held.
 *
 * Return values: 0 on success; -1 with errno on a failure (the core then
 * disables that output, or fails perftramp_open for an *_open hook);
 * PT_OUT_REFUSED from an *_open or *_reopen hook whose file was refused
 * (a symlink, FIFO, directory or another user's file where ours belongs):
 * errno says why, the state exists but writes nothing, and the core
 * disables the output without failing the context. */
#ifndef PERFTRAMP_OUTPUTS_H
#define PERFTRAMP_OUTPUTS_H

#include "mem/arena.h"

#include <sys/types.h>

#define PT_OUT_REFUSED 1

/* What the outputs learn about one new trampoline. */
struct pt_tramp {
    uintptr_t addr;        /* executable address */
    const uint8_t *code;   /* its bytes (size of them) */
    size_t size;
    const char *name;
    /* perftramp_wrap_at / published code: the source position for a
     * jitdump DEBUG_INFO record (and, where that output exists, an ELF
     * arena's .debug_line); NULL/0 for none */
    const char *file;
    unsigned line;
    /* published code: its own .eh_frame + .eh_frame_hdr in genelf layout
     * (emit/eh_frame.h pt_eh_jitdump_blob_prog); NULL: the table's */
    const uint8_t *unwind;
    size_t unwind_len, eh_frame_size;
};

/* outputs/perfmap.c: /tmp/perf-<pid>.map */
struct pt_perfmap;
int pt_perfmap_open(struct pt_perfmap **out, pid_t pid);
int pt_perfmap_add(struct pt_perfmap *pm, const struct pt_tramp *t);
/* In a forked child: let go of the parent's file, open the child's. */
int pt_perfmap_reopen(struct pt_perfmap *pm, pid_t pid);
int pt_perfmap_close(struct pt_perfmap *pm);

/* outputs/jitdump.c: <dir>/jit-<pid>.dump; dir NULL: /tmp */
struct pt_jitdump;
/* slot_unwind false: trampolines (not published code) get no
 * UNWINDING_INFO record: their slots are packed closer than the
 * [code, ALIGN8(size) + mapped_size) range perf would map for it */
int pt_jitdump_open(struct pt_jitdump **out, const struct pt_layout *layout, const char *dir, pid_t pid,
                    bool slot_unwind);
int pt_jitdump_add(struct pt_jitdump *jd, const struct pt_tramp *t);
int pt_jitdump_reopen(struct pt_jitdump *jd, pid_t pid);
/* code_index of the next LOAD: a dump enabled again continues the count,
 * so perf inject never reuses a jitted-<pid>-<index>.so name */
uint64_t pt_jitdump_next_index(const struct pt_jitdump *jd);
void pt_jitdump_set_next_index(struct pt_jitdump *jd, uint64_t index);
/* write_close false: a disabled dump gets no CLOSE record */
int pt_jitdump_close(struct pt_jitdump *jd, bool write_close);

/* outputs/unwind_register.c: the in-process unwinders, one registration per
 * arena (its .eh_frame covers every slot) */
struct pt_unwind;
int pt_unwind_open(struct pt_unwind **out);
int pt_unwind_arena_added(struct pt_unwind *u, const struct pt_slots *s, struct pt_arena *a);
void pt_unwind_arena_removed(struct pt_unwind *u, struct pt_arena *a);
void pt_unwind_close(struct pt_unwind *u); /* deregisters what is left, in reverse order */
/* Published code: a zero-terminated .eh_frame of absolute-pointer FDEs
 * (any address), at `eh`, kept alive by the caller until removed, and
 * where libgcc reads EHABI tables, the code's EHABI regions (emit/ehabi.h).
 * *handle is set (and cleared by removal or pt_unwind_close). */
struct pt_unwind_code {
    const uint8_t *eh;
    size_t eh_len;
    uintptr_t addr;
    size_t size;
    const struct pt_ehabi_region *ehabi;
    size_t n_ehabi;
    bool big_endian;
};
int pt_unwind_code_add(struct pt_unwind *u, const struct pt_unwind_code *c, void **handle);
void pt_unwind_code_removed(struct pt_unwind *u, void **handle);

/* outputs/unwind_ehabi.c: where libgcc reads Arm EHABI tables (32-bit
 * Arm), the ranges of code its __gnu_Unwind_Find_exidx answers for.  All
 * lock-free for readers (pt_ehabi_find), safe in signal handlers. */
struct pt_ehabi_region;
/* 0 when libgcc asks this library's __gnu_Unwind_Find_exidx, else -1 with
 * errno ENOTSUP (no EHABI here, or libperftramp was dlopen'ed and glibc's
 * definition is the one libgcc binds to). */
int pt_ehabi_usable(void);
/* Registers [lo, hi) with its index table of `count` entries: an id >= 0,
 * or -1 with errno (ENOSPC: 65,536 ranges registered; ENOMEM). */
int pt_ehabi_add(uintptr_t lo, uintptr_t hi, const void *index, size_t count);
void pt_ehabi_remove(int id);
/* The index table covering pc and its entry count, or 0. */
uintptr_t pt_ehabi_find(uintptr_t pc, int *count);
/* Tables for code (emit/ehabi.h pt_ehabi_tables) in a mapping of their own
 * within prel31 reach of it, registered for [code - PT_EHABI_SHIFT, code +
 * (count - 1) * stride + end): the 2 bytes before the code too, where
 * libgcc looks for a pc at the code's first instruction (a signal there).
 * 0, or -1 with errno (ERANGE: no memory within reach). */
struct pt_ehabi_map {
    void *mem;
    size_t len;
    int id; /* -1: nothing registered */
};
int pt_ehabi_publish(struct pt_ehabi_map *m, const struct pt_ehabi_region *r, size_t n_regions, uintptr_t code,
                     size_t count, size_t stride, size_t end, bool big_endian);
void pt_ehabi_unpublish(struct pt_ehabi_map *m);

/* outputs/gdb_jit.c: the GDB JIT interface, entries per chunk of slots */
struct pt_gdb;
int pt_gdb_open(struct pt_gdb **out, const struct pt_slots *s);
int pt_gdb_add(struct pt_gdb *g, struct pt_arena *a, size_t index);
int pt_gdb_remove(struct pt_gdb *g, struct pt_arena *a, size_t index);
void pt_gdb_arena_removed(struct pt_gdb *g, struct pt_arena *a);
void pt_gdb_close(struct pt_gdb *g); /* after pt_gdb_arena_removed for every arena; drops published code */
/* Published code: entries batch up to PT_GDB_BATCH_CODES regions each (one
 * .text per region, one .eh_frame for all).  `eh` is a zero-terminated
 * .eh_frame of absolute-pointer FDEs; name and eh stay alive until removed.
 * *handle is set, and cleared by removal or pt_gdb_close. */
struct pt_gdb_code {
    uintptr_t addr;
    size_t size;
    const char *name;
    const uint8_t *eh;
    size_t eh_len;
};
int pt_gdb_code_add(struct pt_gdb *g, const struct pt_gdb_code *c, void **handle);
void pt_gdb_code_removed(struct pt_gdb *g, void **handle);

/* outputs/elf_symbols.c: PERFTRAMP_ELF, the name of slot `slot` of a
 * file-backed ELF arena (mem/elf_arena.h) in its .symtab. */
struct pt_elf_file;
int pt_elf_symbol_add(struct pt_elf_file *f, size_t slot, size_t size, const char *name);
/* outputs/elf_lines.c: PERFTRAMP_ELF, slot `slot`'s source position (its
 * first `size` bytes are `file`:`line`) in the arena's .debug_info and
 * .debug_line.  Past the file's fixed room the slot gets no line and 0
 * is returned (f->lines_dropped counts it).  0, or -1 with errno. */
int pt_elf_line_add(struct pt_elf_file *f, size_t slot, size_t size, const char *file, unsigned line);

#endif
