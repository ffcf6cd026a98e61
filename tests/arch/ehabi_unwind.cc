/* SPDX-License-Identifier: MIT */
// PERFTRAMP_UNWIND on 32-bit Arm, where libgcc's unwinder reads only EHABI
// tables (.ARM.exidx/.ARM.extab), found through __gnu_Unwind_Find_exidx:
// tests/arch/ehabi_foreign.sh builds this with the Arm C++ cross compiler,
// statically and against libperftramp.so, and runs it under qemu-arm-static
// (and tests/guest/proofs.sh in the emulated Arm machine).  Only the public
// API: the library's own tables and lookup are what is tested.
//   cxx        a C++ exception thrown by the target crosses the trampoline and
//              a frame with a destructor below it, and is caught; the control
//              (argument "control": a context without PERFTRAMP_UNWIND) ends in
//              std::terminate, which the script checks (SIGABRT); a process
//              of its own, not a fork: qemu-user 7.2 crashes the child of a
//              fork in a dynamically linked program, any program
//   backtrace  backtrace(3) from the target lists one frame more than a direct
//              call, inside the trampoline, and the same frames below; the
//              control stops at the trampoline
//   threads    two threads wrap 40,000 trampolines (a new arena every so
//              often) while two others throw through the newest trampoline
//              and call backtrace(3) through it, and a profiling timer's
//              handler calls backtrace(3) where it lands in a trampoline.
//              Only there: EHABI describes a compiled function's frame at
//              its calls, not at every instruction, so libgcc unwinding
//              from a signal that lands in a prologue or an epilogue of
//              ordinary code reads the wrong stack words.  In the emulated
//              machine 2 of 77 runs died so in _Unwind_VRS_Pop, landed in
//              the test's own loop and in libffi's ffi_closure_alloc.  A
//              trampoline's entries hold at every instruction (emit/ehabi.h).
//   shared     (argument "shared") libgcc's __gnu_Unwind_Find_exidx@GLIBC_2.4,
//              as the dynamic linker resolves it, is libperftramp's
// Argument "nothreads": no threads part (qemu-user 7.2 crashes a dynamically
// linked C++ program whose threads throw and walk their stacks, any such
// program: the emulated machine runs that part against the shared library).
// Prints "proof: <id> proven|failed <detail>" per part, then "N passed, M failed".
#include "perftramp.h"

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <execinfo.h>
#include <pthread.h>
#include <stdexcept>
#include <string>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

namespace {

int passed, failed;

bool check(bool ok, const char *what)
{
    std::printf("%s - %s\n", ok ? "ok" : "not ok", what);
    std::fflush(stdout);
    (ok ? passed : failed)++;
    return ok;
}

struct thrown : std::runtime_error {
    int value;
    explicit thrown(int v) : std::runtime_error("thrown by the target"), value(v) {}
};

using int_fn = int (*)(int);

__attribute__((noinline)) int thrower(int x)
{
    if (x >= 0)
        throw thrown(x);
    return x;
}

std::atomic<int> destructed;
struct guard {
    ~guard() { destructed++; }
};

// below the trampoline, above the catch: its destructor must run
__attribute__((noinline)) int middle(int_fn fn, int x)
{
    guard g;
    int r = fn(x);
    asm volatile("" ::: "memory");
    return r + 1;
}

__attribute__((noinline)) int catcher(int_fn fn, int x)
{
    try {
        return middle(fn, x);
    } catch (const thrown &e) {
        return e.value + 1000;
    }
}

perftramp *open_with(unsigned outputs)
{
    perftramp_options o{};
    o.outputs = outputs;
    perftramp *pt = perftramp_open(&o);
    if (!pt) {
        std::printf("perftramp_open(%u): %s\n", outputs, std::strerror(errno));
        std::exit(1);
    }
    return pt;
}

template <typename F> F wrap(perftramp *pt, F fn, const char *name)
{
    F f = reinterpret_cast<F>(perftramp_wrap(pt, reinterpret_cast<perftramp_fn>(fn), name));
    if (!f) {
        std::printf("perftramp_wrap(%s): %s\n", name, std::strerror(errno));
        std::exit(1);
    }
    return f;
}

perftramp *bare; // no PERFTRAMP_UNWIND: the controls

// The control: must end in std::terminate (the script wants SIGABRT).
void throw_without_tables()
{
    int_fn f = wrap(bare, thrower, "bare::thrower");
    std::printf("control: throwing through a trampoline without unwind tables\n");
    std::fflush(stdout);
    catcher(f, 5);
    std::printf("control: caught: the unwinder crossed a frame it has no table for\n");
}

void part_cxx(perftramp *pt)
{
    int_fn f = wrap(pt, thrower, "cxx::thrower");
    int ok = 0;
    destructed = 0;
    for (int i = 0; i < 1000; i++)
        ok += catcher(f, i) == i + 1000 && catcher(f, -3) == -2;
    char what[160];
    std::snprintf(what, sizeof what, "C++ exception through the trampoline caught, 1000/1000 times (%d), "
                                     "the destructor below it ran each time (%d)", ok, destructed.load());
    bool a = check(ok == 1000 && destructed == 2000, what);
    std::printf("proof: cxx %s caught 1000/1000 through the trampoline and a frame with a destructor "
                "below it\n",
                a ? "proven" : "failed");
}

// ---- backtrace(3)

void *bt[64];
int bt_n;

__attribute__((noinline)) int bt_target(int x)
{
    bt_n = backtrace(bt, 64);
    asm volatile("" ::: "memory");
    return x + 1;
}

__attribute__((noinline)) int bt_caller(int_fn fn, int x)
{
    int r = fn(x);
    asm volatile("" ::: "memory");
    return r + 1;
}

// The direct walk's frames below the target, shifted by one past the
// trampoline (the trampoline's frame inside [x, x + 32]).
bool same_through(void *const *direct, int nd, void *const *via, int nv, uintptr_t x, char *why, size_t len)
{
    if (nv != nd + 1) {
        std::snprintf(why, len, "%d frames through the trampoline, %d direct", nv, nd);
        return false;
    }
    uintptr_t t = reinterpret_cast<uintptr_t>(via[1]);
    if (t <= x || t > x + 32) {
        std::snprintf(why, len, "frame 1 at %#lx, not in the trampoline at %#lx", (unsigned long)t, (unsigned long)x);
        return false;
    }
    for (int i = 1; i < nd; i++)
        if (direct[i] != via[i + 1]) {
            std::snprintf(why, len, "frame %d: %p direct, %p through the trampoline", i, direct[i], via[i + 1]);
            return false;
        }
    return true;
}

// arrays longer than the two runs: with exactly two entries gcc unrolls
// the loop below into two call sites (k beyond them would be undefined)
int_fn bt_fns[16];
void *bt_runs[16][64];
int bt_counts[16];

__attribute__((noinline)) void bt_record(int k)
{
    std::memcpy(bt_runs[k], bt, sizeof bt);
    bt_counts[k] = bt_n;
}

void part_backtrace(perftramp *pt)
{
    bt_fns[0] = bt_target;
    bt_fns[1] = wrap(pt, bt_target, "bt::target");
    int_fn f = bt_fns[1];
    // one call site for both runs (an unknown trip count, nothing that
    // branches on k in the body), so the frames below are the same
    static volatile int runs = 2;
    for (int k = 0; k < runs; k++) {
        bt_caller(bt_fns[k], k);
        bt_record(k);
    }
    void *const *direct = bt_runs[0], *const *via = bt_runs[1];
    int nd = bt_counts[0], nv = bt_counts[1];
    char why[160] = "", what[240];
    bool a = same_through(direct, nd, via, nv, reinterpret_cast<uintptr_t>(f), why, sizeof why);
    std::snprintf(what, sizeof what, "backtrace(3) through the trampoline: the direct walk (%d frames) plus one "
                                     "inside the trampoline %s", nd, a ? "" : why);
    check(a, what);
    int_fn g = wrap(bare, bt_target, "bare::bt");
    bt_caller(g, 0);
    std::snprintf(what, sizeof what, "control: without PERFTRAMP_UNWIND backtrace(3) stops at the trampoline "
                                     "(%d frames, the direct walk %d)", bt_n, nd);
    bool b = check(bt_n < nd, what);
    std::printf("proof: backtrace %s %d frames through the trampoline = the direct %d + the trampoline, same "
                "frames below; %d without unwind tables\n",
                a && b ? "proven" : "failed", nv, nd, bt_n);
}

// ---- threads, a timer's signal handler, arenas added meanwhile

std::atomic<int_fn> newest;
std::atomic<bool> stop;
std::atomic<int> thrown_ok, thrown_bad, walks_ok, walks_bad, ticks;
perftramp *shared_pt;
int direct_frames;

void *wrapper(void *arg)
{
    char name[32];
    for (int i = 0; i < 20000; i++) {
        std::snprintf(name, sizeof name, "t%ld::f%d", (long)(intptr_t)arg, i);
        int_fn f = reinterpret_cast<int_fn>(perftramp_wrap(shared_pt, reinterpret_cast<perftramp_fn>(thrower), name));
        if (!f)
            break;
        newest.store(f);
    }
    return nullptr;
}

__attribute__((noinline)) int walker(int x)
{
    void *b[64];
    return backtrace(b, 64) + x;
}

void *user(void *)
{
    using walk_fn = int (*)(int);
    walk_fn w = wrap(shared_pt, walker, "threads::walker");
    int direct = bt_caller(walker, 0); // this thread's walk without the trampoline
    while (!stop.load()) {
        int_fn f = newest.load();
        bool ok = catcher(f, 7) == 1007;
        (ok ? thrown_ok : thrown_bad)++;
        (bt_caller(w, 0) == direct + 1 ? walks_ok : walks_bad)++;
    }
    return nullptr;
}

std::atomic<int> ticks_in_code;

// Walks only where the signal landed outside every loaded object: in this
// program, a trampoline (_dl_find_object is async-signal-safe).
void on_prof(int, siginfo_t *, void *context)
{
    ticks++;
#if defined(__arm__) && defined(DLFO_EH_SEGMENT_TYPE)
    auto pc = reinterpret_cast<void *>(static_cast<ucontext_t *>(context)->uc_mcontext.arm_pc);
    dl_find_object o;
    if (_dl_find_object(pc, &o) == 0)
        return;
    void *b[64];
    if (backtrace(b, 64) > 1)
        ticks_in_code++;
#else
    (void)context;
#endif
}

void part_threads(perftramp *pt)
{
    shared_pt = pt;
    newest.store(wrap(pt, thrower, "threads::first"));
    struct sigaction sa {};
    sa.sa_sigaction = on_prof;
    sa.sa_flags = SA_RESTART | SA_SIGINFO;
    sigaction(SIGPROF, &sa, nullptr);
    struct itimerval it {};
    it.it_interval.tv_usec = 2000;
    it.it_value.tv_usec = 2000;
    setitimer(ITIMER_PROF, &it, nullptr);
    pthread_t w[2], u[2];
    for (long i = 0; i < 2; i++) {
        pthread_create(&w[i], nullptr, wrapper, reinterpret_cast<void *>(i));
        pthread_create(&u[i], nullptr, user, nullptr);
    }
    for (auto &t : w)
        pthread_join(t, nullptr);
    stop.store(true);
    for (auto &t : u)
        pthread_join(t, nullptr);
    it = {};
    setitimer(ITIMER_PROF, &it, nullptr);
    char what[240];
    std::snprintf(what, sizeof what, "4 threads: 40000 trampolines wrapped meanwhile; %d exceptions caught through "
                                     "the newest one (%d lost), %d backtraces complete (%d short); %d SIGPROF "
                                     "ticks, %d in a trampoline walked from there",
                  thrown_ok.load(), thrown_bad.load(), walks_ok.load(), walks_bad.load(), ticks.load(),
                  ticks_in_code.load());
    bool ok = check(thrown_ok > 0 && thrown_bad == 0 && walks_ok > 0 && walks_bad == 0, what);
    std::printf("proof: threads %s %d exceptions and %d backtraces through trampolines while 40000 were "
                "wrapped in 2 other threads, 0 lost; %d SIGPROF ticks, %d in a trampoline walked from there\n",
                ok ? "proven" : "failed", thrown_ok.load(), walks_ok.load(), ticks.load(), ticks_in_code.load());
}

void part_shared()
{
    void *seen = dlvsym(RTLD_DEFAULT, "__gnu_Unwind_Find_exidx", "GLIBC_2.4");
    Dl_info info{};
    bool ours = seen && dladdr(seen, &info) && info.dli_fname && std::strstr(info.dli_fname, "libperftramp");
    char what[300];
    std::snprintf(what, sizeof what, "__gnu_Unwind_Find_exidx@GLIBC_2.4 as the dynamic linker resolves it: %s",
                  seen ? (info.dli_fname ? info.dli_fname : "?") : "none");
    check(ours, what);
    std::printf("proof: shared %s libgcc's versioned reference resolves to %s\n", ours ? "proven" : "failed",
                seen && info.dli_fname ? info.dli_fname : "nothing");
}

} // namespace

int main(int argc, char **argv)
{
    perftramp *pt = open_with(PERFTRAMP_UNWIND);
    bare = open_with(0);
    if (argc > 1 && std::strcmp(argv[1], "control") == 0) {
        throw_without_tables();
        return 0;
    }
    bool shared = false, threads = true;
    for (int i = 1; i < argc; i++) {
        shared = shared || std::strcmp(argv[i], "shared") == 0;
        threads = threads && std::strcmp(argv[i], "nothreads") != 0;
    }
    part_cxx(pt);
    part_backtrace(pt);
    if (threads)
        part_threads(pt);
    if (shared)
        part_shared();
    check(perftramp_output_error(pt, PERFTRAMP_UNWIND) == 0, "the unwind output never failed");
    perftramp_close(bare);
    check(perftramp_close(pt) == 0, "close");
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
