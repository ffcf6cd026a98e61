/* SPDX-License-Identifier: MIT */
/* Outputs layer, PERFTRAMP_UNWIND: hands each arena's .eh_frame (built by arena.c at the
 * arena's end, so pcrel|sdata4 pointers reach the code) to every in-process
 * unwinder the process has:
 *
 *  - libgcc: __register_frame takes a whole zero-terminated .eh_frame: ONE
 *    object per arena, covering all of its slots.  GCC 12's libgcc walks
 *    its registered objects linearly on every unwind step, so per-slot
 *    objects would make every exception slower as trampolines accumulate.
 *    (libgcc/unwind-dw2-fde.c)
 *  - LLVM libunwind: __unw_add_dynamic_eh_frame_section (whole section) when
 *    present, else __unw_add_dynamic_fde, one FDE per call.  Its
 *    __register_frame also takes ONE FDE, so when the __register_frame we
 *    see belongs to LLVM's library we do not feed it a section.
 *    (libunwind/src/libunwind.cpp)
 *  - nongnu libunwind: _U_dyn_register with a UNW_INFO_FORMAT_REMOTE_TABLE
 *    entry: a sorted {start_ip_offset, fde_offset} int32 table relative to
 *    segbase, the layout of .eh_frame_hdr's search table.
 *    (libunwind-dynamic.h; src/dwarf/Gfind_proc_info-lsb.c)
 *
 * Everything but libgcc is found with dlsym: no hard dependency.  libgcc is
 * referenced directly so that libgcc_s is loaded with us: glibc's
 * backtrace(3) dlopens it later and must find our objects already there.
 * Deregistration runs in reverse order and only for what was registered
 * (libgcc aborts on an unknown object). */
#include "config.h"

#include "outputs/outputs.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<libunwind-dynamic.h>) && __has_include(<libunwind.h>)
#define PT_HAVE_NONGNU_HEADERS 1
#define UNW_LOCAL_ONLY
#include <libunwind.h>
#endif
#endif

/* libgcc (unwind-dw2-fde.h).  Outside glibc the reference is weak: Debian's
 * musl-gcc links GCC's libgcc_eh.a, built for glibc (its _Unwind_Find_FDE
 * calls glibc's _dl_find_object), so a strong reference would stop every musl
 * program that links perftramp from linking at all.  A weak one binds to an
 * unwinder the process does have (a libgcc_s built for musl, as Alpine's:
 * not tested here), else stays NULL: PERFTRAMP_UNWIND then fails with
 * ENOTSUP and the other outputs work (tests/musl/musl.sh). */
#ifdef __GLIBC__
extern void __register_frame(const void *begin);
extern void __deregister_frame(const void *begin);
#else
extern void __register_frame(const void *begin) __attribute__((weak));
extern void __deregister_frame(const void *begin) __attribute__((weak));
#endif

typedef void (*pt_frame_fn)(const void *);
typedef void (*pt_unw_word_fn)(uintptr_t);

enum { PT_UNW_LIBGCC = 1, PT_UNW_LLVM_SECTION = 2, PT_UNW_LLVM_FDE = 4, PT_UNW_NONGNU = 8 };

struct pt_unwind_reg {
    struct pt_arena *arena; /* NULL for published code */
    void **owner;           /* where the caller keeps this registration: cleared on removal */
    unsigned done;        /* PT_UNW_* actually registered */
    const void *eh;       /* the .eh_frame, at its executable address */
    uintptr_t *fdes;      /* LLVM per-FDE mode: the FDEs registered */
    size_t n_fdes;
#ifdef PT_HAVE_NONGNU_HEADERS
    unw_dyn_info_t dyn;
    int32_t *table;       /* pairs {start_ip_offset, fde_offset} */
#endif
};

struct pt_unwind {
    pt_frame_fn gcc_register, gcc_deregister;
    pt_unw_word_fn llvm_add_section, llvm_remove_section, llvm_add_fde, llvm_remove_fde;
#ifdef PT_HAVE_NONGNU_HEADERS
    int (*nongnu_register)(unw_dyn_info_t *);
    void (*nongnu_cancel)(unw_dyn_info_t *);
#endif
    struct pt_unwind_reg **regs; /* registration order */
    size_t n_regs, cap_regs;
};

static const void *object_of(const void *sym)
{
    Dl_info info;
    if (!sym || !dladdr(sym, &info))
        return NULL;
    return info.dli_fbase;
}

/* libgcc's pair, unless the global __register_frame is LLVM's. */
static void find_libgcc(struct pt_unwind *u, const void *llvm_object)
{
    pt_frame_fn reg = __register_frame, dereg = __deregister_frame;
    if (llvm_object && object_of((const void *)reg) == llvm_object) {
        void *h = dlopen("libgcc_s.so.1", RTLD_LAZY | RTLD_NOLOAD);
        reg = dereg = NULL;
        if (h) {
            *(void **)&reg = dlsym(h, "__register_frame");
            *(void **)&dereg = dlsym(h, "__deregister_frame");
            dlclose(h);
        }
        if (object_of((const void *)reg) == llvm_object)
            reg = dereg = NULL;
    }
    if (reg && dereg) {
        u->gcc_register = reg;
        u->gcc_deregister = dereg;
    }
}

int pt_unwind_open(struct pt_unwind **out)
{
    struct pt_unwind *u = calloc(1, sizeof *u);
    if (!u) {
        errno = ENOMEM;
        return -1;
    }
    *(void **)&u->llvm_add_fde = dlsym(RTLD_DEFAULT, "__unw_add_dynamic_fde");
    *(void **)&u->llvm_remove_fde = dlsym(RTLD_DEFAULT, "__unw_remove_dynamic_fde");
    *(void **)&u->llvm_add_section = dlsym(RTLD_DEFAULT, "__unw_add_dynamic_eh_frame_section");
    *(void **)&u->llvm_remove_section = dlsym(RTLD_DEFAULT, "__unw_remove_dynamic_eh_frame_section");
    if (!u->llvm_add_fde || !u->llvm_remove_fde)
        u->llvm_add_fde = u->llvm_remove_fde = NULL;
    if (!u->llvm_add_section || !u->llvm_remove_section)
        u->llvm_add_section = u->llvm_remove_section = NULL;
    const void *llvm_object = object_of((const void *)(u->llvm_add_fde ? u->llvm_add_fde : u->llvm_add_section));
    find_libgcc(u, llvm_object);
#ifdef PT_HAVE_NONGNU_HEADERS
    *(void **)&u->nongnu_register = dlsym(RTLD_DEFAULT, "_U_dyn_register");
    *(void **)&u->nongnu_cancel = dlsym(RTLD_DEFAULT, "_U_dyn_cancel");
    if (!u->nongnu_register || !u->nongnu_cancel)
        u->nongnu_register = NULL, u->nongnu_cancel = NULL;
#endif
    bool any = u->gcc_register || u->llvm_add_section || u->llvm_add_fde;
#ifdef PT_HAVE_NONGNU_HEADERS
    any = any || u->nongnu_register;
#endif
    if (!any) {
        free(u);
        errno = ENOTSUP; /* no unwinder we know how to feed */
        return -1;
    }
    *out = u;
    return 0;
}

/* Offsets of the FDEs in a zero-terminated .eh_frame (CIEs skipped). */
static size_t list_fdes(const uint8_t *eh, size_t len, size_t *out, size_t cap)
{
    size_t n = 0, off = 0;
    while (off + 8 <= len) {
        uint32_t length, id;
        memcpy(&length, eh + off, 4);
        if (length == 0 || length == 0xffffffffu || length > len - off - 4)
            break;
        memcpy(&id, eh + off + 4, 4);
        if (id != 0) {
            if (out && n < cap)
                out[n] = off;
            n++;
        }
        off += 4 + (size_t)length;
    }
    return n;
}

static int register_llvm_fdes(struct pt_unwind *u, struct pt_unwind_reg *r, const uint8_t *eh, size_t len)
{
    size_t n = list_fdes(eh, len, NULL, 0);
    size_t *offs = malloc((n ? n : 1) * sizeof *offs);
    r->fdes = malloc((n ? n : 1) * sizeof *r->fdes);
    if (!offs || !r->fdes) {
        free(offs);
        free(r->fdes);
        r->fdes = NULL;
        errno = ENOMEM;
        return -1;
    }
    list_fdes(eh, len, offs, n);
    for (size_t i = 0; i < n; i++) {
        r->fdes[i] = (uintptr_t)eh + offs[i];
        u->llvm_add_fde(r->fdes[i]);
    }
    r->n_fdes = n;
    free(offs);
    return 0;
}

#ifdef PT_HAVE_NONGNU_HEADERS
/* The search table of .eh_frame_hdr, relative to the arena's executable
 * address: one row per slot, already in address order. */
static int register_nongnu(const struct pt_slots *s, struct pt_unwind *u, struct pt_unwind_reg *r,
                           const uint8_t *eh, size_t len)
{
    struct pt_arena *a = r->arena;
    size_t n = list_fdes(eh, len, NULL, 0);
    size_t *offs = malloc((n ? n : 1) * sizeof *offs);
    r->table = malloc((n ? n : 1) * 2 * sizeof *r->table);
    if (!offs || !r->table || n != a->n_slots) {
        free(offs);
        free(r->table);
        r->table = NULL;
        errno = offs ? EINVAL : ENOMEM;
        return -1;
    }
    list_fdes(eh, len, offs, n);
    for (size_t i = 0; i < n; i++) {
        r->table[2 * i] = (int32_t)(i * s->stride);
        r->table[2 * i + 1] = (int32_t)(a->eh_off + offs[i]);
    }
    free(offs);
    memset(&r->dyn, 0, sizeof r->dyn);
    r->dyn.start_ip = a->x;
    r->dyn.end_ip = a->x + a->n_slots * s->stride;
    r->dyn.format = UNW_INFO_FORMAT_REMOTE_TABLE;
    r->dyn.u.rti.name_ptr = (unw_word_t)(uintptr_t)"perftramp";
    r->dyn.u.rti.segbase = a->x;
    r->dyn.u.rti.table_len = n * 2 * sizeof(int32_t) / sizeof(unw_word_t);
    r->dyn.u.rti.table_data = (unw_word_t)(uintptr_t)r->table;
    u->nongnu_register(&r->dyn);
    return 0;
}
#endif

/* A zeroed registration record, with room for it in u->regs (the caller
 * appends it once the registration succeeded).  NULL with ENOMEM. */
static struct pt_unwind_reg *new_reg(struct pt_unwind *u)
{
    if (u->n_regs == u->cap_regs) {
        size_t cap = u->cap_regs ? 2 * u->cap_regs : 8;
        struct pt_unwind_reg **p = realloc(u->regs, cap * sizeof *p);
        if (!p) {
            errno = ENOMEM;
            return NULL;
        }
        u->regs = p;
        u->cap_regs = cap;
    }
    struct pt_unwind_reg *r = calloc(1, sizeof *r);
    if (!r)
        errno = ENOMEM;
    return r;
}

int pt_unwind_arena_added(struct pt_unwind *u, const struct pt_slots *s, struct pt_arena *a)
{
    (void)s; /* only the nongnu libunwind registration needs the slot stride */
    if (!u || !a->eh_off || !a->eh_len) {
        errno = EINVAL;
        return -1;
    }
    struct pt_unwind_reg *r = new_reg(u);
    if (!r)
        return -1;
    r->arena = a;
    r->owner = &a->unwind_handle;
    /* read where it executes: the pcrel pointers are relative to there */
    const uint8_t *eh = (const uint8_t *)(a->x + a->eh_off);
    r->eh = eh;
    int err = 0;
    if (u->gcc_register) {
        u->gcc_register(eh);
        r->done |= PT_UNW_LIBGCC;
    }
    if (u->llvm_add_section) {
        u->llvm_add_section((uintptr_t)eh);
        r->done |= PT_UNW_LLVM_SECTION;
    } else if (u->llvm_add_fde) {
        if (register_llvm_fdes(u, r, eh, a->eh_len) == 0)
            r->done |= PT_UNW_LLVM_FDE;
        else
            err = errno;
    }
#ifdef PT_HAVE_NONGNU_HEADERS
    if (u->nongnu_register) {
        if (register_nongnu(s, u, r, eh, a->eh_len) == 0)
            r->done |= PT_UNW_NONGNU;
        else if (!err)
            err = errno;
    }
#endif
    u->regs[u->n_regs++] = r;
    a->unwind_handle = r;
    if (err) {
        errno = err;
        return -1;
    }
    return 0;
}

static void deregister(struct pt_unwind *u, struct pt_unwind_reg *r)
{
    /* reverse order of registration */
#ifdef PT_HAVE_NONGNU_HEADERS
    if (r->done & PT_UNW_NONGNU)
        u->nongnu_cancel(&r->dyn);
    free(r->table);
#endif
    if (r->done & PT_UNW_LLVM_FDE)
        for (size_t i = r->n_fdes; i-- > 0;)
            u->llvm_remove_fde(r->fdes[i]);
    free(r->fdes);
    if (r->done & PT_UNW_LLVM_SECTION)
        u->llvm_remove_section((uintptr_t)r->eh);
    if (r->done & PT_UNW_LIBGCC)
        u->gcc_deregister(r->eh);
    *r->owner = NULL;
    free(r);
}

static void remove_reg(struct pt_unwind *u, struct pt_unwind_reg *r)
{
    for (size_t k = 0; k < u->n_regs; k++)
        if (u->regs[k] == r) {
            memmove(&u->regs[k], &u->regs[k + 1], (u->n_regs - k - 1) * sizeof *u->regs);
            u->n_regs--;
            break;
        }
    deregister(u, r);
}

void pt_unwind_arena_removed(struct pt_unwind *u, struct pt_arena *a)
{
    if (u && a->unwind_handle)
        remove_reg(u, a->unwind_handle);
}

/* Published code: the .eh_frame sits wherever malloc put it and its FDEs
 * hold absolute addresses, so libgcc and LLVM libunwind reach code
 * anywhere.  nongnu libunwind's table holds int32 offsets from a segment
 * base: it gets the code only when the FDE lies within +-2 GiB of it. */
int pt_unwind_code_add(struct pt_unwind *u, const uint8_t *eh, size_t len, void **handle)
{
    if (!u || !eh || !len) {
        errno = EINVAL;
        return -1;
    }
    struct pt_unwind_reg *r = new_reg(u);
    if (!r)
        return -1;
    r->owner = handle;
    r->eh = eh;
    if (u->llvm_add_fde && !u->llvm_add_section && register_llvm_fdes(u, r, eh, len) < 0) {
        free(r);
        return -1;
    }
    if (r->fdes)
        r->done |= PT_UNW_LLVM_FDE;
    if (u->gcc_register) {
        u->gcc_register(eh);
        r->done |= PT_UNW_LIBGCC;
    }
    if (u->llvm_add_section) {
        u->llvm_add_section((uintptr_t)eh);
        r->done |= PT_UNW_LLVM_SECTION;
    }
#ifdef PT_HAVE_NONGNU_HEADERS
    if (u->nongnu_register) {
        size_t fde_off;
        uint64_t pc_begin;
        /* the first FDE: after the CIE; absptr pc_begin 8 bytes in */
        if (list_fdes(eh, len, &fde_off, 1) == 1 && fde_off + 24 <= len) {
            memcpy(&pc_begin, eh + fde_off + 8, 8);
            uint64_t range;
            memcpy(&range, eh + fde_off + 16, 8);
            intptr_t rel = (intptr_t)((uintptr_t)eh + fde_off - (uintptr_t)pc_begin);
            if (rel >= INT32_MIN && rel <= INT32_MAX && (r->table = malloc(2 * sizeof *r->table))) {
                r->table[0] = 0;
                r->table[1] = (int32_t)rel;
                memset(&r->dyn, 0, sizeof r->dyn);
                r->dyn.start_ip = (unw_word_t)pc_begin;
                r->dyn.end_ip = (unw_word_t)(pc_begin + range);
                r->dyn.format = UNW_INFO_FORMAT_REMOTE_TABLE;
                r->dyn.u.rti.name_ptr = (unw_word_t)(uintptr_t)"perftramp";
                r->dyn.u.rti.segbase = (unw_word_t)pc_begin;
                r->dyn.u.rti.table_len = 2 * sizeof(int32_t) / sizeof(unw_word_t);
                r->dyn.u.rti.table_data = (unw_word_t)(uintptr_t)r->table;
                u->nongnu_register(&r->dyn);
                r->done |= PT_UNW_NONGNU;
            }
        }
    }
#endif
    u->regs[u->n_regs++] = r;
    *handle = r;
    return 0;
}

void pt_unwind_code_removed(struct pt_unwind *u, void **handle)
{
    if (u && *handle)
        remove_reg(u, *handle);
}

void pt_unwind_close(struct pt_unwind *u)
{
    if (!u)
        return;
    while (u->n_regs > 0)
        deregister(u, u->regs[--u->n_regs]);
    free(u->regs);
    free(u);
}
