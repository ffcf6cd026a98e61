/* SPDX-License-Identifier: MIT */
/* $PERFTRAMP: a comma list of perfmap,jitdump,unwind,gdb,all. */
#include "api/context.h"

#include <errno.h>
#include <string.h>

static const struct {
    const char *word;
    unsigned bits;
} pt_output_words[] = {
    {"perfmap", PERFTRAMP_PERF_MAP}, {"jitdump", PERFTRAMP_JITDUMP}, {"unwind", PERFTRAMP_UNWIND},
    {"gdb", PERFTRAMP_GDB},          {"all", PERFTRAMP_ALL},
};

int pt_parse_outputs(const char *spec, unsigned *out)
{
    unsigned bits = 0;
    const char *p = spec ? spec : "";
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        size_t n = strcspn(p, ", \t");
        if (n == 0)
            break;
        size_t k = 0, count = sizeof pt_output_words / sizeof pt_output_words[0];
        while (k < count && !(strlen(pt_output_words[k].word) == n && strncmp(pt_output_words[k].word, p, n) == 0))
            k++;
        if (k == count) {
            errno = EINVAL;
            return -1;
        }
        bits |= pt_output_words[k].bits;
        p += n;
    }
    *out = bits;
    return 0;
}
