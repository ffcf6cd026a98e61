/* SPDX-License-Identifier: MIT */
/* perftramp_lua.c: the glue of the Lua 5.4 port (examples/lua), a client of
 * the public API: every Lua function call runs luaV_execute through the
 * trampoline lua::<name>:<chunk>:<line> of its Proto.  Compiled into Lua
 * beside lua-perftramp.patch, which calls luaP_execute where Lua enters
 * luaV_execute from C, luaP_call for each Lua-to-Lua call (OP_CALL), and
 * luaP_release when a Proto is freed.  docs/interpreter-guide.md explains
 * each choice ("VMs that run calls in one loop"). */
#define _GNU_SOURCE
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <perftramp.h>

#include "lua.h"
#include "lobject.h"
#include "lstate.h"
#include "lvm.h"

#if PERFTRAMP_VERSION_NUMBER < 0x000200
#error "perftramp 0.2 or newer: perftramp_wrap_at gives the source line"
#endif

typedef void (*execute_fn)(lua_State *L, CallInfo *ci);

/* One context for the process, shared by every lua_State and thread:
 * trampolines are process-wide code, and one perf map / jitdump per
 * process is what perf reads.  Opened at the first Lua call, never closed:
 * a Proto's trampoline is released when the Proto is freed, and at exit
 * the outputs are complete already (each line and record is written when
 * its trampoline is made).  Closing from atexit() would free code that a
 * thread or a later exit handler may still be running. */
static perftramp *pt;
static pthread_once_t pt_once = PTHREAD_ONCE_INIT;

/* $PERFTRAMP_SIGNAL: USR2, SIGUSR2 or a number; 0 when unset or bad. */
static int signal_from_env(void)
{
    const char *v = getenv("PERFTRAMP_SIGNAL");
    if (!v || !*v)
        return 0;
    if (strncmp(v, "SIG", 3) == 0)
        v += 3;
    if (strcmp(v, "USR1") == 0)
        return SIGUSR1;
    if (strcmp(v, "USR2") == 0)
        return SIGUSR2;
    char *end;
    long n = strtol(v, &end, 10);
    if (*end || n <= 0 || n >= NSIG) {
        fprintf(stderr, "lua: PERFTRAMP_SIGNAL=%s: not a signal (USR2, SIGUSR2 or a number)\n", v);
        return 0;
    }
    return (int)n;
}

static void open_context(void)
{
    int signo = signal_from_env();
    if (signo) {
        /* the outputs stay off until the signal: the context is kept */
        struct perftramp_options o = {.flags = PERFTRAMP_SIGNAL, .signal = signo};
        pt = perftramp_open(&o);
    } else {
        pt = perftramp_open(NULL); /* $PERFTRAMP */
        /* No output and no way to switch one on later: wrapping would only
         * cost time.  Close it and run Lua as if unpatched. */
        if (pt && perftramp_outputs(pt) == 0) {
            perftramp_close(pt);
            pt = NULL;
            return;
        }
    }
    if (!pt)
        fprintf(stderr, "lua: perftramp_open (PERFTRAMP=%s): %s; running without trampolines\n",
                getenv("PERFTRAMP") ? getenv("PERFTRAMP") : "", strerror(errno));
}

/* The C stack a thread may spend on nested luaV_execute frames: at most
 * 1 MiB and a quarter of what is left below the first Lua call (about
 * 4000 nested Lua calls on x86-64 with an 8 MiB stack).  Deeper calls run
 * in the caller's loop as unpatched Lua does (no frame of their own, so no
 * name of their own).  Measured from the stack pointer, not counted, so
 * that longjmp (errors, coroutine yields) needs no bookkeeping. */
static _Thread_local const char *stack_floor;

static const char *floor_of_stack(void)
{
    const char *here = __builtin_frame_address(0);
    size_t budget = 1u << 20;
    pthread_attr_t attr;
    if (pthread_getattr_np(pthread_self(), &attr) == 0) {
        void *lo;
        size_t size;
        if (pthread_attr_getstack(&attr, &lo, &size) == 0 && here > (const char *)lo &&
            (size_t)(here - (const char *)lo) / 4 < budget)
            budget = (size_t)(here - (const char *)lo) / 4;
        pthread_attr_destroy(&attr);
    } else {
        budget = 256u << 10;
    }
    return here - budget;
}

/* The trampoline of ci's function, made at its first call. */
static __attribute__((noinline, cold)) execute_fn make_trampoline(lua_State *L, CallInfo *ci, Proto *p)
{
    lua_Debug ar;
    char name[512];
    const char *fname = NULL, *file = "?";
    /* L->ci is ci here: level 0 is the function being entered, and its
     * name ("n") comes from the caller's call instruction.  A function
     * called under several names keeps the first. */
    if (L->ci == ci && lua_getstack(L, 0, &ar) && lua_getinfo(L, "nS", &ar)) {
        fname = ar.name;
        file = ar.short_src;
    }
    /* wrap_at's line 0 means "no line" (no jitdump DEBUG_INFO, no ELF
     * .debug_line row), and a main chunk's linedefined is 0: it starts at
     * line 1, so pass 1. */
    unsigned line = p->linedefined > 0 ? (unsigned)p->linedefined : 1u;
    if (p->linedefined == 0)
        fname = "<main>";
    snprintf(name, sizeof name, "lua::%s:%s:%u", fname ? fname : "?", file, line);
    /* The source file for perf report --sort srcline: the path of a file
     * chunk ("@path"), else the short form. */
    const char *src = p->source ? getstr(p->source) : NULL;
    const char *path = src && src[0] == '@' ? src + 1 : file;
    perftramp_fn t = perftramp_wrap_at(pt, (perftramp_fn)luaV_execute, name, path, line);
    if (!t)
        return luaV_execute; /* out of memory: call it directly, try again next time */
    p->perftramp = (void *)t;
    return (execute_fn)t;
}

static inline execute_fn trampoline_of(lua_State *L, CallInfo *ci)
{
    Proto *p = clLvalue(s2v(ci->func))->p;
    if (p->perftramp)
        return (execute_fn)p->perftramp;
    return make_trampoline(L, ci, p);
}

/* Where Lua enters luaV_execute from C (lua_call, a coroutine's body, a
 * resumed coroutine's frames). */
void luaP_execute(lua_State *L, CallInfo *ci)
{
    pthread_once(&pt_once, open_context);
    if (!pt) {
        luaV_execute(L, ci);
        return;
    }
    if (!stack_floor)
        stack_floor = floor_of_stack();
    trampoline_of(L, ci)(L, ci);
}

/* OP_CALL of a Lua function: run it in a C frame of its own, through its
 * trampoline, and return 1; or return 0 and let the caller's loop run it
 * (perftramp off, or the thread's stack budget spent).  The new frame is
 * "fresh": its return leaves this luaV_execute instead of continuing the
 * caller in it.  Tail calls (OP_TAILCALL) reuse the frame, and so run
 * under the trampoline of the function that was called. */
int luaP_call(lua_State *L, CallInfo *ci)
{
    if (!pt || (const char *)__builtin_frame_address(0) < stack_floor)
        return 0;
    ci->callstatus |= CIST_FRESH;
    trampoline_of(L, ci)(L, ci);
    return 1;
}

/* From luaF_freeproto: the Proto is garbage, so is every closure of it, so
 * no frame can still run its trampoline. */
void luaP_release(Proto *p)
{
    if (pt)
        perftramp_release(pt, (perftramp_fn)p->perftramp);
    p->perftramp = NULL;
}
