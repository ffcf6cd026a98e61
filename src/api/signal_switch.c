/* SPDX-License-Identifier: MIT */
/* PERFTRAMP_SIGNAL: a signal toggles the outputs of a running process.
 *
 * Why it is safe.  The handler only reads a static table and calls
 * sem_post(3), both async-signal-safe (POSIX lists sem_post; the table is
 * static storage read with lock-free atomics).  It never takes the
 * context's lock, never allocates, never touches a context: a signal that
 * lands inside perftramp_wrap (which holds the lock and may be inside
 * malloc) cannot deadlock or corrupt anything.  The switch itself runs in
 * a helper thread, one per context, that waits on the semaphore and then
 * calls perftramp_set_outputs like any other thread: under the lock, so
 * concurrent wraps see it exactly once.  A helper thread rather than "at
 * the next wrap": an interpreter whose functions are all wrapped already
 * may never wrap again, and must still switch on when signalled.
 *
 * The table lives for the process (static), so the handler never reads
 * freed memory: perftramp_close stops the helper, then frees the slot for
 * reuse.  The previous disposition of the signal is chained when it was a
 * handler, and restored when the last context using the signal closes.
 *
 * fork: the child has the handler and the table but no helper thread (fork
 * copies only the calling thread).  A thread cannot be started safely in
 * fork's child handler (only async-signal-safe calls are allowed there in
 * a multithreaded parent's child), so the child's helper starts at its
 * first perftramp_wrap (with PERFTRAMP_ATFORK) or at
 * perftramp_after_fork_child; until then the
 * signal is counted by the semaphore and acted on once the helper runs.
 * The table's lock is held across fork (pthread_atfork), so the child
 * never inherits it locked. */
#include "config.h"

#include "api/context.h"

#include <errno.h>
#include <semaphore.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#define PT_SIGNAL_SLOTS 16

struct pt_signal_slot {
    atomic_int signo;      /* 0: free; the handler posts to slots with its signal */
    atomic_bool stop;
    atomic_bool forked;    /* in a forked child: no helper thread yet */
    sem_t sem;
    pthread_t thread;
    struct perftramp *pt;
};

static struct pt_signal_slot pt_signal_slots[PT_SIGNAL_SLOTS];
static pthread_mutex_t pt_signal_lock = PTHREAD_MUTEX_INITIALIZER; /* claiming slots, sigaction */
static struct sigaction pt_signal_old[NSIG];
static int pt_signal_users[NSIG];
static pthread_once_t pt_signal_atfork_once = PTHREAD_ONCE_INIT;

static void before_fork(void)
{
    pthread_mutex_lock(&pt_signal_lock);
}
static void parent_after_fork(void)
{
    pthread_mutex_unlock(&pt_signal_lock);
}
/* Only flags and an unlock: async-signal-safe work, as a child of a
 * multithreaded parent must do. */
static void child_after_fork(void)
{
    for (int k = 0; k < PT_SIGNAL_SLOTS; k++)
        if (pt_signal_slots[k].pt)
            atomic_store(&pt_signal_slots[k].forked, true);
    pthread_mutex_unlock(&pt_signal_lock);
}
static void register_atfork(void)
{
    (void)pthread_atfork(before_fork, parent_after_fork, child_after_fork);
}

static void on_signal(int signo, siginfo_t *info, void *uctx)
{
    int saved = errno;
    for (int k = 0; k < PT_SIGNAL_SLOTS; k++)
        if (atomic_load(&pt_signal_slots[k].signo) == signo)
            sem_post(&pt_signal_slots[k].sem);
    const struct sigaction *old = &pt_signal_old[signo];
    if (old->sa_flags & SA_SIGINFO) {
        if (old->sa_sigaction)
            old->sa_sigaction(signo, info, uctx);
    } else if (old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN && old->sa_handler) {
        old->sa_handler(signo);
    }
    errno = saved;
}

/* What the signal toggles: every output off when any is on, else the
 * outputs chosen at open. */
static void *helper(void *arg)
{
    struct pt_signal_slot *s = arg;
    for (;;) {
        while (sem_wait(&s->sem) < 0 && errno == EINTR)
            ;
        if (atomic_load(&s->stop))
            return NULL;
        struct perftramp *pt = s->pt;
        unsigned want = perftramp_outputs(pt) ? 0 : pt->signal_outputs;
        (void)perftramp_set_outputs(pt, want); /* a failure shows in perftramp_outputs */
    }
}

int pt_signal_start(struct perftramp *pt, int signo)
{
    if (signo <= 0 || signo >= NSIG || signo == SIGKILL || signo == SIGSTOP) {
        errno = EINVAL;
        return -1;
    }
    /* $PERFTRAMP's outputs, else those asked for at open, else what both
     * perf modes need: the map (fp) and the jitdump (dwarf) */
    unsigned env = 0;
    if (pt_parse_outputs(secure_getenv("PERFTRAMP"), &env) < 0)
        env = 0;
    pt->signal_outputs = env ? env : pt->outputs ? pt->outputs : PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP;
    pthread_once(&pt_signal_atfork_once, register_atfork);
    pthread_mutex_lock(&pt_signal_lock);
    struct pt_signal_slot *s = NULL;
    for (int k = 0; k < PT_SIGNAL_SLOTS && !s; k++)
        if (atomic_load(&pt_signal_slots[k].signo) == 0 && !pt_signal_slots[k].pt)
            s = &pt_signal_slots[k];
    int e = 0;
    if (!s) {
        e = EBUSY;
        goto out;
    }
    if (sem_init(&s->sem, 0, 0) < 0) {
        e = errno;
        goto out;
    }
    s->pt = pt;
    atomic_store(&s->stop, false);
    atomic_store(&s->forked, false);
    if ((e = pthread_create(&s->thread, NULL, helper, s)) != 0) {
        sem_destroy(&s->sem);
        s->pt = NULL;
        goto out;
    }
    if (pt_signal_users[signo]++ == 0) {
        struct sigaction sa;
        memset(&sa, 0, sizeof sa);
        sa.sa_sigaction = on_signal;
        sa.sa_flags = SA_SIGINFO | SA_RESTART;
        sigemptyset(&sa.sa_mask);
        if (sigaction(signo, &sa, &pt_signal_old[signo]) < 0) {
            e = errno;
            pt_signal_users[signo]--;
            atomic_store(&s->stop, true);
            sem_post(&s->sem);
            pthread_join(s->thread, NULL);
            sem_destroy(&s->sem);
            s->pt = NULL;
            goto out;
        }
    }
    atomic_store(&s->signo, signo);
    pt->signal_slot = s;
out:
    pthread_mutex_unlock(&pt_signal_lock);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}

void pt_signal_stop(struct perftramp *pt)
{
    struct pt_signal_slot *s = pt->signal_slot;
    if (!s)
        return;
    pthread_mutex_lock(&pt_signal_lock);
    int signo = atomic_exchange(&s->signo, 0);
    atomic_store(&s->stop, true);
    if (!atomic_load(&s->forked)) { /* a forked child's helper never started */
        sem_post(&s->sem);
        pthread_join(s->thread, NULL);
    }
    if (--pt_signal_users[signo] == 0)
        sigaction(signo, &pt_signal_old[signo], NULL);
    /* a handler that read signo before the exchange may still post: the
     * semaphore stays valid (static storage); it is re-initialised on reuse */
    s->pt = NULL;
    pt->signal_slot = NULL;
    pthread_mutex_unlock(&pt_signal_lock);
}

int pt_signal_after_fork(struct perftramp *pt)
{
    struct pt_signal_slot *s = pt->signal_slot;
    if (!s || !atomic_load(&s->forked))
        return 0;
    pthread_mutex_lock(&pt_signal_lock);
    int e = 0;
    if (atomic_load(&s->forked)) {
        /* the semaphore (its count: signals that came before) is the
         * parent's copy, usable as is */
        e = pthread_create(&s->thread, NULL, helper, s);
        if (e == 0)
            atomic_store(&s->forked, false);
    }
    pthread_mutex_unlock(&pt_signal_lock);
    if (e) {
        errno = e;
        return -1;
    }
    return 0;
}
