/* SPDX-License-Identifier: MIT */
/* tiny's evaluator: a tree walker with ONE C call of eval_function() per
 * interpreted call.  That call goes through the function's own perftramp
 * trampoline, created the first time the function runs (as CPython's perf
 * trampoline does), so every interpreted frame has a named native frame. */
#include "tiny.h"

#include <errno.h>
#include <perftramp.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#define MAX_DEPTH 100000       /* interpreted calls deep */
#define VALUE_STACK (1u << 20) /* locals of all active calls, in values */

struct interp {
    const char *path;
    perftramp *pt;      /* NULL: trampolines unavailable, calls go direct */
    int64_t *stack;     /* value stack: each call's locals */
    size_t sp;
    int depth;
    uintptr_t stack_base;  /* C stack at tiny_run: recursion stops before it overflows */
    size_t stack_budget;
};

static void runtime_error(struct interp *in, int line, const char *fmt, ...)
{
    va_list ap;
    fflush(stdout);
    fprintf(stderr, "tiny: %s:%d: runtime error: ", in->path, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
    exit(1);
}

int64_t eval_function(struct interp *in, const struct function *fn, int64_t *locals);

/* The entry of `fn`: its trampoline, made on the first call. */
static eval_fn entry_of(struct interp *in, struct function *fn)
{
    if (fn->entry)
        return fn->entry;
    fn->entry = eval_function;
    if (in->pt) {
        char name[256];
        snprintf(name, sizeof name, "tiny::%s", fn->name);
        /* the script and the function's line: perf report --sort srcline
         * shows hot.tiny:<line> for the trampoline (jitdump DEBUG_INFO) */
        perftramp_fn t = perftramp_wrap_at(in->pt, (perftramp_fn)eval_function, name, in->path,
                                           fn->line > 0 ? (unsigned)fn->line : 0);
        if (t)
            fn->entry = (eval_fn)t;
        else
            fprintf(stderr, "tiny: no trampoline for %s: %s\n", name, strerror(errno));
    }
    return fn->entry;
}

static int64_t eval(struct interp *in, const struct node *n, int64_t *locals);

static int64_t call(struct interp *in, const struct node *n, int64_t *locals)
{
    struct function *fn = n->callee;
    uintptr_t here = (uintptr_t)__builtin_frame_address(0);
    if (in->depth >= MAX_DEPTH || VALUE_STACK - in->sp < fn->nlocals ||
        in->stack_base - here > in->stack_budget)
        runtime_error(in, n->line, "recursion too deep (%d calls, in a call of '%s')",
                      in->depth, fn->name);
    int64_t *frame = in->stack + in->sp;
    in->sp += fn->nlocals; /* nested calls in the arguments stack above */
    for (size_t i = 0; i < n->n; i++)
        frame[i] = eval(in, n->list[i], locals);
    memset(frame + n->n, 0, (fn->nlocals - n->n) * sizeof *frame);
    in->depth++;
    int64_t r = entry_of(in, fn)(in, fn, frame);
    in->depth--;
    in->sp -= fn->nlocals;
    return r;
}

/* Wrapping integer arithmetic: no undefined behaviour on overflow. */
static int64_t wrap(uint64_t v)
{
    return (int64_t)v;
}

static int64_t binop(struct interp *in, const struct node *n, int64_t a, int64_t b)
{
    switch (n->op) {
    case OP_ADD: return wrap((uint64_t)a + (uint64_t)b);
    case OP_SUB: return wrap((uint64_t)a - (uint64_t)b);
    case OP_MUL: return wrap((uint64_t)a * (uint64_t)b);
    case OP_DIV:
    case OP_MOD:
        if (b == 0)
            runtime_error(in, n->line, "division by zero");
        if (a == INT64_MIN && b == -1)
            return n->op == OP_DIV ? a : 0;
        return n->op == OP_DIV ? a / b : a % b;
    case OP_EQ: return a == b;
    case OP_NE: return a != b;
    case OP_LT: return a < b;
    case OP_LE: return a <= b;
    case OP_GT: return a > b;
    case OP_GE: return a >= b;
    }
    return 0;
}

static int64_t eval(struct interp *in, const struct node *n, int64_t *locals)
{
    switch (n->kind) {
    case N_NUM: return n->num;
    case N_VAR: return locals[n->slot];
    case N_BINOP: return binop(in, n, eval(in, n->a, locals), eval(in, n->b, locals));
    case N_NEG: return wrap(0 - (uint64_t)eval(in, n->a, locals));
    case N_NOT: return !eval(in, n->a, locals);
    case N_AND: return eval(in, n->a, locals) && eval(in, n->b, locals);
    case N_OR: return eval(in, n->a, locals) || eval(in, n->b, locals);
    case N_CALL: return call(in, n, locals);
    default: runtime_error(in, n->line, "internal error: node %d is not an expression", (int)n->kind);
    }
    return 0;
}

/* Runs statement `n`; returns 1 when it executed `return` (value in *ret). */
static int exec(struct interp *in, const struct node *n, int64_t *locals, int64_t *ret)
{
    switch (n->kind) {
    case N_BLOCK:
        for (size_t i = 0; i < n->n; i++)
            if (exec(in, n->list[i], locals, ret))
                return 1;
        return 0;
    case N_ASSIGN:
        locals[n->slot] = eval(in, n->a, locals);
        return 0;
    case N_EXPR:
        eval(in, n->a, locals);
        return 0;
    case N_IF:
        if (eval(in, n->a, locals))
            return exec(in, n->b, locals, ret);
        return n->c ? exec(in, n->c, locals, ret) : 0;
    case N_WHILE:
        while (eval(in, n->a, locals))
            if (exec(in, n->b, locals, ret))
                return 1;
        return 0;
    case N_RETURN:
        *ret = n->a ? eval(in, n->a, locals) : 0;
        return 1;
    case N_PRINT:
        for (size_t i = 0; i < n->n; i++) {
            if (i)
                putchar(' ');
            if (n->list[i]->kind == N_STR)
                fputs(n->list[i]->str, stdout);
            else
                printf("%lld", (long long)eval(in, n->list[i], locals));
        }
        putchar('\n');
        return 0;
    default:
        eval(in, n, locals);
        return 0;
    }
}

/* One interpreted call: the function every trampoline wraps.  Not static
 * and never inlined, so perf shows it under each tiny::<name> frame. */
__attribute__((noinline)) int64_t eval_function(struct interp *in, const struct function *fn,
                                                int64_t *locals)
{
    int64_t ret = 0;
    exec(in, fn->body, locals, &ret);
    return ret;
}

/* $PERFTRAMP_SIGNAL: USR2, SIGUSR2 or a number; 0 when unset, -1 when bad. */
static int signal_from_env(void)
{
    const char *v = getenv("PERFTRAMP_SIGNAL");
    if (!v || !*v)
        return 0;
    if (strncmp(v, "SIG", 3) == 0)
        v += 3;
    static const struct { const char *name; int signo; } names[] = {
        {"USR1", SIGUSR1}, {"USR2", SIGUSR2}, {"HUP", SIGHUP}, {"PROF", SIGPROF}, {"WINCH", SIGWINCH},
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        if (strcmp(v, names[i].name) == 0)
            return names[i].signo;
    char *end;
    long n = strtol(v, &end, 10);
    return *end || n <= 0 || n >= NSIG ? -1 : (int)n;
}

/* Outputs from $PERFTRAMP, or, with $PERFTRAMP_SIGNAL (PERFTRAMP_SIGNAL),
 * none until that signal arrives: then $PERFTRAMP's outputs (perf map and
 * jitdump when it is unset) until the next one (`kill -USR2 <pid>`, then
 * `perf record -p <pid>`). */
static perftramp *open_perftramp(void)
{
    int signo = signal_from_env();
    if (signo < 0) {
        fprintf(stderr, "tiny: PERFTRAMP_SIGNAL=%s: not a signal (USR2, SIGUSR2 or a number)\n",
                getenv("PERFTRAMP_SIGNAL"));
        errno = EINVAL;
        return NULL;
    }
    if (!signo)
        return perftramp_open(NULL);
    struct perftramp_options o = {.outputs = 0, .flags = PERFTRAMP_SIGNAL, .signal = signo};
    return perftramp_open(&o);
}

int tiny_run(struct program *prog)
{
    struct interp in = { .path = prog->path };
    in.pt = open_perftramp(); /* outputs from $PERFTRAMP, or switched by $PERFTRAMP_SIGNAL */
    if (!in.pt)
        fprintf(stderr, "tiny: perftramp_open (PERFTRAMP=%s): %s; running without trampolines\n",
                getenv("PERFTRAMP") ? getenv("PERFTRAMP") : "", strerror(errno));
    in.stack = calloc(VALUE_STACK, sizeof *in.stack);
    if (!in.stack) {
        perror("tiny");
        return 2;
    }
    /* Use at most 3/4 of the C stack (capped at 64 MiB): the rest is for
     * the evaluator's deepest expression and printf. */
    struct rlimit rl;
    size_t stack = 8u << 20;
    if (getrlimit(RLIMIT_STACK, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
        stack = rl.rlim_cur < (64u << 20) ? (size_t)rl.rlim_cur : (64u << 20);
    in.stack_base = (uintptr_t)__builtin_frame_address(0);
    in.stack_budget = stack / 4 * 3;
    int64_t *frame = in.stack;
    in.sp = prog->main->nlocals;
    entry_of(&in, prog->main)(&in, prog->main, frame);
    fflush(stdout);
    free(in.stack);
    if (in.pt && perftramp_close(in.pt) != 0) {
        fprintf(stderr, "tiny: perftramp_close: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
