/* SPDX-License-Identifier: MIT */
/* Every CFI row of a real trampoline, executed on the host: a trampoline
 * from perftramp_wrap, its unwind info registered by PERFTRAMP_UNWIND (the
 * library's own in-arena .eh_frame), single-stepped with the x86-64 trap
 * flag.  At every instruction boundary the SIGTRAP handler unwinds with
 * libgcc's _Unwind_Backtrace through the signal frame into the trampoline
 * at that pc, and the caller's frame and every frame below must be those
 * of a direct call from the same call site: return address, CFA, and the
 * callee-saved registers rbx, rbp, r12-r15.  The call's return point is
 * checked from inside the target.
 *
 * Reloaded save slots are poisoned: once the target has returned, a
 * register the table saves (its SAVED rules) that holds its entry value
 * again has been reloaded, so the handler writes garbage over its save
 * slot before unwinding.  A rule that still says "saved at CFA-16" after
 * `pop %rbp` then recovers garbage and fails.  The slot is dead (below
 * the stack pointer, in the red zone the kernel's signal frame skips), so
 * the stepped trampoline runs on unharmed.
 *
 * tests/arch/run_foreign.sh does the same on every architecture with
 * trapping copies; this one runs the library's real slot and registration.
 * x86-64 only (the trap flag); valgrind does not emulate the trap flag. */
#include "config.h"

#include "api/context.h"
#include "mem/codemem.h"
#include "perftramp.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unwind.h>

#if defined(__x86_64__)

#define MAX_FRAMES 64
#define PT_EFLAGS_TF 0x100

/* Callee-saved registers (System V AMD64 psABI, fig. 3.4), DWARF numbers
 * (fig. 3.36), and where the kernel's ucontext keeps them. */
static const int csr[] = {3, 6, 12, 13, 14, 15};
#define N_CSR (sizeof csr / sizeof csr[0])

static bool uc_get(const ucontext_t *uc, unsigned r, uintptr_t *v)
{
    static const int greg[16] = {REG_RAX, REG_RDX, REG_RCX, REG_RBX, REG_RSI, REG_RDI, REG_RBP, REG_RSP,
                                 REG_R8,  REG_R9,  REG_R10, REG_R11, REG_R12, REG_R13, REG_R14, REG_R15};
    if (r >= 16)
        return false;
    *v = (uintptr_t)uc->uc_mcontext.gregs[greg[r]];
    return true;
}

struct ftrace {
    int n;
    uintptr_t ip[MAX_FRAMES], cfa[MAX_FRAMES], reg[MAX_FRAMES][N_CSR];
};

static _Unwind_Reason_Code collect(struct _Unwind_Context *ctx, void *arg)
{
    struct ftrace *t = arg;
    if (t->n == MAX_FRAMES)
        return _URC_END_OF_STACK;
    t->ip[t->n] = _Unwind_GetIP(ctx);
    t->cfa[t->n] = _Unwind_GetCFA(ctx);
    for (size_t r = 0; r < N_CSR; r++)
        t->reg[t->n][r] = _Unwind_GetGR(ctx, csr[r]);
    t->n++;
    return _URC_NO_REASON;
}

/* State shared with the handler. */
#define MAX_SAVES 8
static struct {
    uintptr_t lo, hi;                /* the trampoline's code */
    struct pt_layout l;              /* a copy: the context is closed before the verdict */
    int saves, save_reg[MAX_SAVES], save_off[MAX_SAVES];
    uintptr_t entry[MAX_SAVES];
    bool have_entry;
    volatile int target_ran, stepping;
    struct ftrace direct, in_target, trap;
    int traps;
    unsigned char visited[256];      /* per trampoline offset: 1 ok, 2 bad */
    unsigned char poisoned[256];     /* per trampoline offset: slots poisoned there */
    char first_bad[300];
} ss;

static uintptr_t poison_area[512]; /* zeros: a followed poisoned pointer leads nowhere */
#define POISON ((uintptr_t)&poison_area[256])

/* The frames of `t` below its frame in [lo, hi] must be the direct call's
 * (frame 1 on).  NULL, or the first difference. */
static const char *same_below(const struct ftrace *t, uintptr_t lo, uintptr_t hi, char *why, size_t len)
{
    const struct ftrace *d = &ss.direct;
    for (int j = 0; j < t->n; j++) {
        if (t->ip[j] < lo || t->ip[j] > hi)
            continue;
        for (int i = 1; i < d->n && j + i < t->n; i++) {
            const char *what = NULL;
            uintptr_t got = 0, want = 0;
            if (t->ip[j + i] != d->ip[i])
                what = "return address", got = t->ip[j + i], want = d->ip[i];
            else if (t->cfa[j + i] != d->cfa[i])
                what = "CFA", got = t->cfa[j + i], want = d->cfa[i];
            for (size_t r = 0; !what && r < N_CSR; r++)
                if (t->reg[j + i][r] != d->reg[i][r])
                    what = "a callee-saved register", got = t->reg[j + i][r], want = d->reg[i][r];
            if (what) {
                snprintf(why, len, "frame %d below the trampoline: %s %#lx, in the direct call %#lx%s", i, what,
                         (unsigned long)got, (unsigned long)want, got == POISON ? " (the poison)" : "");
                return why;
            }
        }
        if (t->n - j != d->n) {
            snprintf(why, len, "%d frames below the trampoline, the direct call has %d", t->n - j - 1, d->n - 1);
            return why;
        }
        return NULL;
    }
    snprintf(why, len, "no frame at the trampoline pc (%d frames)", t->n);
    return why;
}

static void on_step(int sig, siginfo_t *si, void *ucv)
{
    (void)sig;
    (void)si;
    ucontext_t *uc = ucv;
    uintptr_t pc = (uintptr_t)uc->uc_mcontext.gregs[REG_RIP];
    ss.traps++;
    if (pc < ss.lo || pc >= ss.hi)
        return;
    size_t off = pc - ss.lo;
    if (off == 0) { /* boundary 0: the registers the trampoline will save, as they enter */
        ss.have_entry = true;
        for (int i = 0; i < ss.saves; i++)
            ss.have_entry = ss.have_entry && uc_get(uc, (unsigned)ss.save_reg[i], &ss.entry[i]);
    }
    if (ss.have_entry && ss.target_ran) {
        uintptr_t cfa = ss.direct.cfa[1]; /* the target's CFA in a direct call = the trampoline's */
        for (int i = 0; i < ss.saves; i++) {
            uintptr_t live;
            if (uc_get(uc, (unsigned)ss.save_reg[i], &live) && live == ss.entry[i]) {
                memcpy((void *)(cfa + (intptr_t)ss.save_off[i]), &(uintptr_t){POISON}, sizeof(uintptr_t));
                ss.poisoned[off]++;
            }
        }
    }
    memset(&ss.trap, 0, sizeof ss.trap);
    _Unwind_Backtrace(collect, &ss.trap);
    char why[200];
    const char *bad = same_below(&ss.trap, pc, pc, why, sizeof why);
    if (ss.visited[off] != 2)
        ss.visited[off] = bad ? 2 : 1;
    if (bad && !ss.first_bad[0])
        snprintf(ss.first_bad, sizeof ss.first_bad, "boundary +%zu: %s", off, bad);
}

__attribute__((noinline)) static void tf_on(void)
{
    __asm__ volatile("pushfq\n\torq $0x100, (%%rsp)\n\tpopfq" ::: "memory", "cc");
}

__attribute__((noinline)) static void tf_off(void)
{
    __asm__ volatile("pushfq\n\tandq $-0x101, (%%rsp)\n\tpopfq" ::: "memory", "cc");
}

typedef int (*int_fn)(int);

/* The target records the walk from inside it: the direct reference, and
 * through the trampoline the call's return point. */
__attribute__((noinline)) static int b_target(int x)
{
    ss.target_ran = 1;
    memset(&ss.in_target, 0, sizeof ss.in_target);
    _Unwind_Backtrace(collect, &ss.in_target);
    __asm__ volatile("" ::: "memory");
    return x + 1;
}

__attribute__((noinline)) static int b_caller(int_fn fn, int x)
{
    int r = fn(x);
    __asm__ volatile("" ::: "memory");
    return r + 1;
}

/* One call site for the direct call and the stepped one, in one loop
 * body; the state lives in globals so the callee-saved registers there
 * are the same each time. */
static int_fn volatile g_fn, g_tramp;
static volatile int g_run;
static int g_results[2];

__attribute__((noinline)) static void run_prepare(void)
{
    ss.target_ran = 0;
    g_fn = g_run ? g_tramp : b_target;
    ss.stepping = g_run;
}

__attribute__((noinline)) static void run_after(int r)
{
    ss.stepping = 0;
    g_results[g_run] = r;
    if (g_run == 0)
        ss.direct = ss.in_target;
}

__attribute__((noinline)) static int stepped_call(void)
{
    if (ss.stepping)
        tf_on();
    int r = b_caller(g_fn, 1);
    if (ss.stepping)
        tf_off();
    __asm__ volatile("" ::: "memory");
    return r;
}

/* Steps through a trampoline of a context with `outputs`; returns the
 * number of instruction boundaries that unwound to the truth, with the
 * first failure in ss.first_bad. */
static int step_through(unsigned outputs, unsigned flags, char *in_call, size_t in_call_len)
{
    struct perftramp_options o = {.outputs = outputs, .flags = flags};
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != NULL, "perftramp_open: %s", strerror(errno));
    /* PERFTRAMP_NEAR_CALLS: b_target lies in the executable, far from the
     * arenas; the trampoline calls a thunk in code memory next to them,
     * `jmp *0(%rip)` to b_target (FF /4, ModRM 0x25 = RIP+disp32, Intel
     * SDM vol. 2): a jump pushes no frame, so every walk is unchanged */
    struct pt_code_block thunk = {0};
    perftramp_fn target = (perftramp_fn)b_target;
    if (flags & PERFTRAMP_NEAR_CALLS) {
        ck_assert_int_eq(pt_code_alloc(&thunk, 64, 16), 0);
        static const uint8_t jmp_mem[] = {0xff, 0x25, 0, 0, 0, 0};
        uint64_t to = (uint64_t)(uintptr_t)b_target;
        memcpy(thunk.w, jmp_mem, sizeof jmp_mem);
        memcpy(thunk.w + sizeof jmp_mem, &to, sizeof to);
        target = (perftramp_fn)thunk.x;
    }
    int_fn f = (int_fn)perftramp_wrap(pt, target, "py::stepped");
    ck_assert_msg(f != NULL, "perftramp_wrap: %s", strerror(errno));
    const struct pt_layout *used = pt_near_choose(pt, (uintptr_t)f, (uintptr_t)target);
    if (flags & PERFTRAMP_NEAR_CALLS)
        ck_assert_msg(used == &pt->near_layout && ((const uint8_t *)f)[used->insn_off[used->relocs[0]]] == 0xe8,
                      "the thunk %p is out of the direct call's reach from %p", (void *)thunk.x, (void *)f);
    const struct pt_arch *a = used->arch;

    memset(&ss, 0, sizeof ss);
    ss.l = *used;
    ss.lo = (uintptr_t)f;
    ss.hi = (uintptr_t)f + used->code_len;
    ck_assert_uint_le(used->code_len, sizeof ss.visited);
    for (size_t i = 0; i < a->n_insns; i++)
        for (int c = 0; c < PT_INSN_MAX_CFI; c++)
            if (a->insns[i].cfi[c].op == PT_CFI_OFFSET && ss.saves < MAX_SAVES) {
                ss.save_reg[ss.saves] = a->insns[i].cfi[c].reg;
                ss.save_off[ss.saves++] = a->insns[i].cfi[c].offset;
            }

    /* the handler on its own stack: the signal frame stays off the
     * interrupted stack */
    stack_t st = {.ss_size = 256 * 1024}, old_st;
    st.ss_sp = mmap(NULL, st.ss_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert_ptr_ne(st.ss_sp, MAP_FAILED);
    ck_assert_int_eq(sigaltstack(&st, &old_st), 0);
    struct sigaction sa, old;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_step;
    sa.sa_flags = SA_SIGINFO | SA_ONSTACK;
    sigemptyset(&sa.sa_mask);
    ck_assert_int_eq(sigaction(SIGTRAP, &sa, &old), 0);

    /* run 0: the direct reference; run 1: the same call site through the
     * trampoline, stepped */
    g_tramp = f;
    for (g_run = 0; g_run < 2; g_run++) {
        run_prepare();
        int r = stepped_call();
        run_after(r);
    }
    ck_assert_int_eq(g_results[0], 3);
    ck_assert_int_eq(g_results[1], 3);
    ck_assert_int_gt(ss.direct.n, 3);

    ck_assert_int_eq(sigaction(SIGTRAP, &old, NULL), 0);
    ck_assert_int_eq(sigaltstack(&old_st, NULL), 0);
    munmap(st.ss_sp, st.ss_size);
    ck_assert_int_gt(ss.traps, 0);

    /* the call's return point, from inside the target */
    const char *bad = same_below(&ss.in_target, ss.lo + 1, ss.hi, in_call, in_call_len);
    if (!bad)
        in_call[0] = 0;

    int ok = 0;
    for (size_t k = 0; k < a->n_insns; k++) {
        size_t off = used->insn_off[k];
        if (ss.visited[off] == 1)
            ok++;
        else if (ss.visited[off] == 0 && !ss.first_bad[0])
            snprintf(ss.first_bad, sizeof ss.first_bad, "boundary +%zu (before `%s`) was never reached", off,
                     a->insns[k].text);
        if (ss.poisoned[off])
            printf("boundary +%zu (before `%s`): %d save slot(s) poisoned\n", off, a->insns[k].text,
                   ss.poisoned[off]);
    }
    ck_assert_int_eq(perftramp_close(pt), 0);
    if (thunk.backend)
        pt_code_free(&thunk);
    return ok;
}

/* Every boundary of the trampoline of table `a` (written with `flags`)
 * unwinds to the caller's true state, and the restores were put to the
 * test: after the epilogue's reload, a save slot was poisoned at some
 * boundary. */
static void assert_every_boundary(const struct pt_arch *a, unsigned flags, const char *label)
{
    char in_call[200] = "";
    ck_assert_ptr_nonnull(a);
    int ok = step_through(PERFTRAMP_UNWIND, flags, in_call, sizeof in_call);
    printf("%s%d of %zu boundaries (%zu instructions + the call's return point) unwound to the caller's true state\n",
           label, ok + (in_call[0] ? 0 : 1), a->n_insns + 1, a->n_insns);
    ck_assert_msg(ok == (int)a->n_insns, "single step: %s", ss.first_bad);
    ck_assert_msg(!in_call[0], "from inside the target: %s", in_call);
    int poisoned = 0;
    for (size_t k = 0; k < a->n_insns; k++)
        poisoned += ss.poisoned[ss.l.insn_off[k]] > 0;
    ck_assert_msg(poisoned > 0, "no save slot was ever poisoned: a missing restore rule would pass");
}

/* The control: without PERFTRAMP_UNWIND the same walks must fail. */
static void assert_control_fails(const struct pt_arch *a, unsigned flags)
{
    char in_call[200] = "";
    int ok = step_through(0, flags, in_call, sizeof in_call);
    ck_assert_msg(ok < (int)a->n_insns, "every boundary unwound without unwind info: the check cannot fail");
    ck_assert_msg(in_call[0], "the return point unwound without unwind info: the check cannot fail");
}

START_TEST(test_every_boundary_of_a_real_trampoline)
{
    assert_every_boundary(pt_arch_host(), 0, "");
}
END_TEST

START_TEST(test_control_without_unwind_info)
{
    assert_control_fails(pt_arch_host(), 0);
}
END_TEST

/* The same for the direct-call variant (src/arch/x86_64_near.c): its
 * own instruction boundaries (the nop, the call rel32), the same FDEs. */
START_TEST(test_every_boundary_of_a_near_trampoline)
{
    assert_every_boundary(pt_arch_variant_of(pt_arch_host(), "near"), PERFTRAMP_NEAR_CALLS, "near: ");
}
END_TEST

START_TEST(test_near_control_without_unwind_info)
{
    assert_control_fails(pt_arch_variant_of(pt_arch_host(), "near"), PERFTRAMP_NEAR_CALLS);
}
END_TEST

static Suite *near_suite(void)
{
    Suite *s = suite_create("boundaries-near");
    TCase *tc = tcase_create("single-step-near");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_boundary_of_a_near_trampoline);
    tcase_add_test(tc, test_near_control_without_unwind_info);
    suite_add_tcase(s, tc);
    return s;
}

static Suite *suite(void)
{
    Suite *s = suite_create("boundaries");
    TCase *tc = tcase_create("single-step");
    tcase_set_timeout(tc, 600);
    tcase_add_test(tc, test_every_boundary_of_a_real_trampoline);
    tcase_add_test(tc, test_control_without_unwind_info);
    suite_add_tcase(s, tc);
    return s;
}

int main(void)
{
    const char *preload = getenv("LD_PRELOAD");
    if (preload && strstr(preload, "vgpreload")) {
        printf("PROOF: unwind.single-step not-run valgrind does not emulate the trap flag\n");
        printf("PROOF: arch.x86_64_near.every-boundary not-run valgrind does not emulate the trap flag\n");
        printf("SKIP: valgrind does not emulate the trap flag\n");
        return 77;
    }
    int failed = pt_check_run(suite());
    printf("PROOF: unwind.single-step %s every boundary of a library trampoline (trap flag) and its return point: "
           "caller's RA, CFA, callee-saved registers as in a direct call, reloaded save slots poisoned; the control "
           "without PERFTRAMP_UNWIND fails\n",
           failed ? "failed" : "proven");
    const struct pt_arch *near = pt_arch_variant_of(pt_arch_host(), "near");
    if (!near) { /* a host table without a direct-call variant (tests/arch/port_drill.sh's copy) */
        printf("PROOF: arch.x86_64_near.every-boundary not-run the host table %s has no near variant\n",
               pt_arch_host()->name);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
    }
    int near_failed = pt_check_run(near_suite());
    size_t nb = near->n_insns + 1;
    if (near_failed)
        printf("PROOF: arch.x86_64_near.every-boundary failed the direct-call table's single step (see above)\n");
    else
        printf("PROOF: arch.x86_64_near.every-boundary proven cfi-boundaries %zu/%zu of a library trampoline written "
               "from the direct-call table (trap flag; the control without PERFTRAMP_UNWIND fails)\n",
               nb, nb);
    return failed || near_failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#else

int main(void)
{
    printf("PROOF: unwind.single-step not-run the trap flag is x86-64 only (run_foreign.sh covers every arch)\n");
    printf("SKIP: the trap-flag single step is x86-64 only (tests/arch/run_foreign.sh covers every architecture)\n");
    return 77;
}

#endif
