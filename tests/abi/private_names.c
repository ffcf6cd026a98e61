/* SPDX-License-Identifier: MIT */
/* A program that happens to use names perftramp uses internally, with its
 * own meanings.  It must link against libperftramp.a and libperftramp.so
 * (no "multiple definition"), and the library must keep calling its own
 * functions, never these (no interposition through the shared library).
 * tests/abi/abi_symbols.sh builds and runs it both ways. */
#include <perftramp.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int calls; /* how often anything called the functions below */

/* Names from every layer of the library: emit, arch, mem, outputs, api. */
int pt_buf_init(int x);
int pt_buf_init(int x) { calls++; return x + 1000; }
int pt_layout_build(int x);
int pt_layout_build(int x) { calls++; return x + 2000; }
int pt_arch_host(int x);
int pt_arch_host(int x) { calls++; return x + 3000; }
int pt_slot_alloc(int x);
int pt_slot_alloc(int x) { calls++; return x + 4000; }
int pt_perfmap_add(int x);
int pt_perfmap_add(int x) { calls++; return x + 5000; }
int pt_perf_name(int x);
int pt_perf_name(int x) { calls++; return x + 6000; }
int pt_options_read(int x);
int pt_options_read(int x) { calls++; return x + 7000; }
int pt_tag_next(int x);
int pt_tag_next(int x) { calls++; return x + 8000; }
/* a data object too */
int pt_arch_list = 42;

static long twice(long v) { return 2 * v; }

int main(void)
{
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_UNWIND});
    if (!pt) {
        printf("FAIL: perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    long (*t)(long) = (long (*)(long))perftramp_wrap(pt, (perftramp_fn)twice, "private::twice");
    if (!t || t(21) != 42) {
        printf("FAIL: wrap/call: %s\n", t ? "wrong result" : strerror(errno));
        return 1;
    }
    if (calls != 0) {
        printf("FAIL: the library called %d of the program's pt_* functions\n", calls);
        return 1;
    }
    int own = pt_buf_init(1) + pt_layout_build(1) + pt_arch_host(1) + pt_slot_alloc(1) + pt_perfmap_add(1) +
              pt_perf_name(1) + pt_options_read(1) + pt_tag_next(1);
    if (own != 36008 || pt_arch_list != 42 || calls != 8) {
        printf("FAIL: the program's own pt_* functions: %d, %d, %d calls\n", own, pt_arch_list, calls);
        return 1;
    }
    char map[64];
    snprintf(map, sizeof map, "/tmp/perf-%d.map", (int)getpid());
    if (perftramp_close(pt) != 0) {
        printf("FAIL: close: %s\n", strerror(errno));
        return 1;
    }
    remove(map);
    printf("ok: 8 functions and 1 object named like perftramp internals, library %s\n", perftramp_version());
    return 0;
}
