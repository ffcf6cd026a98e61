/* SPDX-License-Identifier: MIT */
/* Looks at what one libffi's ffi_closure_alloc returns (tests/mem/ffi_static_tramp.sh
 * builds it against the libffi under test).
 *   ffi_static_probe layout     prints the closure and its code pointer with the
 *                               /proc/self/maps line of each; exit 0 when the code
 *                               pointer is a static trampoline: outside the
 *                               closure's block, in an executable mapping of a
 *                               file, while the block itself is not executable.
 *   ffi_static_probe old-probe  does what perftramp's first probe did, 8 bytes
 *                               written at offset 0 of the closure, then
 *                               ffi_closure_free: with static trampolines that
 *                               word is ffi_closure.ftramp, and the free dies. */
#include <ffi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

struct line {
    unsigned long lo, hi;
    char perms[5];
    unsigned long inode;
    char path[512];
};

static int mapping_of(uintptr_t a, struct line *l)
{
    FILE *f = fopen("/proc/self/maps", "r");
    char buf[1024];
    int found = 0;
    while (f && !found && fgets(buf, sizeof buf, f)) {
        unsigned long off;
        char dev[16];
        int n = 0;
        l->path[0] = 0;
        if (sscanf(buf, "%lx-%lx %4s %lx %15s %lu %n", &l->lo, &l->hi, l->perms, &off, dev, &l->inode, &n) < 6)
            continue;
        if (a >= l->lo && a < l->hi) {
            found = 1;
            snprintf(l->path, sizeof l->path, "%s", buf + n);
            l->path[strcspn(l->path, "\n")] = 0;
        }
    }
    if (f)
        fclose(f);
    return found;
}

int main(int argc, char **argv)
{
    const size_t size = 4096;
    void *code = NULL;
    unsigned char *w = ffi_closure_alloc(size, &code);
    if (!w || !code) {
        puts("ffi_closure_alloc failed");
        return 2;
    }
    if (argc > 1 && strcmp(argv[1], "old-probe") == 0) {
        memcpy(w, "ptramp!", 8);
        fflush(stdout);
        ffi_closure_free(w);
        puts("ffi_closure_free survived a written header");
        return 0;
    }
    struct line lw, lx;
    if (!mapping_of((uintptr_t)w, &lw) || !mapping_of((uintptr_t)code, &lx)) {
        puts("a pointer is in no mapping");
        return 2;
    }
    int outside = (uintptr_t)code < (uintptr_t)w || (uintptr_t)code >= (uintptr_t)w + size;
    printf("closure %p in %s \"%s\"\n", (void *)w, lw.perms, lw.path);
    printf("code    %p in %s \"%s\"\n", code, lx.perms, lx.path);
    int is_static = outside && lw.perms[2] != 'x' && lx.perms[2] == 'x' && lx.inode != 0 && lx.inode != lw.inode;
    printf("static trampolines: %s\n", is_static ? "yes" : "no");
    ffi_closure_free(w);
    return is_static ? 0 : 1;
}
