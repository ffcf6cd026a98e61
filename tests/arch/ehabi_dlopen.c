/* SPDX-License-Identifier: MIT */
/* A libperftramp that is dlopen'ed (RTLD_LOCAL, as a language runtime's
 * extension module is) on 32-bit Arm: libgcc's __gnu_Unwind_Find_exidx
 * stays glibc's, so the library's EHABI tables would never be read.
 * PERFTRAMP_UNWIND must then be refused with ENOTSUP at perftramp_open,
 * and a context without it must work.  tests/arch/ehabi_foreign.sh runs it
 * under qemu-arm-static.  Usage: ehabi_dlopen PATH-TO-libperftramp.so */
#include "perftramp.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>

typedef perftramp *(*open_fn)(const struct perftramp_options *);
typedef perftramp_fn (*wrap_fn)(perftramp *, perftramp_fn, const char *);
typedef int (*close_fn)(perftramp *);

static int twice(int x) { return 2 * x; }

int main(int argc, char **argv)
{
    void *h = argc > 1 ? dlopen(argv[1], RTLD_NOW | RTLD_LOCAL) : NULL;
    if (!h) {
        printf("proof: dlopen failed %s\n", dlerror());
        return 1;
    }
    open_fn open = (open_fn)dlsym(h, "perftramp_open");
    wrap_fn wrap = (wrap_fn)dlsym(h, "perftramp_wrap");
    close_fn close = (close_fn)dlsym(h, "perftramp_close");
    struct perftramp_options o = {.outputs = PERFTRAMP_UNWIND};
    errno = 0;
    perftramp *refused = open(&o);
    int e = errno;
    o.outputs = 0;
    perftramp *pt = open(&o);
    int (*f)(int) = pt ? (int (*)(int))wrap(pt, (perftramp_fn)twice, "twice") : NULL;
    int ok = !refused && e == ENOTSUP && f && f(21) == 42;
    printf("proof: dlopen %s dlopen'ed: PERFTRAMP_UNWIND refused at open (%s), a context without it wraps and "
           "calls (%d)\n",
           ok ? "proven" : "failed", refused ? "opened!" : strerror(e), f ? f(21) : -1);
    if (pt)
        close(pt);
    return !ok;
}
