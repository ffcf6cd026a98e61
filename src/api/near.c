/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_NEAR_CALLS: which table each trampoline is written from.
 *
 * The host table may have a direct-call variant (src/arch/, e.g.
 * x86_64_near.c) whose call field is a relocation reaching +-2 GiB.  It is
 * used only when it lays out to the main table's size with the very same
 * CFI program: the arena's prebuilt FDEs, the jitdump unwinding blob and
 * the GDB images then describe either, and each trampoline can take the
 * variant when its target is in reach and the main table (through memory,
 * any distance) when not.  A wrong call cannot happen: the relocation is
 * checked before the bytes are written (pt_layout_reaches). */
#include "api/context.h"

#include "emit/bytebuf.h"
#include "emit/eh_frame.h"

#include <string.h>

static bool same_cfi(const struct pt_layout *a, const struct pt_layout *b)
{
    struct pt_buf pa, pb;
    pt_buf_init(&pa, a->arch->big_endian);
    pt_buf_init(&pb, b->arch->big_endian);
    bool same = pt_cfi_program(&pa, a) == 0 && pt_cfi_program(&pb, b) == 0 && !pa.failed && !pb.failed &&
                pa.len == pb.len && memcmp(pa.data, pb.data, pa.len) == 0;
    pt_buf_free(&pa);
    pt_buf_free(&pb);
    return same;
}

void pt_near_init(struct perftramp *pt, unsigned flags)
{
    pt->near = false;
    if (!(flags & PERFTRAMP_NEAR_CALLS))
        return;
    const struct pt_arch *v = pt_arch_variant_of(pt->arch, "near");
    if (!v || pt_layout_build(&pt->near_layout, v, NULL) < 0)
        return;
    pt->near = pt->near_layout.size == pt->layout.size && pt->near_layout.code_len == pt->layout.code_len &&
               same_cfi(&pt->near_layout, &pt->layout);
}

const struct pt_layout *pt_near_choose(const struct perftramp *pt, uintptr_t x, uintptr_t target)
{
    if (pt->near && pt_layout_reaches(&pt->near_layout, x, target))
        return &pt->near_layout;
    return &pt->layout;
}
