/* SPDX-License-Identifier: MIT */
/* tiny's lexer and recursive-descent parser: source text -> functions of
 * AST nodes, with local variables resolved to frame slots and calls
 * resolved to functions (which may be defined after their use). */
#include "tiny.h"

#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum tok {
    T_EOF, T_NUM, T_IDENT, T_STR,
    T_FN, T_IF, T_ELSE, T_WHILE, T_RETURN, T_PRINT,
    T_LPAREN, T_RPAREN, T_LBRACE, T_RBRACE, T_COMMA, T_SEMI, T_ASSIGN,
    T_PLUS, T_MINUS, T_STAR, T_SLASH, T_PERCENT,
    T_EQ, T_NE, T_LT, T_LE, T_GT, T_GE, T_AND, T_OR, T_NOT
};

struct parser {
    const char *path;
    const char *p;      /* next unread character */
    int line;
    enum tok tok;       /* current token */
    int tok_line;
    const char *tok_start;
    size_t tok_len;
    int64_t num;
    struct function *fn; /* function being parsed (locals) */
    struct program *prog;
    int failed;
};

static void error_at(struct parser *ps, int line, const char *fmt, ...)
{
    va_list ap;
    if (ps->failed)
        return;
    ps->failed = 1;
    fprintf(stderr, "tiny: %s:%d: syntax error: ", ps->path, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fputc('\n', stderr);
}

static void *xcalloc(size_t n, size_t size)
{
    void *p = calloc(n, size);
    if (!p) {
        perror("tiny");
        exit(2);
    }
    return p;
}

static char *xstrndup(const char *s, size_t n)
{
    char *d = xcalloc(n + 1, 1);
    memcpy(d, s, n);
    return d;
}

static const struct { const char *word; enum tok tok; } keywords[] = {
    { "fn", T_FN }, { "if", T_IF }, { "else", T_ELSE }, { "while", T_WHILE },
    { "return", T_RETURN }, { "print", T_PRINT },
};

/* Reads the next token into ps->tok. */
static void next(struct parser *ps)
{
    for (;;) {
        while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\r' || *ps->p == '\n') {
            if (*ps->p == '\n')
                ps->line++;
            ps->p++;
        }
        if (*ps->p != '#')
            break;
        while (*ps->p && *ps->p != '\n')
            ps->p++;
    }
    ps->tok_line = ps->line;
    ps->tok_start = ps->p;
    const char *p = ps->p;
    char c = *p;
    if (c == '\0') {
        ps->tok = T_EOF;
        ps->tok_len = 0;
        return;
    }
    if (isdigit((unsigned char)c)) {
        uint64_t v = 0;
        while (isdigit((unsigned char)*p)) {
            if (v > (uint64_t)INT64_MAX / 10 || v * 10 + (uint64_t)(*p - '0') > (uint64_t)INT64_MAX) {
                error_at(ps, ps->line, "number too large");
                v = 0;
            }
            v = v * 10 + (uint64_t)(*p - '0');
            p++;
        }
        ps->tok = T_NUM;
        ps->num = (int64_t)v;
    } else if (isalpha((unsigned char)c) || c == '_') {
        while (isalnum((unsigned char)*p) || *p == '_')
            p++;
        ps->tok = T_IDENT;
        for (size_t i = 0; i < sizeof keywords / sizeof keywords[0]; i++)
            if ((size_t)(p - ps->p) == strlen(keywords[i].word) &&
                memcmp(ps->p, keywords[i].word, (size_t)(p - ps->p)) == 0)
                ps->tok = keywords[i].tok;
    } else if (c == '"') {
        p++;
        while (*p && *p != '"' && *p != '\n')
            p++;
        if (*p != '"') {
            error_at(ps, ps->line, "unterminated string");
            ps->tok = T_EOF;
            return;
        }
        p++;
        ps->tok = T_STR;
    } else {
        static const struct { const char *s; enum tok tok; } ops[] = {
            { "==", T_EQ }, { "!=", T_NE }, { "<=", T_LE }, { ">=", T_GE },
            { "&&", T_AND }, { "||", T_OR },
            { "(", T_LPAREN }, { ")", T_RPAREN }, { "{", T_LBRACE }, { "}", T_RBRACE },
            { ",", T_COMMA }, { ";", T_SEMI }, { "=", T_ASSIGN }, { "+", T_PLUS },
            { "-", T_MINUS }, { "*", T_STAR }, { "/", T_SLASH }, { "%", T_PERCENT },
            { "<", T_LT }, { ">", T_GT }, { "!", T_NOT },
        };
        size_t i;
        for (i = 0; i < sizeof ops / sizeof ops[0]; i++)
            if (strncmp(p, ops[i].s, strlen(ops[i].s)) == 0)
                break;
        if (i == sizeof ops / sizeof ops[0]) {
            if (isprint((unsigned char)c))
                error_at(ps, ps->line, "unexpected character '%c'", c);
            else
                error_at(ps, ps->line, "unexpected byte 0x%02x", (unsigned char)c);
            ps->tok = T_EOF;
            return;
        }
        p += strlen(ops[i].s);
        ps->tok = ops[i].tok;
    }
    ps->tok_len = (size_t)(p - ps->p);
    ps->p = p;
}

static void describe(struct parser *ps, char *buf, size_t size)
{
    if (ps->tok == T_EOF)
        snprintf(buf, size, "end of file");
    else
        snprintf(buf, size, "'%.*s'", (int)(ps->tok_len > 40 ? 40 : ps->tok_len), ps->tok_start);
}

static int expect(struct parser *ps, enum tok tok, const char *what)
{
    if (ps->tok == tok) {
        next(ps);
        return 1;
    }
    char found[64];
    describe(ps, found, sizeof found);
    error_at(ps, ps->tok_line, "expected %s but found %s", what, found);
    return 0;
}

static struct node *new_node(enum node_kind kind, int line)
{
    struct node *n = xcalloc(1, sizeof *n);
    n->kind = kind;
    n->line = line;
    return n;
}

static void append(struct node *list, struct node *item)
{
    list->list = realloc(list->list, (list->n + 1) * sizeof *list->list);
    if (!list->list) {
        perror("tiny");
        exit(2);
    }
    list->list[list->n++] = item;
}

/* The frame slot of local `name` in the current function, created on
 * first sight when `create` is set; -1 when unknown. */
static int local_slot(struct parser *ps, const char *name, size_t len, int create)
{
    struct function *fn = ps->fn;
    for (size_t i = 0; i < fn->nlocals; i++)
        if (strlen(fn->local_names[i]) == len && memcmp(fn->local_names[i], name, len) == 0)
            return (int)i;
    if (!create)
        return -1;
    fn->local_names = realloc(fn->local_names, (fn->nlocals + 1) * sizeof *fn->local_names);
    if (!fn->local_names) {
        perror("tiny");
        exit(2);
    }
    fn->local_names[fn->nlocals] = xstrndup(name, len);
    return (int)fn->nlocals++;
}

static struct node *expression(struct parser *ps);

static struct node *call_args(struct parser *ps, struct node *call)
{
    expect(ps, T_LPAREN, "'('");
    if (ps->tok != T_RPAREN) {
        for (;;) {
            if (ps->failed)
                return call;
            if (call->kind == N_PRINT && ps->tok == T_STR) {
                struct node *s = new_node(N_STR, ps->tok_line);
                s->str = xstrndup(ps->tok_start + 1, ps->tok_len - 2);
                next(ps);
                append(call, s);
            } else {
                append(call, expression(ps));
            }
            if (ps->tok != T_COMMA)
                break;
            next(ps);
        }
    }
    expect(ps, T_RPAREN, "')'");
    return call;
}

static struct node *primary(struct parser *ps)
{
    int line = ps->tok_line;
    if (ps->tok == T_NUM) {
        struct node *n = new_node(N_NUM, line);
        n->num = ps->num;
        next(ps);
        return n;
    }
    if (ps->tok == T_IDENT) {
        const char *name = ps->tok_start;
        size_t len = ps->tok_len;
        next(ps);
        if (ps->tok == T_LPAREN) {
            struct node *n = new_node(N_CALL, line);
            n->str = xstrndup(name, len);
            return call_args(ps, n);
        }
        int slot = local_slot(ps, name, len, 0);
        if (slot < 0) {
            error_at(ps, line, "unknown variable '%.*s'", (int)len, name);
            slot = 0;
        }
        struct node *n = new_node(N_VAR, line);
        n->slot = slot;
        return n;
    }
    if (ps->tok == T_LPAREN) {
        next(ps);
        struct node *n = expression(ps);
        expect(ps, T_RPAREN, "')'");
        return n;
    }
    if (ps->tok == T_MINUS || ps->tok == T_NOT) {
        struct node *n = new_node(ps->tok == T_MINUS ? N_NEG : N_NOT, line);
        next(ps);
        n->a = primary(ps);
        return n;
    }
    char found[64];
    describe(ps, found, sizeof found);
    error_at(ps, line, "expected an expression but found %s", found);
    return new_node(N_NUM, line);
}

/* Precedence climbing over the binary operators; higher binds tighter. */
static int precedence(enum tok t, enum node_kind *kind, enum binop *op)
{
    static const struct { enum tok tok; int prec; enum node_kind kind; enum binop op; } table[] = {
        { T_OR, 1, N_OR, OP_ADD }, { T_AND, 2, N_AND, OP_ADD },
        { T_EQ, 3, N_BINOP, OP_EQ }, { T_NE, 3, N_BINOP, OP_NE },
        { T_LT, 4, N_BINOP, OP_LT }, { T_LE, 4, N_BINOP, OP_LE },
        { T_GT, 4, N_BINOP, OP_GT }, { T_GE, 4, N_BINOP, OP_GE },
        { T_PLUS, 5, N_BINOP, OP_ADD }, { T_MINUS, 5, N_BINOP, OP_SUB },
        { T_STAR, 6, N_BINOP, OP_MUL }, { T_SLASH, 6, N_BINOP, OP_DIV },
        { T_PERCENT, 6, N_BINOP, OP_MOD },
    };
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (table[i].tok == t) {
            *kind = table[i].kind;
            *op = table[i].op;
            return table[i].prec;
        }
    return 0;
}

static struct node *binary(struct parser *ps, int min_prec)
{
    struct node *left = primary(ps);
    for (;;) {
        enum node_kind kind;
        enum binop op;
        int prec = precedence(ps->tok, &kind, &op);
        if (prec == 0 || prec < min_prec || ps->failed)
            return left;
        struct node *n = new_node(kind, ps->tok_line);
        n->op = op;
        next(ps);
        n->a = left;
        n->b = binary(ps, prec + 1);
        left = n;
    }
}

static struct node *expression(struct parser *ps)
{
    return binary(ps, 1);
}

static struct node *statement(struct parser *ps);

static struct node *block(struct parser *ps)
{
    struct node *b = new_node(N_BLOCK, ps->tok_line);
    if (!expect(ps, T_LBRACE, "'{'"))
        return b;
    while (ps->tok != T_RBRACE && ps->tok != T_EOF && !ps->failed)
        append(b, statement(ps));
    expect(ps, T_RBRACE, "'}'");
    return b;
}

static struct node *statement(struct parser *ps)
{
    int line = ps->tok_line;
    switch (ps->tok) {
    case T_IF: {
        struct node *n = new_node(N_IF, line);
        next(ps);
        expect(ps, T_LPAREN, "'(' after 'if'");
        n->a = expression(ps);
        expect(ps, T_RPAREN, "')'");
        n->b = block(ps);
        if (ps->tok == T_ELSE) {
            next(ps);
            n->c = ps->tok == T_IF ? statement(ps) : block(ps);
        }
        return n;
    }
    case T_WHILE: {
        struct node *n = new_node(N_WHILE, line);
        next(ps);
        expect(ps, T_LPAREN, "'(' after 'while'");
        n->a = expression(ps);
        expect(ps, T_RPAREN, "')'");
        n->b = block(ps);
        return n;
    }
    case T_RETURN: {
        struct node *n = new_node(N_RETURN, line);
        next(ps);
        if (ps->tok != T_SEMI)
            n->a = expression(ps);
        expect(ps, T_SEMI, "';'");
        return n;
    }
    case T_PRINT: {
        struct node *n = new_node(N_PRINT, line);
        next(ps);
        call_args(ps, n);
        expect(ps, T_SEMI, "';'");
        return n;
    }
    case T_LBRACE:
        return block(ps);
    case T_FN:
        error_at(ps, line, "functions are defined only at the top level");
        return new_node(N_BLOCK, line);
    case T_IDENT: {
        /* name = expr;   or an expression statement */
        const char *name = ps->tok_start;
        size_t len = ps->tok_len;
        next(ps);
        if (ps->tok == T_ASSIGN) {
            next(ps);
            struct node *n = new_node(N_ASSIGN, line);
            n->a = expression(ps);
            n->slot = local_slot(ps, name, len, 1); /* after the value: `x = x;` needs x */
            expect(ps, T_SEMI, "';'");
            return n;
        }
        ps->p = name; /* re-read the identifier as the start of an expression */
        ps->line = line;
        next(ps);
        break;
    }
    default:
        break;
    }
    struct node *n = new_node(N_EXPR, line);
    n->a = expression(ps);
    expect(ps, T_SEMI, "';'");
    return n;
}

static struct function *new_function(const char *name, size_t len, int line)
{
    struct function *fn = xcalloc(1, sizeof *fn);
    fn->name = xstrndup(name, len);
    fn->line = line;
    return fn;
}

static struct function *find_function(struct program *prog, const char *name)
{
    for (struct function *f = prog->functions; f; f = f->next)
        if (strcmp(f->name, name) == 0)
            return f;
    return NULL;
}

static void function_definition(struct parser *ps)
{
    int line = ps->tok_line;
    next(ps); /* fn */
    if (ps->tok != T_IDENT) {
        expect(ps, T_IDENT, "a function name");
        return;
    }
    struct function *fn = new_function(ps->tok_start, ps->tok_len, line);
    if (find_function(ps->prog, fn->name))
        error_at(ps, line, "function '%s' is already defined", fn->name);
    fn->next = ps->prog->functions;
    ps->prog->functions = fn;
    next(ps);
    struct function *outer = ps->fn;
    ps->fn = fn;
    expect(ps, T_LPAREN, "'('");
    if (ps->tok != T_RPAREN) {
        for (;;) {
            if (ps->tok != T_IDENT) {
                expect(ps, T_IDENT, "a parameter name");
                break;
            }
            if (local_slot(ps, ps->tok_start, ps->tok_len, 0) >= 0)
                error_at(ps, ps->tok_line, "parameter '%.*s' appears twice", (int)ps->tok_len, ps->tok_start);
            local_slot(ps, ps->tok_start, ps->tok_len, 1);
            next(ps);
            if (ps->tok != T_COMMA)
                break;
            next(ps);
        }
    }
    fn->nparams = fn->nlocals;
    expect(ps, T_RPAREN, "')'");
    fn->body = block(ps);
    ps->fn = outer;
}

/* Resolves every call below `n` to its function and checks its arity. */
static void resolve(struct parser *ps, struct node *n)
{
    if (!n || ps->failed)
        return;
    if (n->kind == N_CALL) {
        n->callee = find_function(ps->prog, n->str);
        if (!n->callee)
            error_at(ps, n->line, "call of undefined function '%s'", n->str);
        else if (n->callee->nparams != n->n)
            error_at(ps, n->line, "'%s' takes %zu argument%s but is given %zu", n->str,
                     n->callee->nparams, n->callee->nparams == 1 ? "" : "s", n->n);
    }
    resolve(ps, n->a);
    resolve(ps, n->b);
    resolve(ps, n->c);
    for (size_t i = 0; i < n->n; i++)
        resolve(ps, n->list[i]);
}

int tiny_parse(const char *path, const char *src, struct program *prog)
{
    struct parser ps = { .path = path, .p = src, .line = 1, .prog = prog };
    memset(prog, 0, sizeof *prog);
    prog->path = path;
    prog->main = new_function("<main>", strlen("<main>"), 1);
    prog->main->body = new_node(N_BLOCK, 1);
    next(&ps);
    while (ps.tok != T_EOF && !ps.failed) {
        if (ps.tok == T_FN) {
            function_definition(&ps);
        } else {
            ps.fn = prog->main;
            append(prog->main->body, statement(&ps));
        }
    }
    for (struct function *f = prog->functions; f; f = f->next)
        resolve(&ps, f->body);
    resolve(&ps, prog->main->body);
    if (ps.failed) {
        errno = EINVAL;
        return -1;
    }
    return 0;
}

static void free_node(struct node *n)
{
    if (!n)
        return;
    free_node(n->a);
    free_node(n->b);
    free_node(n->c);
    for (size_t i = 0; i < n->n; i++)
        free_node(n->list[i]);
    free(n->list);
    free((char *)n->str);
    free(n);
}

static void free_function(struct function *fn)
{
    free_node(fn->body);
    for (size_t i = 0; i < fn->nlocals; i++)
        free(fn->local_names[i]);
    free(fn->local_names);
    free(fn->name);
    free(fn);
}

void tiny_free(struct program *prog)
{
    while (prog->functions) {
        struct function *next_fn = prog->functions->next;
        free_function(prog->functions);
        prog->functions = next_fn;
    }
    if (prog->main)
        free_function(prog->main);
    prog->main = NULL;
}
