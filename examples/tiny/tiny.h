/* SPDX-License-Identifier: MIT */
/* tiny: a small example interpreter that uses perftramp.
 *
 * The language: integer values, functions, recursion, arithmetic,
 * comparison, if/else, while, return and print.
 *
 *     # comment
 *     fn fib(n) {
 *         if (n < 2) { return n; }
 *         return fib(n - 1) + fib(n - 2);
 *     }
 *     print("fib(25) =", fib(25));
 *
 * Statements outside functions form the script's body, which runs as the
 * function "<main>".  Every call of an interpreted function is ONE call of
 * the C function eval_function(), made through that function's own
 * trampoline "tiny::<name>", so perf shows one named frame per call. */
#ifndef TINY_H
#define TINY_H

#include <stddef.h>
#include <stdint.h>

enum node_kind {
    N_NUM,    /* num */
    N_STR,    /* str (print arguments only) */
    N_VAR,    /* slot */
    N_ASSIGN, /* slot = a */
    N_BINOP,  /* a op b */
    N_NEG,    /* -a */
    N_NOT,    /* !a */
    N_AND,    /* a && b */
    N_OR,     /* a || b */
    N_CALL,   /* name(list...), resolved to callee */
    N_IF,     /* if (a) b else c */
    N_WHILE,  /* while (a) b */
    N_RETURN, /* return a */
    N_PRINT,  /* print(list...) */
    N_EXPR,   /* a; */
    N_BLOCK   /* { list... } */
};

/* Binary operators, by token spelling. */
enum binop { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };

struct function;

struct node {
    enum node_kind kind;
    int line;
    enum binop op;
    int64_t num;
    int slot;
    const char *str;           /* N_STR text, N_CALL callee name */
    struct function *callee;   /* N_CALL, set once the whole script is parsed */
    struct node *a, *b, *c;
    struct node **list;
    size_t n;
};

struct interp;

/* The evaluator's signature: every argument travels in a register, as a
 * trampoline requires. */
typedef int64_t (*eval_fn)(struct interp *in, const struct function *fn, int64_t *locals);

struct function {
    char *name;
    int line;
    size_t nparams;
    size_t nlocals;       /* parameters first, then the other locals */
    char **local_names;
    struct node *body;
    eval_fn entry;        /* NULL until the first call: then its trampoline */
    struct function *next;
};

struct program {
    const char *path;
    struct function *functions; /* the user's functions */
    struct function *main;      /* the script body, "<main>" */
};

/* Parses `src` (NUL-terminated).  On error prints "path:line: message"
 * to stderr and returns -1. */
int tiny_parse(const char *path, const char *src, struct program *prog);
void tiny_free(struct program *prog);

/* Runs the program's body.  Returns the process exit status. */
int tiny_run(struct program *prog);

#endif
