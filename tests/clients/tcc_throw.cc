// SPDX-License-Identifier: MIT
// A C++ exception thrown by a callback that tcc-compiled code calls
// propagates through the tcc frames (tcc_leaf, tcc_mid, tcc_outer) to a
// catch in main: libgcc's unwinder needs their published FDEs
// (PERFTRAMP_UNWIND).  Argument: the outputs (examples/tcc/tcc_example.c);
// with "none" the exception cannot pass the tcc frames: std::terminate.
#include "program.h"
#include "tcc_jit.h"

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <stdexcept>

extern "C" void tcc_probe(void);
extern "C" void __attribute__((noinline)) tcc_probe(void)
{
    throw std::runtime_error("thrown under tcc code");
}

typedef int (*tcc_fn)(int n, int probe);

int main(int argc, char **argv)
{
    const char *outs = argc > 1 ? argv[1] : "unwind";
    struct perftramp_options o = {};
    o.outputs = std::strcmp(outs, "none") == 0 ? 0u : unsigned(PERFTRAMP_UNWIND);
    perftramp *pt = perftramp_open(&o);
    struct tcc_jit *j = pt ? tcc_jit_new(pt, 1 << 20) : nullptr;
    if (!j || tcc_jit_symbol(j, "tcc_probe", reinterpret_cast<const void *>(tcc_probe)) < 0)
        return 1;
    tcc_fn outer = nullptr;
    for (size_t k = 0; k < TCC_PROGRAM_FNS; k++) {
        void *f = tcc_jit_compile(j, tcc_program[k][0], tcc_program[k][1]);
        if (!f)
            return 1;
        outer = reinterpret_cast<tcc_fn>(reinterpret_cast<uintptr_t>(f));
    }
    int rc = 1;
    try {
        outer(10, 1);
        std::puts("not thrown");
    } catch (const std::runtime_error &e) {
        std::printf("caught in main: %s\n", e.what());
        rc = 0;
    }
    tcc_jit_free(j);
    perftramp_close(pt);
    return rc;
}
