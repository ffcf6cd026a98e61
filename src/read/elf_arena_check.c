/* SPDX-License-Identifier: MIT */
/* Read layer: is a PERFTRAMP_ELF arena file whole (read/elf_arena_check.h)? */
#include "read/elf_arena_check.h"

#include "read/elf_reader.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

enum { EHDR_SIZE = 64, SHDR_SIZE = 64, SYM_SIZE = 24, HDR_FIXED = 12 };

const char *pt_arena_state_name(enum pt_arena_state s)
{
    return s == PT_ARENA_COMPLETE ? "complete" : s == PT_ARENA_INCOMPLETE ? "incomplete" : "invalid";
}

__attribute__((format(printf, 3, 4))) static void verdict(struct pt_arena_report *r, enum pt_arena_state s,
                                                          const char *fmt, ...)
{
    r->state = s;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
}

static bool all_zero(const uint8_t *p, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

static uint64_t rd(const uint8_t *p, unsigned n, bool big_endian)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[big_endian ? n - 1 - i : i] << (8 * i);
    return v;
}

/* .symtab against .strtab and .text: every entry whole, every name inside
 * .strtab, every named symbol inside .text. */
static void check_symbols(const struct pt_elf *e, const struct pt_elf_section *sym, const struct pt_elf_section *str,
                          const struct pt_elf_section *text, struct pt_arena_report *r)
{
    if (sym->size % SYM_SIZE || sym->size < SYM_SIZE) {
        verdict(r, PT_ARENA_INVALID, ".symtab sh_size %llu is no whole number of %d-byte entries",
                (unsigned long long)sym->size, SYM_SIZE);
        return;
    }
    for (uint64_t i = 1; i < sym->size / SYM_SIZE; i++) {
        const uint8_t *s = sym->data + i * SYM_SIZE;
        uint32_t name = (uint32_t)rd(s, 4, e->big_endian);
        uint64_t value = rd(s + 8, 8, e->big_endian), size = rd(s + 16, 8, e->big_endian);
        if (all_zero(s, SYM_SIZE))
            continue; /* a slot not named yet */
        if (name == 0 || name >= str->size || !memchr(str->data + name, 0, str->size - name)) {
            verdict(r, PT_ARENA_INVALID, "symbol %llu: name offset %u outside .strtab's %llu bytes",
                    (unsigned long long)i, name, (unsigned long long)str->size);
            return;
        }
        if (value < text->addr || size == 0 || size > text->size || value - text->addr > text->size - size) {
            verdict(r, PT_ARENA_INVALID, "symbol %llu (%s): [0x%llx, +%llu) outside .text", (unsigned long long)i,
                    (const char *)str->data + name, (unsigned long long)value, (unsigned long long)size);
            return;
        }
        r->symbols++;
    }
}

void pt_elf_arena_check(const uint8_t *d, size_t len, struct pt_arena_report *r)
{
    memset(r, 0, sizeof *r);
    r->state = PT_ARENA_COMPLETE;
    if (len == 0) {
        verdict(r, PT_ARENA_INCOMPLETE, "empty: created, never allocated nor written");
        return;
    }
    if (all_zero(d, len < EHDR_SIZE ? len : EHDR_SIZE)) {
        verdict(r, PT_ARENA_INCOMPLETE, "no ELF header: %zu bytes allocated, the headers never written", len);
        return;
    }
    struct pt_elf e;
    const char *why = NULL;
    if (pt_elf_open(&e, d, len, &why) < 0) {
        verdict(r, PT_ARENA_INVALID, "%s", why);
        return;
    }
    r->machine = e.machine;
    if (all_zero(d + e.shoff, (size_t)e.shnum * SHDR_SIZE)) {
        verdict(r, PT_ARENA_INCOMPLETE, "its section headers (at 0x%llx) never written",
                (unsigned long long)e.shoff);
        return;
    }
    static const char *const need[] = {".text", ".eh_frame", ".eh_frame_hdr", ".symtab", ".strtab"};
    struct pt_elf_section s[5];
    for (size_t i = 0; i < 5; i++)
        if (pt_elf_section(&e, need[i], &s[i]) < 0 || !s[i].data) {
            verdict(r, PT_ARENA_INVALID, "no %s section inside the file", need[i]);
            return;
        }
    const struct pt_elf_section *hdr = &s[2];
    if (hdr->size < HDR_FIXED) {
        verdict(r, PT_ARENA_INVALID, ".eh_frame_hdr of %llu bytes", (unsigned long long)hdr->size);
        return;
    }
    if (all_zero(hdr->data, hdr->size)) {
        verdict(r, PT_ARENA_INCOMPLETE, ".eh_frame_hdr never written");
        return;
    }
    /* version 1, then the encodings perftramp writes: eh_frame_ptr
     * sdata4 pcrel, fde_count udata4, table datarel sdata4 (LSB 5.0) */
    if (hdr->data[0] != 1 || hdr->data[2] != 0x03 || hdr->data[3] != 0x3b) {
        verdict(r, PT_ARENA_INVALID, ".eh_frame_hdr version %u, encodings 0x%02x 0x%02x", hdr->data[0],
                hdr->data[2], hdr->data[3]);
        return;
    }
    r->slots = rd(hdr->data + 8, 4, e.big_endian);
    if (r->slots * 8 > hdr->size - HDR_FIXED) {
        verdict(r, PT_ARENA_INVALID, ".eh_frame_hdr counts %llu rows in %llu bytes", (unsigned long long)r->slots,
                (unsigned long long)hdr->size);
        return;
    }
    check_symbols(&e, &s[3], &s[4], &s[0], r);
}
