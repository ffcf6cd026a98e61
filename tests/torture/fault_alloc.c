/* SPDX-License-Identifier: MIT */
/* See fault_alloc.h.  Wrapped: malloc, calloc, realloc, strdup, strndup,
 * posix_memalign, aligned_alloc, free, ffi_closure_alloc, ffi_closure_free. */
#include "fault_alloc.h"

#include <errno.h>
#include <ffi.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
char *__real_strdup(const char *s);
char *__real_strndup(const char *s, size_t n);
int __real_posix_memalign(void **p, size_t al, size_t n);
void *__real_aligned_alloc(size_t al, size_t n);
void __real_free(void *p);
void *__real_ffi_closure_alloc(size_t size, void **code);
void __real_ffi_closure_free(void *p);

void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t m);
void *__wrap_realloc(void *p, size_t n);
char *__wrap_strdup(const char *s);
char *__wrap_strndup(const char *s, size_t n);
int __wrap_posix_memalign(void **p, size_t al, size_t n);
void *__wrap_aligned_alloc(size_t al, size_t n);
void __wrap_free(void *p);
void *__wrap_ffi_closure_alloc(size_t size, void **code);
void __wrap_ffi_closure_free(void *p);

static pthread_mutex_t fa_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long fa_nth, fa_count;
static bool fa_did_fire;

/* Open-addressing set of live blocks (linear probing, tombstones). */
#define FA_SLOTS (1u << 20)
#define FA_TOMB ((uintptr_t)1)
static uintptr_t fa_set[FA_SLOTS];
static size_t fa_n_live;

static size_t fa_hash(uintptr_t p)
{
    return (size_t)((p >> 4) * 0x9e3779b97f4a7c15ull >> 40) & (FA_SLOTS - 1);
}

static void fa_track(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&fa_lock);
    size_t h = fa_hash((uintptr_t)p);
    while (fa_set[h] > FA_TOMB)
        h = (h + 1) & (FA_SLOTS - 1);
    fa_set[h] = (uintptr_t)p;
    fa_n_live++;
    pthread_mutex_unlock(&fa_lock);
}

static void fa_untrack(void *p)
{
    if (!p)
        return;
    pthread_mutex_lock(&fa_lock);
    size_t h = fa_hash((uintptr_t)p);
    for (size_t probes = 0; fa_set[h] && probes < FA_SLOTS; probes++) {
        if (fa_set[h] == (uintptr_t)p) {
            fa_set[h] = FA_TOMB;
            fa_n_live--;
            break;
        }
        h = (h + 1) & (FA_SLOTS - 1);
    }
    pthread_mutex_unlock(&fa_lock);
}

/* true: this call must fail */
static bool fa_should_fail(void)
{
    pthread_mutex_lock(&fa_lock);
    bool fail = false;
    if (fa_nth) {
        fa_count++;
        if (fa_count == fa_nth) {
            fail = true;
            fa_did_fire = true;
        }
    }
    pthread_mutex_unlock(&fa_lock);
    return fail;
}

void fa_arm(unsigned long nth)
{
    pthread_mutex_lock(&fa_lock);
    fa_nth = nth;
    fa_count = 0;
    fa_did_fire = false;
    pthread_mutex_unlock(&fa_lock);
}

void fa_disarm(void)
{
    fa_arm(0);
}

unsigned long fa_calls(void)
{
    pthread_mutex_lock(&fa_lock);
    unsigned long n = fa_count;
    pthread_mutex_unlock(&fa_lock);
    return n;
}

bool fa_fired(void)
{
    pthread_mutex_lock(&fa_lock);
    bool f = fa_did_fire;
    pthread_mutex_unlock(&fa_lock);
    return f;
}

size_t fa_live(void)
{
    pthread_mutex_lock(&fa_lock);
    size_t n = fa_n_live;
    pthread_mutex_unlock(&fa_lock);
    return n;
}

void *__wrap_malloc(size_t n)
{
    if (fa_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_malloc(n);
    fa_track(p);
    return p;
}

void *__wrap_calloc(size_t n, size_t m)
{
    if (fa_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_calloc(n, m);
    fa_track(p);
    return p;
}

void *__wrap_realloc(void *old, size_t n)
{
    if (fa_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_realloc(old, n);
    if (p || n == 0) {
        fa_untrack(old);
        fa_track(p);
    }
    return p;
}

char *__wrap_strdup(const char *s)
{
    if (fa_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    char *p = __real_strdup(s);
    fa_track(p);
    return p;
}

char *__wrap_strndup(const char *s, size_t n)
{
    if (fa_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    char *p = __real_strndup(s, n);
    fa_track(p);
    return p;
}

int __wrap_posix_memalign(void **out, size_t al, size_t n)
{
    if (fa_should_fail())
        return ENOMEM;
    int r = __real_posix_memalign(out, al, n);
    if (r == 0)
        fa_track(*out);
    return r;
}

void *__wrap_aligned_alloc(size_t al, size_t n)
{
    if (fa_should_fail()) {
        errno = ENOMEM;
        return NULL;
    }
    void *p = __real_aligned_alloc(al, n);
    fa_track(p);
    return p;
}

void __wrap_free(void *p)
{
    fa_untrack(p);
    __real_free(p);
}

void *__wrap_ffi_closure_alloc(size_t size, void **code)
{
    if (fa_should_fail())
        return NULL;
    void *p = __real_ffi_closure_alloc(size, code);
    fa_track(p);
    return p;
}

void __wrap_ffi_closure_free(void *p)
{
    fa_untrack(p);
    __real_ffi_closure_free(p);
}
