/* SPDX-License-Identifier: MIT */
/* What perftramp_open was asked for: the caller's options, read by the
 * size-safe growth rule (api/sized.h), or $PERFTRAMP when there are none.
 *
 * $PERFTRAMP is either one boolean word, as PYTHONPERFSUPPORT=1 and
 * DOTNET_PerfMapEnabled=1 are, or a comma list of output names.  The
 * boolean default is the perf map alone: the cheapest output, and the one
 * a plain `perf record` reads without -k 1 or perf inject (CPython's
 * PYTHONPERFSUPPORT=1 means the same).  The boolean words are
 * case-insensitive; output names are not (PERFMAP is EINVAL, as before).
 * The environment is read with secure_getenv: a setuid or setgid program
 * must not let its caller choose where it writes. */
#include "config.h"

#include "api/context.h"
#include "api/output_table.h"
#include "api/sized.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* The public struct has no tail padding, so a field added later always
 * grows sizeof (api/sized.h).  A new field adds its own assertion that it
 * starts where the previous one ended, and this one moves to it. */
_Static_assert(offsetof(struct perftramp_options, elf_dir) == PT_SIZED_END(struct perftramp_options, reserved),
               "elf_dir starts where reserved ended");
_Static_assert(offsetof(struct perftramp_options, signal) == PT_SIZED_END(struct perftramp_options, elf_dir),
               "signal starts where elf_dir ended");
_Static_assert(PT_SIZED_NO_TAIL(struct perftramp_options, reserved_0_2),
               "struct perftramp_options must end with its last field");

/* The struct as 0.1, the first release, defined it: no header ever had a
 * smaller one.  The perftramp_open function (not the macro) reads this. */
const size_t pt_options_size_0_1 = PT_SIZED_END(struct perftramp_options, reserved);

/* Besides each output's own word (its row, api/output_rows.c): "all" is
 * every output but ELF, which leaves files after exit; one that this
 * platform lacks (the in-process unwinder under Debian's musl-gcc) is
 * left off with ENOTSUP for perftramp_output_error, where naming it
 * fails the open. */
static const char pt_all_word[] = "all";
/* The boolean words, and what they turn on. */
#define PT_ENV_DEFAULT_OUTPUTS PERFTRAMP_PERF_MAP
static const char *const pt_env_on[] = {"1", "yes", "true", "on"};
static const char *const pt_env_off[] = {"0", "no", "false", "off"};

static bool word_in(const char *p, size_t n, const char *const *words, size_t count)
{
    for (size_t k = 0; k < count; k++)
        if (strlen(words[k]) == n && strncasecmp(words[k], p, n) == 0)
            return true;
    return false;
}

int pt_parse_outputs(const char *spec, unsigned *out)
{
    return pt_parse_outputs_all(spec, out, NULL);
}

int pt_parse_outputs_all(const char *spec, unsigned *out, unsigned *from_all)
{
    const char *p = spec ? spec : "";
    if (from_all)
        *from_all = 0;
    /* one boolean word, surrounding blanks allowed */
    p += strspn(p, " \t");
    size_t n = strcspn(p, " \t");
    if (n && p[n + strspn(p + n, " \t")] == 0) {
        if (word_in(p, n, pt_env_on, sizeof pt_env_on / sizeof pt_env_on[0])) {
            *out = PT_ENV_DEFAULT_OUTPUTS;
            return 0;
        }
        if (word_in(p, n, pt_env_off, sizeof pt_env_off / sizeof pt_env_off[0])) {
            *out = 0;
            return 0;
        }
    }
    unsigned bits = 0;
    while (*p) {
        while (*p == ' ' || *p == '\t' || *p == ',')
            p++;
        n = strcspn(p, ", \t");
        if (n == 0)
            break;
        unsigned bit = 0;
        if (n == strlen(pt_all_word) && strncmp(pt_all_word, p, n) == 0) {
            bit = PERFTRAMP_ALL;
            if (from_all)
                *from_all = PERFTRAMP_ALL;
        }
        for (size_t k = 0; k < pt_n_output_rows && !bit; k++)
            if (strlen(pt_output_rows[k].word) == n && strncmp(pt_output_rows[k].word, p, n) == 0)
                bit = pt_output_rows[k].bit;
        if (!bit) {
            errno = EINVAL;
            return -1;
        }
        bits |= bit;
        p += n;
    }
    *out = bits;
    return 0;
}

int pt_options_read(struct pt_options *o, const struct perftramp_options *opts, size_t opts_size)
{
    memset(o, 0, sizeof *o);
    if (!opts) {
        if (pt_parse_outputs_all(secure_getenv("PERFTRAMP"), &o->pub.outputs, &o->from_all) < 0)
            return -1;
    } else if (pt_sized_read(&o->pub, sizeof *o - offsetof(struct pt_options, pub), opts, opts_size,
                             pt_options_size_0_1) < 0) {
        return -1;
    }
    const unsigned known = PERFTRAMP_ATFORK | PERFTRAMP_SIGNAL | PERFTRAMP_NEAR_CALLS | PERFTRAMP_KEEP_NAMES |
                           PERFTRAMP_WIDE_SLOTS | PERFTRAMP_FORGET_NAMES;
    const unsigned keep_and_forget = PERFTRAMP_KEEP_NAMES | PERFTRAMP_FORGET_NAMES; /* contradict each other */
    if ((o->pub.outputs & ~(PERFTRAMP_ALL | PERFTRAMP_ELF)) || (o->pub.flags & ~known) ||
        (o->pub.flags & keep_and_forget) == keep_and_forget || o->pub.reserved || o->pub.reserved_0_2 ||
        (!(o->pub.flags & PERFTRAMP_SIGNAL) && o->pub.signal)) {
        errno = EINVAL;
        return -1;
    }
    if (!o->pub.jitdump_dir)
        o->pub.jitdump_dir = secure_getenv("JITDUMPDIR");
    return 0;
}
