/* SPDX-License-Identifier: MIT */
/* Hardened systems (SELinux execmem off, PaX MPROTECT) never map memory
 * writable and executable at once: libffi then maps the same pages twice,
 * once RW and once RX, and ffi_closure_alloc returns two different
 * addresses.  This test stands in for such a libffi: it defines
 * ffi_closure_alloc/ffi_closure_free with a real memfd double mapping, so
 * perftramp must write through one address and execute the other.  A
 * second mode imitates libffi's static trampolines (the "code" pointer does
 * not show our bytes): perftramp must refuse with ENOTSUP, not crash. */
#include "config.h"

#include "perftramp.h"

#include <check.h>
#include "check_run.h"
#include <errno.h>
#include <ffi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum mode { DOUBLE_MAP, STATIC_TRAMPOLINES };
static enum mode mode = DOUBLE_MAP;
static int live_mappings;

struct mapping {
    void *w, *x;
    size_t size;
};
static struct mapping maps[64];

static void decoy(void)
{
}

void *ffi_closure_alloc(size_t size, void **code)
{
    size = (size + 4095) & ~(size_t)4095;
    int fd = memfd_create("perftramp-test", MFD_CLOEXEC);
    if (fd < 0 || ftruncate(fd, (off_t)size) != 0)
        return NULL;
    void *w = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    void *x = mmap(NULL, size, PROT_READ | PROT_EXEC, MAP_SHARED, fd, 0);
    close(fd);
    if (w == MAP_FAILED || x == MAP_FAILED)
        return NULL;
    for (size_t i = 0; i < 64; i++)
        if (!maps[i].w) {
            maps[i] = (struct mapping){w, x, size};
            live_mappings++;
            *code = mode == DOUBLE_MAP ? x : (void *)(uintptr_t)decoy;
            return w;
        }
    return NULL;
}

void ffi_closure_free(void *w)
{
    for (size_t i = 0; i < 64; i++)
        if (maps[i].w == w) {
            munmap(maps[i].w, maps[i].size);
            munmap(maps[i].x, maps[i].size);
            maps[i] = (struct mapping){0};
            live_mappings--;
            return;
        }
    abort(); /* freeing what was never allocated */
}

static long add_5(long x)
{
    return x + 5;
}

static double scale(double a, int k)
{
    return a * k;
}

START_TEST(writes_through_w_executes_x)
{
    mode = DOUBLE_MAP;
    static struct perftramp_options opts;
    perftramp *pt = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt);
    perftramp_fn t[5000];
    for (int i = 0; i < 5000; i++) {
        t[i] = perftramp_wrap(pt, i % 2 ? (perftramp_fn)add_5 : (perftramp_fn)scale, "doublemap");
        ck_assert_ptr_nonnull(t[i]);
        /* the trampoline is in an RX mapping, never the RW one */
        int in_x = 0;
        for (size_t k = 0; k < 64; k++)
            if (maps[k].x && (uintptr_t)t[i] >= (uintptr_t)maps[k].x &&
                (uintptr_t)t[i] < (uintptr_t)maps[k].x + maps[k].size)
                in_x = 1;
        ck_assert(in_x);
    }
    ck_assert_int_gt(live_mappings, 1); /* several arenas */
    for (int i = 0; i < 5000; i++) {
        if (i % 2)
            ck_assert_int_eq(((long (*)(long))t[i])(i), i + 5);
        else
            ck_assert(((double (*)(double, int))t[i])(1.5, i) == 1.5 * i);
    }
    /* release and reuse go through the writable alias too */
    ck_assert_int_eq(perftramp_release(pt, t[1]), 0);
    perftramp_fn again = perftramp_wrap(pt, (perftramp_fn)add_5, "again");
    ck_assert_ptr_eq(again, t[1]);
    ck_assert_int_eq(((long (*)(long))again)(1), 6);
    ck_assert_int_eq(perftramp_close(pt), 0);
    ck_assert_int_eq(live_mappings, 0); /* every arena freed */
}
END_TEST

START_TEST(static_trampolines_are_refused)
{
    mode = STATIC_TRAMPOLINES;
    static struct perftramp_options opts;
    perftramp *pt = perftramp_open(&opts);
    ck_assert_ptr_nonnull(pt);
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(pt, (perftramp_fn)add_5, "refused"));
    ck_assert_int_eq(errno, ENOTSUP);
    ck_assert_int_eq(live_mappings, 0); /* the probe arena was given back */
    ck_assert_int_eq(perftramp_close(pt), 0);
    mode = DOUBLE_MAP;
}
END_TEST

int main(void)
{
    Suite *s = suite_create("doublemap");
    TCase *t = tcase_create("libffi");
    tcase_add_test(t, writes_through_w_executes_x);
    tcase_add_test(t, static_trampolines_are_refused);
    suite_add_tcase(s, t);
    int failed = pt_check_run(s);
    return failed ? 1 : 0;
}
