/* SPDX-License-Identifier: MIT */
/* The code mappings perf builds from a dump's LOADs, applied in time order
 * as perf applies them.  perf inject turns each LOAD into an MMAP2 event
 * stamped with the LOAD's timestamp, covering [code_addr, code_addr +
 * ALIGN8(code_size) + mapped_size) (just code_size without unwinding info);
 * perf report sorts events by time and inserts each map over the ones it
 * overlaps (maps__fixup_overlap_and_insert): the later map wins, the
 * earlier survive around it.  So a LOAD whose code lands on older code is
 * the runtime reusing freed memory, and perf names samples after it
 * correctly.  What goes wrong is narrower:
 *
 *  - a LOAD's mapped tail (its .eh_frame area past the code) lands on code
 *    of an older LOAD that was not replaced: samples in that code resolve
 *    to the newer LOAD's .so, past its symbol (mis-named) -- if that older
 *    code still runs, which the dump cannot tell;
 *  - a LOAD's code lands inside an older LOAD's mapped tail, the older
 *    code itself untouched: the older code keeps its name, but its
 *    .eh_frame now reads through the newer map (no DWARF unwinding there).
 *
 * Memory is bounded: at most PT_JD_MAPS_MAX_LIVE live mappings and a
 * reorder window of PT_JD_MAPS_WINDOW LOADs for timestamps out of order. */
#ifndef PERFTRAMP_JITDUMP_MAPS_H
#define PERFTRAMP_JITDUMP_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PT_JD_MAPS_MAX_LIVE (1u << 17)
#define PT_JD_MAPS_WINDOW 4096u

struct pt_jd_map_load {
    uint64_t offset, record;      /* where the LOAD is in the file */
    uint64_t timestamp;
    uint64_t code_addr, code_end; /* [code_addr, code_end) */
    uint64_t map_end;             /* end of what perf maps (>= code_end) */
    uint64_t seq;                 /* file order, set by pt_jd_maps_add */
};

enum pt_jd_overlap {
    PT_JD_OVERLAP_TAIL_ON_CODE,   /* later's tail covers earlier's code */
    PT_JD_OVERLAP_CODE_ON_TAIL,   /* later's code lands in earlier's tail */
};

/* An overlap, reported once per shadowed LOAD when its fate is known:
 * `freed` when a later LOAD's code replaced the shadowed code (the runtime
 * had freed it, most likely before the shadowing), otherwise at the end
 * (the dump never says the shadowed code died).  `count` shadowing LOADs,
 * the first of them at later_offset. */
struct pt_jd_shadow {
    enum pt_jd_overlap kind;
    const struct pt_jd_map_load *earlier; /* the shadowed LOAD */
    uint64_t later_offset, later_record;
    uint64_t lo, hi;                      /* the first shadowed range */
    uint32_t count;
    bool freed;
};
typedef void (*pt_jd_overlap_fn)(void *arg, const struct pt_jd_shadow *sh);

struct pt_jd_maps_stats {
    size_t applied;      /* LOADs applied */
    size_t replaced;     /* LOADs whose code replaced live code (address reuse) */
    size_t out_of_order; /* LOADs older than one already applied (window exceeded): applied late */
    bool full;           /* the live-mapping bound was hit: later LOADs not checked */
};

struct pt_jd_maps;
struct pt_jd_maps *pt_jd_maps_new(void);
void pt_jd_maps_free(struct pt_jd_maps *m);
/* Queues a LOAD; LOADs leave the window in timestamp order (file order
 * for equal timestamps) and are applied, overlaps going to fn. */
void pt_jd_maps_add(struct pt_jd_maps *m, const struct pt_jd_map_load *l, pt_jd_overlap_fn fn, void *arg);
/* Applies what is left in the window, then reports the shadows of the
 * LOADs still live. */
void pt_jd_maps_flush(struct pt_jd_maps *m, pt_jd_overlap_fn fn, void *arg);
void pt_jd_maps_get_stats(const struct pt_jd_maps *m, struct pt_jd_maps_stats *out);

#endif
