/* SPDX-License-Identifier: MIT */
/* A "new" program: built against a header of a later release whose
 * struct perftramp_options gained a field.  That header does not exist
 * yet, so the struct is spelled out here the way such a header would lay
 * it out: today's fields, then the new one.  argv[1] is the value of the
 * new field.  Prints "opened" or the errno name; exit 0 when opened. */
#include "perftramp.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct later_options {
    struct perftramp_options today;
    uint64_t new_field; /* what the test library (PERFTRAMP_TEST_GROWN_OPTIONS) knows */
};

int main(int argc, char **argv)
{
    struct later_options o = {.today = {.outputs = 0}, .new_field = argc > 1 ? strtoull(argv[1], NULL, 0) : 0};
    perftramp *pt = perftramp_open_sized(&o.today, sizeof o);
    if (!pt) {
        printf("%s\n", errno == EINVAL ? "EINVAL" : strerror(errno));
        return 1;
    }
    perftramp_close(pt);
    printf("opened\n");
    return 0;
}
