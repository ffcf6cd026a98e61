/* SPDX-License-Identifier: MIT */
/* The crash torture's producer (tests/torture/crash_torture.c): one
 * context with every output on (perf map, jitdump, in-process unwinder,
 * GDB, and ELF arenas unless told "noelf"), four threads wrapping (half
 * with a source line), calling, releasing and publishing until they are
 * killed.  How far each got is stored in the progress file after each
 * call returns, so the driver knows, after the SIGKILL, what must be in
 * the files.
 *
 * usage: crash_producer DIR PROGRESS all|noelf|hold SPIN_US */
#define _GNU_SOURCE
#include "crash_shared.h"
#include "perftramp.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

static struct crash_progress *prog;
static perftramp *pt;
static long spin_us;

static uint64_t loops_per_us = 100;

/* The trampolines' target: busy for about `a` microseconds in a loop that
 * calls nothing (perf samples land here, its frame-pointer caller the
 * trampoline), returns a + b. */
__attribute__((noinline)) long crash_spin(long a, long b);
long crash_spin(long a, long b)
{
    volatile uint64_t x = 0;
    for (uint64_t i = 0; i < (uint64_t)a * loops_per_us; i++)
        x += i;
    return a + b;
}

/* Called by main, not through a trampoline: perf samples under it are
 * told apart by this name. */
__attribute__((noinline)) void crash_calibrate(void);
void crash_calibrate(void)
{
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    crash_spin(10000, 0);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    uint64_t us = (uint64_t)(t1.tv_sec - t0.tv_sec) * 1000000u + (uint64_t)(t1.tv_nsec - t0.tv_nsec) / 1000u;
    loops_per_us = us ? loops_per_us * 10000 / us : loops_per_us;
    if (!loops_per_us)
        loops_per_us = 1;
}

/* "hold": a process that got the pid of a killed producer (the driver
 * chose it) and keeps an ELF arena of its own open until it is killed:
 * `perftramp clean` must leave that one alone. */
static int hold(const char *elf_dir)
{
    pt = perftramp_open(&(struct perftramp_options){.outputs = PERFTRAMP_ELF, .elf_dir = elf_dir});
    char name[64];
    crash_name(name, sizeof name, 't', 0, 0);
    if (!pt || !perftramp_wrap(pt, (perftramp_fn)crash_spin, name) || perftramp_output_error(pt, PERFTRAMP_ELF))
        return 1;
    atomic_store(&prog->opened, 1);
    for (;;)
        pause();
}

typedef long (*spin_fn)(long, long);

/* Published code: bytes nobody runs, unique per region (perf names code
 * by its bytes: a tag in each), regions far enough apart that the .eh_frame
 * perf maps after each (mapped_size) never covers the next. */
enum { PUB_SIZE = 32, PUB_STRIDE = 256, PUB_AREA = 64 * 1024 };

void *crash_thread_main(void *arg);
void *crash_thread_main(void *arg)
{
    unsigned t = (unsigned)(uintptr_t)arg;
    struct crash_thread *ct = &prog->t[t];
    spin_fn live[CRASH_LIVE] = {0};
    uint8_t *pub = mmap(NULL, PUB_AREA, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (pub == MAP_FAILED)
        pub = NULL;
    char name[64];
    for (uint64_t id = 0;; id++) {
        crash_name(name, sizeof name, 't', t, id);
        spin_fn f = (spin_fn)(id & 1 ? perftramp_wrap_at(pt, (perftramp_fn)crash_spin, name, "crash.tiny",
                                                         (unsigned)(id % 1000) + 1)
                                     : perftramp_wrap(pt, (perftramp_fn)crash_spin, name));
        if (!f) {
            atomic_fetch_add(&prog->failures, 1);
            continue;
        }
        atomic_store(&ct->wrapped, id + 1);
        /* every live one called, the new one and a few others spinning */
        if (f(spin_us, 1) != spin_us + 1)
            atomic_fetch_add(&prog->failures, 1);
        for (unsigned k = 0; k < CRASH_LIVE; k++)
            if (live[k] && live[k](k % 4 == id % 4 ? spin_us / 4 : 0, 2) != (k % 4 == id % 4 ? spin_us / 4 : 0) + 2)
                atomic_fetch_add(&prog->failures, 1);
        atomic_fetch_add(&ct->calls, 1 + CRASH_LIVE);
        unsigned slot = (unsigned)(id % CRASH_LIVE);
        if (live[slot]) {
            /* said before it happens: ids below `released` may be gone */
            atomic_store(&ct->released, id - CRASH_LIVE + 1);
            if (perftramp_release(pt, (perftramp_fn)live[slot]) != 0)
                atomic_fetch_add(&prog->failures, 1);
        }
        live[slot] = f;
        if (pub && id % 8 == 7) {
            uint64_t p = atomic_load(&ct->published);
            uint8_t *code = pub + (p % (PUB_AREA / PUB_STRIDE)) * PUB_STRIDE;
            if (p >= CRASH_PUBLISHED)
                perftramp_unpublish(pt, pub + ((p - CRASH_PUBLISHED) % (PUB_AREA / PUB_STRIDE)) * PUB_STRIDE);
            memset(code, 0xc3, PUB_SIZE);
            uint64_t tag = ((uint64_t)getpid() << 40) ^ ((uint64_t)t << 32) ^ p;
            memcpy(code + 8, &tag, sizeof tag);
            crash_name(name, sizeof name, 'p', t, p);
            struct perftramp_code c = {.addr = code, .size = PUB_SIZE, .name = name};
            if (perftramp_publish(pt, &c) != 0)
                atomic_fetch_add(&prog->failures, 1);
            else
                atomic_store(&ct->published, p + 1);
        }
    }
    return NULL;
}

int main(int argc, char **argv)
{
    if (argc != 5) {
        fprintf(stderr, "usage: crash_producer DIR PROGRESS all|noelf SPIN_US\n");
        return 2;
    }
    int fd = open(argv[2], O_RDWR | O_CLOEXEC);
    prog = fd < 0 ? MAP_FAILED : mmap(NULL, sizeof *prog, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    if (prog == MAP_FAILED || prog->magic != CRASH_MAGIC) {
        fprintf(stderr, "crash_producer: %s: no progress file\n", argv[2]);
        return 2;
    }
    close(fd);
    spin_us = atol(argv[4]);
    prog->target = (uint64_t)(uintptr_t)crash_spin;
    atomic_store(&prog->pid, (int32_t)getpid());
    if (spin_us)
        crash_calibrate();
    char elf_dir[4096];
    snprintf(elf_dir, sizeof elf_dir, "%s/elf", argv[1]);
    if (strcmp(argv[3], "hold") == 0)
        return hold(elf_dir);
    unsigned outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP | PERFTRAMP_UNWIND | PERFTRAMP_GDB;
    if (strcmp(argv[3], "all") == 0)
        outputs |= PERFTRAMP_ELF;
    pt = perftramp_open(&(struct perftramp_options){.outputs = outputs, .jitdump_dir = argv[1], .elf_dir = elf_dir});
    if (!pt) {
        fprintf(stderr, "crash_producer: perftramp_open: %s\n", strerror(errno));
        return 1;
    }
    atomic_store(&prog->outputs, perftramp_outputs(pt));
    atomic_store(&prog->opened, 1);
    pthread_t th[CRASH_THREADS];
    for (unsigned t = 0; t < CRASH_THREADS; t++)
        if (pthread_create(&th[t], NULL, crash_thread_main, (void *)(uintptr_t)t) != 0)
            return 1;
    /* killed long before this, normally */
    sleep(60);
    fprintf(stderr, "crash_producer: never killed\n");
    return 3;
}
