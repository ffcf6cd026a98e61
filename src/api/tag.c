/* SPDX-License-Identifier: MIT */
/* Per-trampoline tags: 64-bit words stored in each trampoline so that no
 * two trampolines have the same bytes (perf merges jitted code with equal
 * build-ids, which it hashes from the bytes).  seed ^ (counter * odd) is a
 * bijection of the counter, so tags never repeat within a process; a
 * random seed makes a repeat across runs vanishingly unlikely. */
#include "api/context.h"

#include <sys/random.h>
#include <time.h>
#include <unistd.h>

void pt_tag_seed(struct perftramp *pt)
{
    uint64_t seed = 0;
    if (getrandom(&seed, sizeof seed, GRND_NONBLOCK) != (ssize_t)sizeof seed) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        seed = ((uint64_t)ts.tv_sec << 32) ^ (uint64_t)ts.tv_nsec ^ ((uint64_t)getpid() << 16);
    }
    pt->tag_seed = seed;
    pt->tag_counter = 0;
}

uint64_t pt_tag_next(struct perftramp *pt)
{
    return pt->tag_seed ^ (++pt->tag_counter * 0x9e3779b97f4a7c15ull);
}
