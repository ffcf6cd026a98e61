/* SPDX-License-Identifier: MIT */
/* Memory per live trampoline: executable memory plus metadata (slot
 * bitmaps, name copies, arena bookkeeping), over 1M live trampolines, by
 * default and with PERFTRAMP_FORGET_NAMES (no name copy: the floor).
 *
 * The figure is the growth of the process's resident set (/proc/self/statm,
 * i.e. the Rss of every mapping: the libffi arenas and the malloc heap)
 * divided by the number of trampolines.  Untouched reserve at the end of
 * the last arena costs no memory and is not counted; the notes give the
 * virtual growth and malloc's own count too.
 *
 * PERFTRAMP_ELF: the arenas are files (tmpfs or page cache), mapped shared,
 * so their pages count in the resident set as well; the note adds the bytes
 * the files take on disk per trampoline (they stay until `perftramp clean`). */
#include "bench.h"

#include "perftramp.h"

#include <malloc.h>
#include <unwind.h>
#include <sys/stat.h>
#include <sys/wait.h>

static long bench_target(long x)
{
    return x + 1;
}

static _Unwind_Reason_Code count_frame(struct _Unwind_Context *c, void *arg)
{
    (void)c;
    ++*(int *)arg;
    return _URC_NO_REASON;
}

/* Called through a trampoline: the unwinder steps through its frame,
 * which makes it build its search table over the registered FDEs (libgcc
 * sorts them at the first lookup), so that table's bytes count too. */
static __attribute__((noinline)) long unwind_through(long x)
{
    int frames = 0;
    _Unwind_Backtrace(count_frame, &frames);
    return x + frames;
}

struct mem {
    double rss, vsz;  /* bytes */
    double heap;      /* malloc: bytes in use (arena chunks + mmapped chunks) */
};

static void read_mem(struct mem *m)
{
    long size = 0, resident = 0, page = sysconf(_SC_PAGESIZE);
    FILE *f = fopen("/proc/self/statm", "r");
    if (!f || fscanf(f, "%ld %ld", &size, &resident) != 2) {
        perror("/proc/self/statm");
        exit(1);
    }
    fclose(f);
    struct mallinfo2 mi = mallinfo2();
    m->rss = (double)resident * (double)page;
    m->vsz = (double)size * (double)page;
    m->heap = (double)(mi.uordblks + mi.hblkhd);
}

/* Bytes of the regular files in dir (the ELF arenas). */
static double dir_bytes(const char *dir)
{
    double total = 0;
    DIR *d = opendir(dir);
    struct dirent *e;
    while (d && (e = readdir(d))) {
        char path[512];
        struct stat st;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        if (lstat(path, &st) == 0 && S_ISREG(st.st_mode))
            total += (double)st.st_size;
    }
    if (d)
        closedir(d);
    return total;
}

static void measure(const char *key, unsigned outputs, unsigned flags, size_t n)
{
    char *names = bench_names(n, BENCH_NAME_STRIDE);
    char dir[256];
    if (!bench_mkdtemp(dir, sizeof dir)) {
        perror("mkdtemp");
        exit(1);
    }
    struct perftramp_options o = {.outputs = outputs, .jitdump_dir = dir, .elf_dir = dir, .flags = flags};
    perftramp *pt = perftramp_open(&o);
    int elf_error = pt && (outputs & PERFTRAMP_ELF) ? perftramp_output_error(pt, PERFTRAMP_ELF) : 0;
    if (elf_error) { /* refused (e.g. a noexec TMPDIR): not the ELF figure */
        bench_na(key, strerror(elf_error));
        perftramp_close(pt);
        bench_rmdir(dir);
        free(names);
        return;
    }
    if (!pt) {
        bench_na(key, errno == ENOTSUP ? "ENOTSUP" : strerror(errno));
        bench_rmdir(dir);
        free(names);
        return;
    }
    struct mem before, after;
    read_mem(&before);
    for (size_t i = 0; i < n; i++)
        if (!perftramp_wrap(pt, (perftramp_fn)bench_target, names + i * BENCH_NAME_STRIDE)) {
            perror("perftramp_wrap");
            exit(1);
        }
    if (outputs & PERFTRAMP_UNWIND) {
        long (*t)(long) = (long (*)(long))perftramp_wrap(pt, (perftramp_fn)unwind_through, "unwind_through");
        if (!t || t(0) < 3) {
            fprintf(stderr, "%s: the unwinder did not step through a trampoline\n", key);
            exit(1);
        }
    }
    read_mem(&after);
    double per = (after.rss - before.rss) / (double)n;
    bench_value(key, "%.1f", per);
    bench_note("%s: %zu live trampolines: resident +%.1f B, virtual +%.1f B, malloc +%.1f B per trampoline", key, n,
               per, (after.vsz - before.vsz) / (double)n, (after.heap - before.heap) / (double)n);
    if (outputs & PERFTRAMP_ELF)
        bench_note("%s: the arena files take %.1f B on disk per trampoline", key, dir_bytes(dir) / (double)n);
    perftramp_close(pt);
    bench_rmdir(dir);
    free(names);
}

/* Each configuration in its own process: libffi's allocator keeps the
 * pages of a closed context resident and hands them out again, so a
 * second measurement in the same process grew by almost nothing (19 B
 * per trampoline for the jitdump one, measured after the plain one). */
static void measure_apart(const char *key, unsigned outputs, unsigned flags, size_t n)
{
    fflush(stdout);
    pid_t child = fork();
    if (child < 0) {
        perror("fork");
        exit(1);
    }
    if (child == 0) {
        measure(key, outputs, flags, n);
        fflush(stdout);
        _exit(0);
    }
    int status;
    if (waitpid(child, &status, 0) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
        bench_na(key, "the measuring process failed");
}

int main(void)
{
    size_t n = bench_quick() ? 50000 : 1000000;
    /* the default: the slot and a copy of its name for a later replay */
    measure_apart("bytes_per_trampoline_none", 0, 0, n);
    /* the floor of a caller that opts out of the copies: the slot alone */
    measure_apart("bytes_per_trampoline_forget_names", 0, PERFTRAMP_FORGET_NAMES, n);
    /* the slot, its FDE and its entry in the unwinder's search table (the
     * default adds the name copy, as above) */
    measure_apart("bytes_per_trampoline_unwind", PERFTRAMP_UNWIND, PERFTRAMP_FORGET_NAMES, n);
    measure_apart("bytes_per_trampoline_jitdump", PERFTRAMP_JITDUMP, 0, n);
    measure_apart("bytes_per_trampoline_elf", PERFTRAMP_ELF, 0, n);
    return 0;
}
