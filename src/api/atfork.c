/* SPDX-License-Identifier: MIT */
/* One pthread_atfork registration for all PERFTRAMP_ATFORK contexts.
 * prepare takes the list lock then every context lock (so no context is
 * half-updated at the fork), and runs each context's before-fork step;
 * parent releases them; the child releases
 * them too (the forking thread owns them there) and re-runs each
 * context's outputs for its new pid. */
#include "api/atfork.h"

#include <errno.h>
#include <pthread.h>
#include <stdlib.h>

static pthread_mutex_t list_lock = PTHREAD_MUTEX_INITIALIZER;
struct entry {
    void *ctx;
    pthread_mutex_t *lock;
    pt_atfork_fn before, child;
};

static struct entry *list;
static size_t n_list, cap_list;
static pthread_once_t once = PTHREAD_ONCE_INIT;
static int install_error;

static void prepare(void)
{
    pthread_mutex_lock(&list_lock);
    for (size_t i = 0; i < n_list; i++) {
        pthread_mutex_lock(list[i].lock);
        if (list[i].before)
            list[i].before(list[i].ctx);
    }
}

static void parent(void)
{
    for (size_t i = n_list; i-- > 0;)
        pthread_mutex_unlock(list[i].lock);
    pthread_mutex_unlock(&list_lock);
}

static void child(void)
{
    for (size_t i = n_list; i-- > 0;)
        pthread_mutex_unlock(list[i].lock);
    for (size_t i = 0; i < n_list; i++)
        list[i].child(list[i].ctx);
    pthread_mutex_unlock(&list_lock);
}

static void install(void)
{
    install_error = pthread_atfork(prepare, parent, child);
}

int pt_atfork_register(void *ctx, pthread_mutex_t *lock, pt_atfork_fn before, pt_atfork_fn in_child)
{
    pthread_once(&once, install);
    if (install_error) {
        errno = install_error;
        return -1;
    }
    pthread_mutex_lock(&list_lock);
    if (n_list == cap_list) {
        size_t cap = cap_list ? cap_list * 2 : 4;
        struct entry *p = realloc(list, cap * sizeof *p);
        if (!p) {
            pthread_mutex_unlock(&list_lock);
            errno = ENOMEM;
            return -1;
        }
        list = p;
        cap_list = cap;
    }
    list[n_list++] = (struct entry){ctx, lock, before, in_child};
    pthread_mutex_unlock(&list_lock);
    return 0;
}

void pt_atfork_unregister(void *ctx)
{
    pthread_mutex_lock(&list_lock);
    for (size_t i = 0; i < n_list; i++) {
        if (list[i].ctx == ctx) {
            list[i] = list[--n_list];
            break;
        }
    }
    pthread_mutex_unlock(&list_lock);
}
