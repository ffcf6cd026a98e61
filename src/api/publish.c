/* SPDX-License-Identifier: MIT */
/* perftramp_publish: any JIT's own code, with its CFI rows as data.
 *
 * The rows become the library's own row form (struct pt_cfi_row, the
 * form the architecture tables are turned into) and go through the same
 * serializer (emit/eh_frame.h pt_cfi_rows_program).  Each region gets
 *   - an in-process .eh_frame with ABSOLUTE 8-byte FDE pointers
 *     (DW_EH_PE_absptr): the code may sit anywhere, far beyond the +-2 GiB
 *     a pcrel|sdata4 pointer from the heap reaches;
 *   - a jitdump UNWINDING_INFO payload in genelf's layout (pcrel, relative
 *     to the synthesized ELF, so wherever perf puts it);
 *   - where the in-process unwinder reads Arm EHABI tables (the table's
 *     .ehabi), the EHABI regions of the same rows: rows EHABI cannot say
 *     are refused (EINVAL) like a bad row.
 * Everything is validated and built before the lock is taken: a bad row
 * or a failed allocation leaves nothing half-published. */
#include "api/context.h"
#include "api/sized.h"
#include "emit/eh_frame.h"
#include "emit/ehabi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

_Static_assert(PT_SIZED_NO_TAIL(struct perftramp_code, reserved), "struct perftramp_code must end with its last field");
static const size_t pt_code_size_0_2 = PT_SIZED_END(struct perftramp_code, reserved);

/* The user's rows as the library's own; -1 with errno EINVAL. */
static int convert_rows(const struct pt_arch *a, const struct perftramp_code *c, struct pt_cfi_row *out)
{
    static const uint8_t ops[] = {
        [PERFTRAMP_CFI_DEF_CFA] = PT_CFI_DEF_CFA,       [PERFTRAMP_CFI_DEF_CFA_REGISTER] = PT_CFI_DEF_CFA_REGISTER,
        [PERFTRAMP_CFI_DEF_CFA_OFFSET] = PT_CFI_DEF_CFA_OFFSET, [PERFTRAMP_CFI_OFFSET] = PT_CFI_OFFSET,
        [PERFTRAMP_CFI_RESTORE] = PT_CFI_RESTORE,       [PERFTRAMP_CFI_SAME_VALUE] = PT_CFI_SAME_VALUE,
        [PERFTRAMP_CFI_UNDEFINED] = PT_CFI_UNDEFINED,
    };
    unsigned nregs = a->dwarf_regs; /* the table's: never 0 (pt_arch_check) */
    uint32_t prev = 0;
    for (size_t i = 0; i < c->n_cfi; i++) {
        const struct perftramp_cfi *r = &c->cfi[i];
        bool known_op = r->op > 0 && r->op < sizeof ops && ops[r->op];
        if (!known_op || r->reg >= nregs || r->offset >= c->size || r->offset < prev) {
            errno = EINVAL;
            return -1;
        }
        prev = r->offset;
        out[i] = (struct pt_cfi_row){.at = r->offset, .cfi = {.op = ops[r->op], .reg = r->reg, .offset = r->value}};
    }
    return 0;
}

void pt_region_tramp(const struct pt_region *r, struct pt_tramp *t)
{
    *t = (struct pt_tramp){.addr = r->addr, .code = r->code, .size = r->size, .name = r->name, .file = r->file,
                           .line = r->line, .unwind = r->jd_blob, .unwind_len = r->jd_blob_len,
                           .eh_frame_size = r->jd_eh_size};
}

int pt_region_gdb_add(struct perftramp *pt, struct pt_region *r)
{
    const struct pt_gdb_code c = {.addr = r->addr, .size = r->size, .name = r->name, .eh = r->eh, .eh_len = r->eh_len};
    return pt_gdb_code_add(pt->gdb, &c, &r->gdb_handle);
}

static void region_free(struct pt_region *r)
{
    free(r->name);
    free(r->file);
    free(r->code);
    free(r->eh);
    free(r->jd_blob);
    free(r->ehabi);
}

void pt_regions_free(struct perftramp *pt)
{
    for (size_t k = 0; k < pt->n_regions; k++) {
        region_free(pt->regions[k]);
        free(pt->regions[k]);
    }
    free(pt->regions);
    pt->regions = NULL;
    pt->n_regions = pt->cap_regions = 0;
}

/* Builds everything a region needs, outside the lock. */
static int region_build(const struct pt_arch *a, const struct perftramp_code *c, struct pt_region *g)
{
    memset(g, 0, sizeof *g);
    struct pt_cfi_row *rows = malloc((c->n_cfi ? c->n_cfi : 1) * sizeof *rows);
    if (!rows) {
        errno = ENOMEM;
        return -1;
    }
    struct pt_buf prog, eh, jd;
    pt_buf_init(&prog, a->big_endian);
    pt_buf_init(&eh, a->big_endian);
    pt_buf_init(&jd, a->big_endian);
    int e = 0;
    if (convert_rows(a, c, rows) < 0 || pt_cfi_rows_program(&prog, a, rows, c->n_cfi, c->size) < 0) {
        e = errno ? errno : EINVAL;
        goto out;
    }
    if (prog.failed) {
        e = ENOMEM;
        goto out;
    }
    struct pt_ehabi_region regions[PT_EHABI_MAX_REGIONS];
    size_t n_regions = 0;
    if (a->ehabi && pt_ehabi_regions(a, rows, c->n_cfi, c->size, regions, PT_EHABI_MAX_REGIONS, &n_regions, NULL) < 0) {
        e = EINVAL;
        goto out;
    }
    size_t cie = pt_eh_cie_enc(&eh, a, DW_EH_PE_absptr);
    pt_eh_fde_abs(&eh, a, cie, (uint64_t)(uintptr_t)c->addr, c->size, prog.data, prog.len);
    pt_eh_terminator(&eh);
    if (eh.failed || pt_eh_jitdump_blob_prog(&jd, a, c->size, prog.data, prog.len, &g->jd_eh_size) < 0) {
        e = ENOMEM;
        goto out;
    }
    g->addr = (uintptr_t)c->addr;
    g->size = c->size;
    g->line = c->file ? c->line : 0;
    g->name = strdup(c->name);
    g->file = c->file && c->line ? strdup(c->file) : NULL;
    g->code = malloc(c->size);
    g->eh = malloc(eh.len);
    g->jd_blob = malloc(jd.len);
    g->ehabi = n_regions ? malloc(n_regions * sizeof *g->ehabi) : NULL;
    if (!g->name || (c->file && c->line && !g->file) || !g->code || !g->eh || !g->jd_blob ||
        (n_regions && !g->ehabi)) {
        region_free(g);
        e = ENOMEM;
        goto out;
    }
    memcpy(g->code, c->addr, c->size); /* the bytes as published: jitdump copies them now */
    memcpy(g->eh, eh.data, eh.len);
    g->eh_len = eh.len;
    memcpy(g->jd_blob, jd.data, jd.len);
    g->jd_blob_len = jd.len;
    if (n_regions)
        memcpy(g->ehabi, regions, n_regions * sizeof *g->ehabi);
    g->n_ehabi = n_regions;
out:
    free(rows);
    pt_buf_free(&prog);
    pt_buf_free(&eh);
    pt_buf_free(&jd);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

/* First region whose address is >= addr. */
static size_t region_lower_bound(const struct perftramp *pt, uintptr_t addr)
{
    size_t lo = 0, hi = pt->n_regions;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (pt->regions[mid]->addr < addr)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static bool overlaps(const struct perftramp *pt, uintptr_t addr, size_t size, size_t at)
{
    if (at < pt->n_regions && pt->regions[at]->addr < addr + size)
        return true;
    if (at > 0 && pt->regions[at - 1]->addr + pt->regions[at - 1]->size > addr)
        return true;
    for (size_t k = 0; k < pt->slots.n_arenas; k++) {
        const struct pt_arena *a = pt->slots.arenas[k];
        if (a->x < addr + size && addr < a->x + a->bytes)
            return true;
    }
    return false;
}

int perftramp_publish_sized(perftramp *pt, const struct perftramp_code *code, size_t code_size)
{
    struct perftramp_code c;
    if (!pt || !code || pt_sized_read(&c, sizeof c, code, code_size, pt_code_size_0_2) < 0) {
        errno = EINVAL;
        return -1;
    }
    if (!c.addr || !c.size || !c.name || c.reserved || (c.n_cfi && !c.cfi) ||
        (uintptr_t)c.addr + c.size < (uintptr_t)c.addr) {
        errno = EINVAL;
        return -1;
    }
    struct pt_region *r = malloc(sizeof *r);
    if (!r) {
        errno = ENOMEM;
        return -1;
    }
    if (region_build(pt->arch, &c, r) < 0) {
        int e = errno;
        free(r);
        errno = e;
        return -1;
    }
    pthread_mutex_lock(&pt->lock);
    size_t at = region_lower_bound(pt, r->addr);
    int e = 0;
    if (overlaps(pt, r->addr, r->size, at)) {
        e = EEXIST;
    } else if (pt->n_regions == pt->cap_regions) {
        size_t cap = pt->cap_regions ? 2 * pt->cap_regions : 16;
        struct pt_region **p = realloc(pt->regions, cap * sizeof *p);
        if (!p)
            e = ENOMEM;
        else
            pt->regions = p, pt->cap_regions = cap;
    }
    if (e) {
        pthread_mutex_unlock(&pt->lock);
        region_free(r);
        free(r);
        errno = e;
        return -1;
    }
    memmove(&pt->regions[at + 1], &pt->regions[at], (pt->n_regions - at) * sizeof *pt->regions);
    pt->regions[at] = r;
    pt->n_regions++;
    /* every output has it before we return: code may run (and throw) then */
    struct pt_tramp t;
    pt_region_tramp(r, &t);
    pt_outputs_code_added(pt, r, &t);
    pthread_mutex_unlock(&pt->lock);
    return 0;
}

/* The function behind the macro's name reads the struct as 0.2 defined it. */
int(perftramp_publish)(perftramp *pt, const struct perftramp_code *code)
{
    return perftramp_publish_sized(pt, code, pt_code_size_0_2);
}

int perftramp_unpublish(perftramp *pt, const void *addr)
{
    if (!pt || !addr) {
        errno = EINVAL;
        return -1;
    }
    pthread_mutex_lock(&pt->lock);
    size_t at = region_lower_bound(pt, (uintptr_t)addr);
    if (at == pt->n_regions || pt->regions[at]->addr != (uintptr_t)addr) {
        pthread_mutex_unlock(&pt->lock);
        errno = EINVAL;
        return -1;
    }
    struct pt_region *r = pt->regions[at];
    pt_outputs_code_removed(pt, r);
    memmove(&pt->regions[at], &pt->regions[at + 1], (pt->n_regions - at - 1) * sizeof *pt->regions);
    pt->n_regions--;
    pthread_mutex_unlock(&pt->lock);
    region_free(r);
    free(r);
    return 0;
}
