/* SPDX-License-Identifier: MIT */
/* The ABI rules the library itself enforces (docs/abi.md):
 *   - the version macros of the installed header agree with AC_INIT's
 *     version and with perftramp_version();
 *   - the size-safe growth rule (api/sized.h): a caller's struct is read
 *     for exactly the size the caller declared, never a byte past it; an
 *     older, smaller one gets zeros for the fields it lacks; a newer,
 *     larger one is accepted only when what this library does not know
 *     is zero;
 *   - perftramp_open (macro and function) and perftramp_open_sized apply
 *     it to struct perftramp_options. */
#include "config.h"

#include "api/context.h"
#include "api/sized.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

START_TEST(version_macros_match_the_library)
{
    char want[32];
    snprintf(want, sizeof want, "%d.%d.%d", PERFTRAMP_VERSION_MAJOR, PERFTRAMP_VERSION_MINOR,
             PERFTRAMP_VERSION_PATCH);
    ck_assert_str_eq(PERFTRAMP_VERSION, want);
    ck_assert_str_eq(PERFTRAMP_VERSION, PACKAGE_VERSION); /* configure.ac's AC_INIT */
    ck_assert_str_eq(perftramp_version(), PERFTRAMP_VERSION);
    ck_assert_int_eq(PERFTRAMP_VERSION_NUMBER,
                     (PERFTRAMP_VERSION_MAJOR << 16) | (PERFTRAMP_VERSION_MINOR << 8) | PERFTRAMP_VERSION_PATCH);
#if PERFTRAMP_VERSION_NUMBER < 0x000100
#error "PERFTRAMP_VERSION_NUMBER must be usable in #if"
#endif
}
END_TEST

/* `size` bytes ending exactly where a PROT_NONE page starts: reading one
 * byte past them faults. */
static void *at_page_end(size_t size, void **map, size_t *map_len)
{
    long page = sysconf(_SC_PAGESIZE);
    *map_len = 2 * (size_t)page;
    *map = mmap(NULL, *map_len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(*map, MAP_FAILED);
    ck_assert_int_eq(mprotect((char *)*map + page, (size_t)page, PROT_NONE), 0);
    return (char *)*map + page - size;
}

START_TEST(sized_read_follows_the_growth_rule)
{
    uint8_t dst[16], src[32];
    /* smaller: copied, the rest zero */
    memset(dst, 0xee, sizeof dst);
    memset(src, 0x11, sizeof src);
    ck_assert_int_eq(pt_sized_read(dst, sizeof dst, src, 8, 8), 0);
    for (size_t i = 0; i < sizeof dst; i++)
        ck_assert_uint_eq(dst[i], i < 8 ? 0x11 : 0);
    /* larger with a zero tail: accepted */
    memset(src + 16, 0, 16);
    ck_assert_int_eq(pt_sized_read(dst, sizeof dst, src, 32, 8), 0);
    for (size_t i = 0; i < sizeof dst; i++)
        ck_assert_uint_eq(dst[i], 0x11);
    /* larger with any non-zero byte this library does not know: EINVAL */
    for (size_t i = 16; i < 32; i++) {
        src[i] = 1;
        errno = 0;
        ck_assert_int_eq(pt_sized_read(dst, sizeof dst, src, 32, 8), -1);
        ck_assert_int_eq(errno, EINVAL);
        src[i] = 0;
    }
    /* smaller than any released struct, or no struct: EINVAL */
    errno = 0;
    ck_assert_int_eq(pt_sized_read(dst, sizeof dst, src, 7, 8), -1);
    ck_assert_int_eq(errno, EINVAL);
    errno = 0;
    ck_assert_int_eq(pt_sized_read(dst, sizeof dst, NULL, 8, 8), -1);
    ck_assert_int_eq(errno, EINVAL);
    /* never a byte past the declared size */
    void *map;
    size_t map_len;
    uint8_t *edge = at_page_end(8, &map, &map_len);
    memset(edge, 0x22, 8);
    ck_assert_int_eq(pt_sized_read(dst, sizeof dst, edge, 8, 8), 0);
    ck_assert_uint_eq(dst[7], 0x22);
    ck_assert_uint_eq(dst[8], 0);
    munmap(map, map_len);
}
END_TEST

/* What a header of a later release might look like: today's struct with
 * fields appended. */
struct future_options {
    struct perftramp_options today;
    const char *elf_dir;
    uint64_t more;
};

START_TEST(open_reads_only_the_declared_size)
{
    /* the macro: sizeof as this header says, ending at a guard page */
    void *map;
    size_t map_len;
    struct perftramp_options *o = at_page_end(sizeof *o, &map, &map_len);
    memset(o, 0, sizeof *o);
    perftramp *pt = perftramp_open(o);
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    ck_assert_int_eq(perftramp_close(pt), 0);
    munmap(map, map_len);
    /* the function: the 0.1 struct, also at a guard page */
    /* the released 0.1 struct: 24 bytes on LP64 (abi/libperftramp.abi), never more than today's */
    if (sizeof(void *) == 8)
        ck_assert_uint_eq(pt_options_size_0_1, 24);
    ck_assert_uint_le(pt_options_size_0_1, sizeof(struct perftramp_options));
    unsigned char *raw = at_page_end(pt_options_size_0_1, &map, &map_len);
    memset(raw, 0, pt_options_size_0_1);
    pt = (perftramp_open)((const struct perftramp_options *)raw);
    ck_assert_msg(pt != NULL, "(perftramp_open): %s", strerror(errno));
    ck_assert_int_eq(perftramp_close(pt), 0);
    munmap(map, map_len);
    /* a compound literal with commas is one macro argument */
    pt = perftramp_open(&(struct perftramp_options){.outputs = 0, .jitdump_dir = NULL, .flags = 0});
    ck_assert_ptr_nonnull(pt);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

START_TEST(open_refuses_what_it_does_not_know)
{
    struct future_options f = {.today = {.outputs = 0}};
    /* a newer program whose new fields are zero: works */
    perftramp *pt = perftramp_open_sized(&f.today, sizeof f);
    ck_assert_msg(pt != NULL, "zero new fields: %s", strerror(errno));
    ck_assert_int_eq(perftramp_close(pt), 0);
    /* one that asks for a feature this library lacks: EINVAL */
    f.elf_dir = "/tmp";
    errno = 0;
    ck_assert_ptr_null(perftramp_open_sized(&f.today, sizeof f));
    ck_assert_int_eq(errno, EINVAL);
    f.elf_dir = NULL;
    f.more = 1ull << 63;
    errno = 0;
    ck_assert_ptr_null(perftramp_open_sized(&f.today, sizeof f));
    ck_assert_int_eq(errno, EINVAL);
    /* reserved must be zero */
    struct perftramp_options o = {.reserved = 1};
    errno = 0;
    ck_assert_ptr_null(perftramp_open(&o));
    ck_assert_int_eq(errno, EINVAL);
    /* no header ever had a struct smaller than 0.1's */
    o.reserved = 0;
    for (size_t size = 0; size < pt_options_size_0_1; size += 4) {
        errno = 0;
        ck_assert_ptr_null(perftramp_open_sized(&o, size));
        ck_assert_int_eq(errno, EINVAL);
    }
    /* no options at all: the environment, whatever the size */
    unsetenv("PERFTRAMP");
    pt = perftramp_open_sized(NULL, 0);
    ck_assert_ptr_nonnull(pt);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("abi");
    TCase *tc = tcase_create("abi");
    tcase_add_test(tc, version_macros_match_the_library);
    tcase_add_test(tc, sized_read_follows_the_growth_rule);
    tcase_add_test(tc, open_reads_only_the_declared_size);
    tcase_add_test(tc, open_refuses_what_it_does_not_know);
    suite_add_tcase(s, tc);
    return pt_check_run(s) ? EXIT_FAILURE : EXIT_SUCCESS;
}
