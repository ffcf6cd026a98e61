/* SPDX-License-Identifier: MIT */
/* The smallest perftramp client: wrap a function, call it through its
 * trampoline, release it.  Outputs come from $PERFTRAMP (perfmap, jitdump,
 * unwind, gdb, all). */
#include <errno.h>
#include <perftramp.h>
#include <stdio.h>
#include <string.h>

static double evaluate(const char *what, int a, double b)
{
    printf("  evaluate(\"%s\", %d, %.1f) called\n", what, a, b);
    return a * b;
}

int main(void)
{
    perftramp *pt = perftramp_open(NULL);
    if (!pt) {
        fprintf(stderr, "perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    typedef double (*eval_fn)(const char *, int, double);
    eval_fn tramp = (eval_fn)perftramp_wrap(pt, (perftramp_fn)evaluate, "hello::evaluate");
    if (!tramp) {
        fprintf(stderr, "perftramp_wrap: %s\n", strerror(errno));
        return 1;
    }
    printf("perftramp %s: trampoline for evaluate() at %p\n", perftramp_version(), (void *)tramp);
    double r = tramp("through the trampoline", 6, 7.0);
    printf("result %.1f (direct call gives %.1f)\n", r, evaluate("directly", 6, 7.0));
    perftramp_release(pt, (perftramp_fn)tramp);
    return perftramp_close(pt) == 0 && r == 42.0 ? 0 : 1;
}
