/* SPDX-License-Identifier: MIT */
/* The crash torture (tests/torture/crash_torture.c): what its producer
 * (crash_producer.c), the kill hook it runs under (crash_hook.c, an
 * LD_PRELOAD object) and the driver share.  The producer and the hook
 * write a progress file (mapped MAP_SHARED, so it survives the SIGKILL)
 * that the driver reads afterwards: how far each thread got, and where
 * the hook killed. */
#ifndef PERFTRAMP_CRASH_SHARED_H
#define PERFTRAMP_CRASH_SHARED_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define CRASH_THREADS 4
#define CRASH_LIVE 24      /* live trampolines per thread: older ones are released */
#define CRASH_PUBLISHED 8  /* published regions per thread: older ones are unpublished */
#define CRASH_MAGIC 0x6372617368746f72ull

/* What the hook counts: each a write of an output's bytes. */
enum crash_event {
    CRASH_EV_MAP_WRITE,  /* write(2) of a perf map line */
    CRASH_EV_DUMP_COPY,  /* memcpy into the jitdump's mapped window (a group's body) */
    CRASH_EV_DUMP_WRITE, /* pwrite(2) to the jitdump (its header) */
    CRASH_EV_ELF_WRITE,  /* pwrite(2) to an ELF arena file (its headers) */
    CRASH_EV_ELF_COPY,   /* memcpy into an ELF arena's mapped views (code, names) */
    CRASH_EV_MAP_CROSS,  /* a perf map write that crosses a 4 KiB boundary of the file
                          * (counted only when it is the kind to kill in) */
    CRASH_EV_COUNT,
    CRASH_EV_ANY = CRASH_EV_COUNT
};

static inline const char *crash_event_name(int e)
{
    static const char *const names[] = {"map-write", "dump-copy", "dump-write", "elf-write", "elf-copy", "map-cross",
                                        "any"};
    return e >= 0 && e <= CRASH_EV_ANY ? names[e] : "?";
}

struct crash_thread {
    _Atomic uint64_t wrapped;     /* perftramp_wrap returned for ids [0, wrapped) */
    _Atomic uint64_t released;    /* ids below this may be released */
    _Atomic uint64_t published;   /* perftramp_publish returned for ids [0, published) */
    _Atomic uint64_t calls;       /* trampolines called */
};

struct crash_progress {
    uint64_t magic;
    _Atomic int32_t pid;          /* the producer's, once it runs */
    _Atomic int32_t opened;       /* perftramp_open returned */
    _Atomic int32_t failures;     /* wraps or publishes that failed (must stay 0) */
    _Atomic uint32_t outputs;     /* perftramp_outputs() after open */
    uint64_t target;              /* the trampolines' target: the word their code ends with, before the tag */
    struct crash_thread t[CRASH_THREADS];
    /* the hook */
    _Atomic uint64_t events[CRASH_EV_COUNT]; /* seen so far, by kind */
    _Atomic int32_t kill_event;   /* -1: the hook did not kill; else the kind it killed in */
    uint64_t kill_len;            /* bytes of that write or copy */
    uint64_t kill_done;           /* bytes of it that got through */
    uint64_t kill_off;            /* its file offset (writes; -1 for copies) */
    char kill_file[96];           /* the file's name */
};

/* Names carry a checksum, so a cut or mixed name never reads as one:
 * crash::t<thread>.<id>~<8 hex> (wraps) and crash::p<thread>.<id>~<8 hex>
 * (published code). */
static inline uint32_t crash_sum(char kind, unsigned t, uint64_t id)
{
    uint32_t h = 2166136261u;
    uint64_t v[3] = {(uint64_t)(unsigned char)kind, t, id};
    for (int k = 0; k < 3; k++)
        for (int b = 0; b < 8; b++)
            h = (h ^ (uint8_t)(v[k] >> (8 * b))) * 16777619u;
    return h;
}

static inline void crash_name(char *out, size_t n, char kind, unsigned t, uint64_t id)
{
    snprintf(out, n, "crash::%c%u.%llu~%08x", kind, t, (unsigned long long)id, crash_sum(kind, t, id));
}

/* Parses a name of `len` bytes: true when it is exactly one crash_name. */
static inline bool crash_parse(const char *s, size_t len, char *kind, unsigned *t, uint64_t *id)
{
    char buf[64];
    if (len >= sizeof buf || len < 8 || memcmp(s, "crash::", 7) != 0)
        return false;
    memcpy(buf, s, len);
    buf[len] = 0;
    unsigned long long v;
    unsigned sum;
    int used = 0;
    if (sscanf(buf + 7, "%c%u.%llu~%8x%n", kind, t, &v, &sum, &used) != 4 || (size_t)used != len - 7 ||
        (*kind != 't' && *kind != 'p') || *t >= CRASH_THREADS)
        return false;
    *id = v;
    char again[64];
    crash_name(again, sizeof again, *kind, *t, v);
    return strcmp(again, buf) == 0;
}

#endif
