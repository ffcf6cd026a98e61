/* SPDX-License-Identifier: MIT */
/* A trampoline wrapped with an empty name shows the documented
 * placeholder "[anonymous@0x<address>]" in every output: the perf map
 * line, the jitdump LOAD record, the gdb symbol (the in-memory ELF gdb
 * reads), and again in a forked child's files.  Never a blank name. */
#include "api/context.h"
#include "../lib/perf_test_util.h"
#include "read/jitdump_reader.h"

#include <check.h>
#include "../lib/check_run.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* The GDB JIT interface as gdb reads it (GDB manual, "JIT Compilation
 * Interface"); the library's descriptor is hidden, linked in statically. */
struct jit_code_entry {
    struct jit_code_entry *next, *prev;
    const char *symfile_addr;
    uint64_t symfile_size;
};
struct jit_descriptor {
    uint32_t version, action_flag;
    struct jit_code_entry *relevant_entry, *first_entry;
};
extern struct jit_descriptor __jit_debug_descriptor;

typedef long (*fn1)(long);
static long plus_one(long x)
{
    return x + 1;
}

static char *dir;
static char map_path[64], dump_path[1100];

static void setup(void)
{
    dir = ptt_tempdir();
    snprintf(map_path, sizeof map_path, "/tmp/perf-%ld.map", (long)getpid());
    snprintf(dump_path, sizeof dump_path, "%s/jit-%ld.dump", dir, (long)getpid());
    unlink(map_path);
}

static void teardown(void)
{
    unlink(map_path);
    ptt_rmdir(dir);
    free(dir);
}

static void placeholder(char *out, size_t n, void *addr)
{
    snprintf(out, n, "[anonymous@0x%" PRIxPTR "]", (uintptr_t)addr);
}

/* The map's name for `addr`, or "" */
static void map_name(const char *path, void *addr, char *out, size_t n)
{
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char line[512];
    out[0] = 0;
    while (fgets(line, sizeof line, f)) {
        uintptr_t start;
        size_t size;
        int used = 0;
        if (sscanf(line, "%" SCNxPTR " %zx %n", &start, &size, &used) >= 2 && start == (uintptr_t)addr) {
            line[strcspn(line, "\n")] = 0;
            snprintf(out, n, "%s", line + used);
        }
    }
    fclose(f);
}

/* The dump's LOAD name for `addr`, or "" */
static void dump_name(const char *path, void *addr, char *out, size_t n)
{
    size_t len;
    uint8_t *d = ptt_read_file(path, &len);
    ck_assert_ptr_nonnull(d);
    struct pt_jd_iter it;
    struct pt_jd_record r;
    out[0] = 0;
    ck_assert_int_eq(pt_jd_iter_init(&it, d, len), 0);
    while (pt_jd_next(&it, &r) == 1)
        if (r.id == PT_JD_LOAD && r.code_addr == (uintptr_t)addr)
            snprintf(out, n, "%s", r.name);
    free(d);
}

/* true when an in-memory ELF gdb holds has `name` as a whole strtab string */
static int gdb_has_name(const char *name)
{
    size_t n = strlen(name) + 1;
    for (const struct jit_code_entry *e = __jit_debug_descriptor.first_entry; e; e = e->next)
        for (uint64_t i = 1; i + n <= e->symfile_size; i++)
            if (e->symfile_addr[i - 1] == 0 && memcmp(e->symfile_addr + i, name, n) == 0)
                return 1;
    return 0;
}

START_TEST(empty_name_is_the_placeholder_everywhere)
{
    perftramp *pt = perftramp_open(&(struct perftramp_options){
        .outputs = PERFTRAMP_PERF_MAP | PERFTRAMP_JITDUMP | PERFTRAMP_GDB, .jitdump_dir = dir});
    ck_assert_msg(pt != NULL, "open: %s", strerror(errno));
    fn1 named = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "names::named");
    fn1 anon = (fn1)perftramp_wrap(pt, (perftramp_fn)plus_one, "");
    ck_assert(named && anon);
    ck_assert_int_eq(anon(1), 2);
    char want[64], got[512];
    placeholder(want, sizeof want, (void *)anon);

    map_name(map_path, (void *)anon, got, sizeof got);
    ck_assert_str_eq(got, want);
    dump_name(dump_path, (void *)anon, got, sizeof got);
    ck_assert_str_eq(got, want);
    ck_assert_msg(gdb_has_name(want), "gdb's symbols lack %s", want);
    ck_assert(gdb_has_name("names::named")); /* the search works */
    map_name(map_path, (void *)named, got, sizeof got);
    ck_assert_str_eq(got, "names::named");

    /* a forked child's files replay the placeholder, not a blank */
    pid_t child = fork();
    ck_assert_int_ge(child, 0);
    if (child == 0) {
        int bad = perftramp_after_fork_child(pt) != 0;
        char cmap[64], cdump[1100], cgot[512];
        snprintf(cmap, sizeof cmap, "/tmp/perf-%ld.map", (long)getpid());
        snprintf(cdump, sizeof cdump, "%s/jit-%ld.dump", dir, (long)getpid());
        map_name(cmap, (void *)anon, cgot, sizeof cgot);
        bad |= (strcmp(cgot, want) != 0) << 1;
        dump_name(cdump, (void *)anon, cgot, sizeof cgot);
        bad |= (strcmp(cgot, want) != 0) << 2;
        perftramp_close(pt);
        unlink(cmap);
        unlink(cdump);
        _exit(bad);
    }
    int status;
    ck_assert_int_eq(waitpid(child, &status, 0), child);
    ck_assert_msg(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child: status %#x", status);
    ck_assert_int_eq(perftramp_close(pt), 0);
    printf("empty name -> %s in the perf map, jitdump and gdb symbols\n", want);
    printf("PROOF: names.placeholder proven an empty name is %s in 3 outputs (perf map, jitdump LOAD, gdb "
           "symbols) and in a forked child's map and dump\n",
           want);
}
END_TEST

START_TEST(null_name_is_still_einval)
{
    perftramp *pt = perftramp_open(&(struct perftramp_options){.outputs = PERFTRAMP_PERF_MAP});
    ck_assert_ptr_nonnull(pt);
    errno = 0;
    ck_assert_ptr_null(perftramp_wrap(pt, (perftramp_fn)plus_one, NULL));
    ck_assert_int_eq(errno, EINVAL);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("names");
    TCase *tc = tcase_create("names");
    tcase_add_checked_fixture(tc, setup, teardown);
    tcase_add_test(tc, empty_name_is_the_placeholder_everywhere);
    tcase_add_test(tc, null_name_is_still_einval);
    suite_add_tcase(s, tc);
    int failed = pt_check_run(s);
    if (failed)
        printf("PROOF: names.placeholder failed %d of 2 cases (see above)\n", failed);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
