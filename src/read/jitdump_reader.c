/* SPDX-License-Identifier: MIT */
/* Read layer: jitdump records: decoding, a reader over a dump in memory, and the perf
 * versions some rules depend on.  Format facts: tools/perf/util/jitdump.h
 * (header, prefix, records), jitdump.c (how perf inject consumes them).
 * The checks themselves: jitdump_validate.c. */
#include "read/jitdump_reader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pt_jd_record_name(uint32_t id)
{
    static const char *const names[PT_JD_ID_COUNT] = {"LOAD", "MOVE", "DEBUG_INFO", "CLOSE", "UNWINDING_INFO"};
    return id < PT_JD_ID_COUNT ? names[id] : "UNKNOWN";
}

const char *pt_jd_effect_text(enum pt_jd_effect e)
{
    switch (e) {
    case PT_JD_REFUSES: return "perf inject refuses the dump";
    case PT_JD_LOSES: return "perf loses records";
    case PT_JD_MISNAMES: return "perf mis-names samples";
    default: return "perf copes";
    }
}

static bool host_big_endian(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 0;
}

static uint64_t load_n(const uint8_t *p, unsigned n, bool big)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < n; i++)
        v |= (uint64_t)p[big ? n - 1 - i : i] << (8 * i);
    return v;
}

/* Readers in the file's byte order. */
static uint32_t h32(const struct pt_jd_header *h, const uint8_t *p)
{
    return (uint32_t)load_n(p, 4, host_big_endian() != h->swapped);
}
static uint64_t h64(const struct pt_jd_header *h, const uint8_t *p)
{
    return load_n(p, 8, host_big_endian() != h->swapped);
}

int pt_jd_header_decode(const uint8_t p[PT_JD_HEADER_SIZE], struct pt_jd_header *h)
{
    memset(h, 0, sizeof *h);
    uint32_t magic = (uint32_t)load_n(p, 4, host_big_endian());
    if (magic == PT_JD_MAGIC)
        h->swapped = false;
    else if (__builtin_bswap32(magic) == PT_JD_MAGIC)
        h->swapped = true;
    else {
        h->magic = magic;
        return -1;
    }
    h->magic = PT_JD_MAGIC;
    h->version = h32(h, p + 4);
    h->total_size = h32(h, p + 8);
    h->elf_mach = h32(h, p + 12);
    h->pad1 = h32(h, p + 16);
    h->pid = h32(h, p + 20);
    h->timestamp = h64(h, p + 24);
    h->flags = h64(h, p + 32);
    return 0;
}

static void decode_body(const struct pt_jd_header *it, struct pt_jd_record *r)
{
    const uint8_t *b = r->body;
    size_t n = r->body_len;
    switch (r->id) {
    case PT_JD_LOAD: {
        if (n < PT_JD_LOAD_FIXED - PT_JD_PREFIX_SIZE) {
            r->malformed = true;
            return;
        }
        r->pid = h32(it, b);
        r->tid = h32(it, b + 4);
        r->vma = h64(it, b + 8);
        r->code_addr = h64(it, b + 16);
        r->code_size = h64(it, b + 24);
        r->code_index = h64(it, b + 32);
        size_t rest = n - 40;
        const uint8_t *name = b + 40;
        /* perf reads the code at record_end - code_size, the name at +56 */
        if (r->code_size >= rest) {
            r->malformed = true; /* no room for the name's NUL */
            return;
        }
        size_t name_room = rest - (size_t)r->code_size;
        const uint8_t *nul = memchr(name, 0, name_room);
        if (!nul) {
            r->malformed = true;
            return;
        }
        r->name = (const char *)name;
        r->name_len = (size_t)(nul - name);
        r->code = b + n - (size_t)r->code_size;
        return;
    }
    case PT_JD_MOVE:
        if (n < 48) {
            r->malformed = true;
            return;
        }
        r->pid = h32(it, b);
        r->tid = h32(it, b + 4);
        r->vma = h64(it, b + 8);
        r->old_code_addr = h64(it, b + 16);
        r->code_addr = h64(it, b + 24);
        r->code_size = h64(it, b + 32);
        r->code_index = h64(it, b + 40);
        return;
    case PT_JD_DEBUG_INFO:
        if (n < 16) {
            r->malformed = true;
            return;
        }
        r->code_addr = h64(it, b);
        r->nr_entry = h64(it, b + 8);
        return;
    case PT_JD_UNWINDING_INFO:
        if (n < PT_JD_UNWIND_FIXED - PT_JD_PREFIX_SIZE) {
            r->malformed = true;
            return;
        }
        r->unwinding_size = h64(it, b);
        r->eh_frame_hdr_size = h64(it, b + 8);
        r->mapped_size = h64(it, b + 16);
        if (r->unwinding_size > n - 24 || r->eh_frame_hdr_size > r->unwinding_size) {
            r->malformed = true;
            return;
        }
        r->unwinding = b + 24;
        return;
    default:
        return;
    }
}

void pt_jd_record_decode(const struct pt_jd_header *h, const uint8_t *p, size_t len, size_t offset,
                         struct pt_jd_record *r)
{
    memset(r, 0, sizeof *r);
    r->offset = offset;
    if (len < PT_JD_PREFIX_SIZE) {
        r->malformed = true;
        return;
    }
    r->id = h32(h, p);
    r->total_size = h32(h, p + 4);
    r->timestamp = h64(h, p + 8);
    r->body = p + PT_JD_PREFIX_SIZE;
    r->body_len = len - PT_JD_PREFIX_SIZE;
    decode_body(h, r);
}

int pt_jd_iter_init(struct pt_jd_iter *it, const uint8_t *data, size_t len)
{
    memset(it, 0, sizeof *it);
    it->data = data;
    it->len = len;
    if (!data || len < PT_JD_HEADER_SIZE) {
        snprintf(it->error, sizeof it->error, "file of %zu bytes is shorter than the %u-byte header", len,
                 PT_JD_HEADER_SIZE);
        return -1;
    }
    if (pt_jd_header_decode(data, &it->header) < 0) {
        snprintf(it->error, sizeof it->error, "bad magic 0x%08x (expected 0x%08x)", it->header.magic, PT_JD_MAGIC);
        return -1;
    }
    /* perf reads the first record right after the 40 bytes it knows,
     * whatever total_size says (jit_open) */
    it->off = PT_JD_HEADER_SIZE;
    return 0;
}

static bool zeros_to_end(const uint8_t *p, size_t n)
{
    if (n > PT_JD_RESERVED_MAX)
        return false;
    for (size_t i = 0; i < n; i++)
        if (p[i])
            return false;
    return true;
}

int pt_jd_next(struct pt_jd_iter *it, struct pt_jd_record *r)
{
    memset(r, 0, sizeof *r);
    if (it->off >= it->len)
        return 0;
    size_t left = it->len - it->off;
    const uint8_t *p = it->data + it->off;
    if (left < PT_JD_PREFIX_SIZE && zeros_to_end(p, left))
        return 0; /* the same room, shorter than a prefix */
    if (left < PT_JD_PREFIX_SIZE) {
        snprintf(it->error, sizeof it->error, "torn record: %zu bytes left, less than a record prefix", left);
        return -1;
    }
    uint32_t id = h32(&it->header, p), total = h32(&it->header, p + 4);
    if (total < PT_JD_PREFIX_SIZE && zeros_to_end(p, left))
        return 0; /* a writer's reserved room (outputs/file_window.h): perf stops here too */
    if (total == 0 && left <= PT_JD_RESERVED_MAX)
        return 0; /* the same room, where a killed writer left a record uncommitted (size last) */
    if (total < PT_JD_PREFIX_SIZE) {
        snprintf(it->error, sizeof it->error, "record total_size %u is smaller than its prefix", total);
        return -1;
    }
    if (total > left) {
        snprintf(it->error, sizeof it->error, "torn record: %s of %u bytes, only %zu bytes left", pt_jd_record_name(id),
                 total, left);
        return -1;
    }
    pt_jd_record_decode(&it->header, p, total, it->off, r);
    it->off += total;
    return 1;
}

/* ---- perf versions ------------------------------------------------------ */

int pt_jd_perf_parse(const char *s, struct pt_jd_perf *p)
{
    unsigned a = 0, b = 0;
    int n = 0;
    if (!s || sscanf(s, "%u.%u%n", &a, &b, &n) != 2 || a == 0 || a > 99 || b > 999)
        return -1;
    if (s[n] != '\0' && s[n] != '.' && s[n] != '-' && s[n] != '+')
        return -1;
    p->major = a;
    p->minor = b;
    return 0;
}

static bool at_least(const struct pt_jd_perf *p, unsigned major, unsigned minor)
{
    if (p->major == 0)
        return true; /* unknown: the newest rules */
    return p->major > major || (p->major == major && p->minor >= minor);
}

uint64_t pt_jd_perf_text_offset(const struct pt_jd_perf *p)
{
    /* genelf.h: GEN_ELF_TEXT_OFFSET was sizeof(Elf64_Ehdr) = 0x40; "perf
     * jit: Include program header in ELF files" (babd04386b1d, September
     * 2022, in 6.0 and some stable releases) added the header without
     * moving .text, "perf inject: Fix GEN_ELF_TEXT_OFFSET for jit"
     * (89b15d00527b, October 2022, 6.1) made it round_up(sizeof(Ehdr) +
     * sizeof(Phdr), 16) = 0x80 */
    return at_least(p, 6, 1) ? 0x80 : 0x40;
}

enum pt_jd_buildid_mode pt_jd_perf_buildid_mode(const struct pt_jd_perf *p)
{
    /* genelf.c: up to 6.16, MD5(load_addr, code) with libcrypto and
     * /dev/urandom without it; 6.17 dropped libcrypto for an in-tree SHA-1
     * of the code bytes alone; the symbol and string tables joined the
     * hash in 6.19 (identical trampolines had merged: CPython gh-139544) */
    if (at_least(p, 6, 19))
        return PT_JD_BUILDID_CODE_NAME;
    if (at_least(p, 6, 17))
        return PT_JD_BUILDID_CODE;
    return p->libcrypto == 1 ? PT_JD_BUILDID_ADDR_CODE : PT_JD_BUILDID_RANDOM;
}
