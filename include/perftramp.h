/* SPDX-License-Identifier: MIT */
/* perftramp — perf support for interpreters and JITs, at run time.
 *
 * A runtime asks perftramp for one *trampoline* per interpreted function.
 * The trampoline is a few instructions of machine code, unique to that
 * function, that keeps a frame-pointer frame and calls the runtime's
 * evaluator.  perftramp publishes the trampoline's name and its DWARF
 * unwind information to perf (perf map, jitdump), to the in-process
 * unwinder and to gdb, so profiles and backtraces show one named frame per
 * interpreted function and walk through it to the callers below.
 *
 * Thread safety: every function may be called from any thread, and
 * perftramp_wrap()/perftramp_release() from many threads at once on the
 * same context.  perftramp_close() must not race with other calls on the
 * same context.
 *
 * Handing a trampoline to another thread.  perftramp_wrap() returns after
 * the code is written and the cache maintenance is done: aarch64 dc cvau,
 * dsb ish, ic ivau, dsb ish, isb; ppc64le dcbst, sync, icbi, sync, isync;
 * riscv64 the riscv_flush_icache system call for every hart; s390x
 * bcr 15,0.  The calling thread may call the trampoline at once.  Give the
 * pointer to another thread with a release store read by an acquire load
 * (or under a mutex), so that thread sees the pointer only after the
 * bytes.  What that thread's core needs before its first call:
 *   riscv64: nothing more.  fence.i acts on one hart only, but the system
 *     call (without its local-only flag) makes every hart that runs this
 *     process execute it before it runs the process's code again.
 *   aarch64, ppc64le: a context-synchronizing instruction after the
 *     acquire load, isb (Arm ARM, "Concurrent modification and execution
 *     of instructions") or isync (Power ISA Book II, "Instruction
 *     storage"): the invalidation reached every core, but a core may still
 *     hold instructions it fetched earlier from that address (a released
 *     slot it ran, a speculative fetch).  A system call on that thread
 *     after the wrap returned also synchronizes (an exception return does);
 *     an uncontended mutex does not enter the kernel.
 *       __asm__ volatile("isb" ::: "memory");     (aarch64)
 *       __asm__ volatile("isync" ::: "memory");   (ppc64le)
 *   s390x: a serialization after the acquire load, bcr 15,0; a mutex taken
 *     with compare-and-swap also serializes (Principles of Operation: a CPU
 *     can see the flag set and still run the location's old contents).
 *   x86-64: the Intel SDM ("Handling Self- and Cross-Modifying Code") asks
 *     the running processor for a serializing instruction (cpuid) before
 *     code another processor wrote; JITs commonly omit it for fresh code.
 */
#ifndef PERFTRAMP_H
#define PERFTRAMP_H

#include <stddef.h>
#include <stdint.h>

/* PERFTRAMP_VERSION ("MAJOR.MINOR.PATCH"), PERFTRAMP_VERSION_MAJOR,
 * _MINOR, _PATCH and PERFTRAMP_VERSION_NUMBER (0xMMmmpp) of this header. */
#include "perftramp_version.h"

/* Marks the public functions: the library is built with hidden
 * visibility, so only what carries this is exported (docs/abi.md). */
#if defined(__GNUC__) || defined(__clang__)
#define PERFTRAMP_API __attribute__((visibility("default")))
#else
#define PERFTRAMP_API
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* A function pointer of any type; cast to and from your real type. */
typedef void (*perftramp_fn)(void);

/* An opaque context: arenas of trampolines and the outputs they feed. */
typedef struct perftramp perftramp;

/* Output bits for perftramp_options.outputs. */
#define PERFTRAMP_PERF_MAP 0x1u /* /tmp/perf-<pid>.map lines (perf --call-graph fp) */
#define PERFTRAMP_JITDUMP  0x2u /* <dir>/jit-<pid>.dump with unwinding info (perf -k 1 + inject --jit) */
#define PERFTRAMP_UNWIND   0x4u /* register .eh_frame with the in-process unwinder */
#define PERFTRAMP_GDB      0x8u /* the GDB JIT interface */
#define PERFTRAMP_ALL      0xfu
/* Trampolines in file-backed ELF arenas, <elf_dir>/perftramp-<pid>-<n>.so:
 * perf reads names and unwind info from the files like any library's, with
 * --call-graph dwarf or fp, no -k 1, no jitdump, no perf inject, also when
 * it attaches later (perf record -p).  The files stay after exit (perf
 * reads them at report time); perftramp_open with this output removes the
 * files of processes that are gone, and so does `perftramp clean [DIR]`.
 * Not part of PERFTRAMP_ALL (nor of $PERFTRAMP=all): it leaves files on
 * disk after the process exits, which a caller must ask for by name.
 * docs/perf.md says when to choose it. */
#define PERFTRAMP_ELF      0x10u

/* Flags for perftramp_options.flags. */
#define PERFTRAMP_ATFORK   0x1u /* a forked child gets its own files, lazily (perftramp_after_fork_child) */
#define PERFTRAMP_SIGNAL   0x2u /* perftramp_options.signal toggles the outputs (see perftramp_set_outputs) */
/* 0.2: trampolines call their target directly (x86-64 `call rel32`) when
 * it lies within +-2 GiB of the trampoline, else through memory as
 * always: same size, same unwind info, chosen per trampoline.  Where the
 * architecture has no direct-call table, every call goes through memory.
 * bench/PERFORMANCE.md says what it saves. */
#define PERFTRAMP_NEAR_CALLS 0x4u
/* 0.2: what a context keeps for outputs switched on later
 * (perftramp_set_outputs, PERFTRAMP_SIGNAL, a fork's child files), which
 * replay every live trampoline.  A slot is its code (32 B on x86-64,
 * packed in page arenas) with no per-slot unwind entry until an output
 * that reads one is on, no padding, and by default a copy of its name
 * (with wrap_at's file and line), so that every replay names every
 * trampoline, as 0.1 did.  No copy is kept where a replay has the name
 * without one: while the perf map works (a replay reads the name back
 * from its file: ours, or a fork's parent's) and while a name callback
 * is set (perftramp_set_name_callback).
 *   PERFTRAMP_FORGET_NAMES  keep no copy: the slot is its code alone, the
 *                         memory floor, for a caller that never switches
 *                         an output on later or rebuilds names itself.
 *                         A replay names a slot from the callback, else
 *                         from the perf map written while it was on,
 *                         else shows "[perftramp@0x<address>]"; file and
 *                         line are not replayed.  An open GDB output still
 *                         keeps names while it is open (it reads them).
 *   PERFTRAMP_KEEP_NAMES  keep a copy always, also where the callback or
 *                         the perf map would give the name, so that file
 *                         and line reach every replay.  Both flags: EINVAL.
 *   PERFTRAMP_WIDE_SLOTS  space slots as a jitdump with unwinding info
 *                         needs (112 B on x86-64), so that a jitdump
 *                         switched on later carries UNWINDING_INFO for
 *                         every trampoline (perf --call-graph dwarf through
 *                         them).  Implied by a jitdump on at open and by
 *                         PERFTRAMP_SIGNAL.  A packed context's later
 *                         jitdump names every trampoline but has no
 *                         UNWINDING_INFO for them (perf maps each record's
 *                         code plus its unwind data, and packed ranges
 *                         would overlap); frame-pointer unwinding works
 *                         through them as before.
 * docs/design.md ("Memory per slot") gives the figures; docs/abi.md
 * ("Defaults by version") which default each version has. */
#define PERFTRAMP_KEEP_NAMES 0x8u
#define PERFTRAMP_WIDE_SLOTS 0x10u
#define PERFTRAMP_FORGET_NAMES 0x20u

/* Options.  All zeros means defaults: no outputs, jitdump directory from
 * $JITDUMPDIR or /tmp.  Use designated initialisers (or zero the struct
 * first): later versions add fields at the end, and perftramp_open tells
 * the library how big your struct is, so a program built against this
 * header keeps working with a newer library (docs/abi.md, "Growing a
 * struct"). */
struct perftramp_options {
    unsigned outputs;         /* PERFTRAMP_* output bits */
    const char *jitdump_dir;  /* NULL: $JITDUMPDIR, else /tmp */
    unsigned flags;           /* PERFTRAMP_ATFORK, PERFTRAMP_SIGNAL, PERFTRAMP_NEAR_CALLS,
                                 PERFTRAMP_KEEP_NAMES, PERFTRAMP_WIDE_SLOTS,
                                 PERFTRAMP_FORGET_NAMES */
    unsigned reserved;        /* must be 0 (keeps the struct free of tail padding) */
    /* 0.2: PERFTRAMP_ELF's directory.  NULL: $PERFTRAMP_ELF_DIR, else
     * /tmp/perftramp-<euid> (created 0700).  It must be ours, a directory
     * (not a symlink) and allow exec; else the output is disabled
     * (perftramp_output_error) and trampolines use the usual memory. */
    const char *elf_dir;
    /* 0.2: with PERFTRAMP_SIGNAL, the signal (e.g. SIGUSR2) that toggles
     * the outputs of a running process (perftramp_set_outputs): all off
     * when any is on, else $PERFTRAMP's outputs, else those of `outputs`,
     * else perf map + jitdump.  The handler only posts a semaphore; a
     * helper thread switches.  In a forked child the switch resumes at
     * its first perftramp_wrap (with PERFTRAMP_ATFORK) or at
     * perftramp_after_fork_child; a signal before that waits for it. */
    int signal;
    unsigned reserved_0_2;    /* must be 0 */
};

/* Creates a context.  opts == NULL reads the outputs from the environment
 * variable PERFTRAMP (ignored in setuid/setgid programs: secure_getenv):
 *   unset, empty, 0, no, false, off   no outputs
 *   1, yes, true, on                  PERFTRAMP_PERF_MAP, the cheap default
 *                                     that `perf record` uses as is (like
 *                                     CPython's PYTHONPERFSUPPORT=1)
 *   a comma list of perfmap, jitdump, unwind, gdb, elf, all
 * (the boolean words in any case; all is the first four: elf leaves files
 * behind, so it is asked for by name; one of them that this platform
 * lacks, such as the in-process unwinder under musl-gcc, is left off and
 * perftramp_output_error says ENOTSUP, where naming it fails the open).  $JITDUMPDIR and $PERFTRAMP_ELF_DIR
 * are read the same way.
 *
 * perftramp_open is a macro: it passes the size of struct
 * perftramp_options as this header defines it to perftramp_open_sized,
 * which reads only that many bytes of *opts (and treats later fields as
 * zero).  A struct larger than the library knows is accepted only when
 * the fields it does not know are all zero (a newer program asking for a
 * feature this library lacks gets EINVAL, never silence).  The function
 * perftramp_open (for callers that cannot use the macro: FFI bindings,
 * function pointers) reads the struct as version 0.1 defined it.
 *
 * With PERFTRAMP unset (or off), perftramp_open(NULL) returns a context
 * with no outputs.  Keep it only when something may switch outputs on
 * later (PERFTRAMP_SIGNAL, or your own perftramp_set_outputs call): its
 * trampolines then exist, ready to be replayed.  Otherwise close it and
 * skip wrapping: calls through trampolines that nothing reads only cost
 * time (examples/lua/perftramp_lua.c does so).
 *
 * One context per process serves every VM state and thread (wrap and
 * release are thread-safe).  Open it once (pthread_once), release each
 * trampoline when its function dies, and either never close it (each
 * output is complete as it goes; the process's exit frees the rest) or
 * close it when the last VM state closes.  Never from atexit() or a
 * destructor: another thread or a later exit handler may still be running
 * code through a trampoline (docs/interpreter-guide.md).
 *
 * Returns NULL and sets errno on failure:
 *   EINVAL   an unknown output bit or flag, a non-zero reserved field or
 *            field this library does not know, opts_size smaller than any
 *            released struct, or an unknown word in $PERFTRAMP
 *   ENOTSUP  an output this build or platform does not support, or no
 *            trampoline table for the host architecture
 *   ENOMEM   out of memory
 *   or the errno of opening an output file.
 * An output that cannot be opened fails the open; an output that fails
 * later is disabled instead (see perftramp_output_error), and so is one
 * whose file is refused (a symlink, FIFO or another user's file in /tmp). */
PERFTRAMP_API perftramp *perftramp_open_sized(const struct perftramp_options *opts, size_t opts_size);
PERFTRAMP_API perftramp *perftramp_open(const struct perftramp_options *opts);
/* Variadic so that a compound literal with commas is one argument. */
#define perftramp_open(...) perftramp_open_sized((__VA_ARGS__), sizeof(struct perftramp_options))

/* Returns a new trampoline that calls `target` with the caller's arguments
 * and returns its result unchanged, for any signature whose arguments all
 * travel in registers (integer, floating-point/vector, variadic calls,
 * small structs returned in registers, the hidden struct-return pointer).
 * Arguments passed on the stack are NOT supported: the trampoline's own
 * frame sits between the caller's stack arguments and the target.
 * i686 (cdecl: every argument on the stack) is the exception: the
 * trampoline passes copies of the first five 4-byte words of the stack
 * arguments (20 bytes: e.g. five ints or pointers, two doubles and an int,
 * a long double and two ints; a hidden struct-return pointer is one),
 * where the target finds them from its own return address; a sixth word
 * is not passed (the target would read the trampoline's frame).  eax, ecx
 * and edx pass untouched (regparm and fastcall register arguments), as do
 * the x87 and SSE registers, and the result comes back unchanged.  The
 * target may pop 4 bytes of its arguments (a struct returned in memory
 * pops its hidden pointer; fastcall a third argument): the trampoline then
 * pops them too; popping 8 or more (stdcall) is not supported.
 * `name` is copied; it is what perf and gdb show for the trampoline.
 * perf outputs write control bytes (0x00-0x1f, 0x7f) as \xNN and keep
 * names whole up to 4096 bytes, cutting longer ones with "..." (docs/perf.md).
 * An empty name is shown as "[anonymous@0x<address>]" in every output
 * (perf map, jitdump, gdb): never a blank name, and two anonymous
 * functions stay apart in a profile.
 *
 * Returns NULL and sets errno on failure:
 *   EINVAL   pt, target or name is NULL
 *   ENOMEM   out of memory (the context stays usable)
 * Thread-safe.  When an enabled output fails while recording this
 * trampoline, the trampoline is still returned and the output is disabled
 * (see perftramp_output_error). */
PERFTRAMP_API perftramp_fn perftramp_wrap(perftramp *pt, perftramp_fn target, const char *name);

/* Frees a trampoline's slot for reuse by a later perftramp_wrap.  Calling
 * the trampoline after release is undefined (its slot traps until reused).
 * Returns 0, or -1 with errno EINVAL when `tramp` is not a live trampoline
 * of `pt` (never wrapped, already released, or from another context).
 * Thread-safe. */
PERFTRAMP_API int perftramp_release(perftramp *pt, perftramp_fn tramp);

/* Returns the errno that disabled `output` (one PERFTRAMP_* bit) after the
 * context was opened (disk full, EFBIG, EIO, a vanished directory, a
 * refused file), or 0 when it works or was never enabled.  -1 with errno
 * EINVAL for a NULL context or not exactly one known bit.  Thread-safe. */
PERFTRAMP_API int perftramp_output_error(perftramp *pt, unsigned output);

/* Call in the child after fork().  The child gets its own
 * jit-<childpid>.dump and perf-<childpid>.map, each holding every
 * trampoline live in the child, written now; the parent's files are not
 * touched.  Trampolines made before the fork keep working in the child.
 * Returns 0, or -1 with errno (EINVAL for NULL).  Call it before any other
 * perftramp call in the child, while the child is still single-threaded.
 * Trampolines without a name copy (see PERFTRAMP_FORGET_NAMES) are named from
 * the parent's perf map as it is when this is called: lines the parent
 * writes after the fork may name an address it has reused, so call it
 * early, or use PERFTRAMP_ATFORK, which reads the map as it was at the fork.
 *
 * PERFTRAMP_ATFORK does the same lazily: the child writes nothing at the
 * fork, and its files (every live trampoline, then the new one) are
 * written at its first perftramp_wrap, or when it calls this function.
 * A child that only execs, or exits, or releases and closes, writes no
 * file at all: fork + exec costs no I/O however many trampolines live. */
PERFTRAMP_API int perftramp_after_fork_child(perftramp *pt);

/* Releases every trampoline, deregisters unwind and gdb information,
 * writes the jitdump CLOSE record and frees the context.  Trampolines must
 * not be running or called after this.  Returns 0, or -1 with errno EINVAL
 * for NULL, or the errno of the first output that failed to close (the
 * context is freed anyway).  Not thread-safe with other calls on pt. */
PERFTRAMP_API int perftramp_close(perftramp *pt);

/* ---- 0.2: outputs of a running process, source lines, any JIT's code ---- */

/* Changes the outputs of a live context to `outputs` (PERFTRAMP_* bits).
 * Enabling an output sends it every live trampoline and every published
 * code region, in address order: perf map lines, jitdump groups, unwinder
 * registrations, GDB entries, each trampoline under the name it was
 * wrapped with (unless PERFTRAMP_FORGET_NAMES or a name callback made the
 * context keep none: see PERFTRAMP_KEEP_NAMES).  A trampoline wrapped
 * concurrently appears exactly once (the switch holds the context's lock).  Disabling closes
 * the output cleanly: a jitdump gets its CLOSE record, unwinder and GDB
 * registrations are removed.  Enabling a jitdump again starts a new
 * jit-<pid>.dump (the old one is replaced).  An output that was disabled
 * by a failure is opened afresh when asked for again.
 * PERFTRAMP_ELF is different because code cannot move: enabling it makes
 * new trampolines come from new arenas that are ELF files (those already
 * made stay where they are and the other outputs keep naming them; a slot
 * released before may still be reused in ordinary memory); disabling it
 * puts new trampolines in ordinary memory again, while those already in
 * ELF files keep running there (their files stay, named as before).
 * Returns 0, or -1 with errno, and then nothing changed:
 *   EINVAL   pt NULL, an unknown bit
 *   ENOTSUP, ENOMEM, or the errno of opening or writing an output.
 * Thread-safe against wrap, release, publish and unpublish. */
PERFTRAMP_API int perftramp_set_outputs(perftramp *pt, unsigned outputs);

/* The outputs working now (a failed or refused output is not among them):
 * 0 for a NULL context. */
PERFTRAMP_API unsigned perftramp_outputs(perftramp *pt);

/* 0.2: a replay's names for trampolines that keep none (see
 * PERFTRAMP_FORGET_NAMES).  Called with the context's lock held, from the
 * thread that switches (perftramp_set_outputs, PERFTRAMP_SIGNAL's helper
 * thread, a forked child's first wrap): it must not call into this
 * context.  It writes the name of trampoline `tramp` to buf (at most
 * `size` bytes, NUL-terminated) and returns its length, or 0 for "no
 * name" (the perf map's or the placeholder is used).  An interpreter can
 * rebuild it from what the trampoline stands for (a code object's
 * qualified name and file), so the context never stores names.  fn NULL
 * removes the callback.  While one is set, wraps keep no name copy
 * (unless PERFTRAMP_KEEP_NAMES or an open GDB output); those wrapped
 * meanwhile keep none after it is removed (a replay then reads the perf
 * map or shows the placeholder).  0, or -1 with errno EINVAL for a NULL
 * context.  Thread-safe. */
typedef size_t (*perftramp_name_fn)(void *user_data, perftramp_fn tramp, char *buf, size_t size);
PERFTRAMP_API int perftramp_set_name_callback(perftramp *pt, perftramp_name_fn fn, void *user_data);

/* perftramp_wrap, with the interpreted function's source position: the
 * jitdump gets a DEBUG_INFO record (file:line at the trampoline's address)
 * before the LOAD, and a PERFTRAMP_ELF arena file a .debug_line row, so
 * `perf report --sort srcline` and `perf annotate` show it.  file NULL or
 * line 0: no line, the same as perftramp_wrap.  Lines start at 1: code
 * whose "line defined" is 0 (a Lua main chunk, a module's top level)
 * should pass 1, its first line.  file is copied. */
PERFTRAMP_API perftramp_fn perftramp_wrap_at(perftramp *pt, perftramp_fn target, const char *name,
                                             const char *file, unsigned line);

/* Publishing any JIT's own code: the rows of its call-frame information,
 * as data.  Each row is the rule change that holds from `offset` (bytes
 * from the code's start) on.  Register numbers are the architecture's
 * DWARF numbers; at offset 0 the architecture's entry rules hold (on
 * x86-64: CFA = rsp+8, return address at CFA-8). */
enum perftramp_cfi_op {
    PERFTRAMP_CFI_DEF_CFA = 1,      /* CFA = reg + value */
    PERFTRAMP_CFI_DEF_CFA_REGISTER, /* CFA = reg + (same offset) */
    PERFTRAMP_CFI_DEF_CFA_OFFSET,   /* CFA = (same reg) + value */
    PERFTRAMP_CFI_OFFSET,           /* reg saved at CFA + value */
    PERFTRAMP_CFI_RESTORE,          /* reg back to its rule at entry */
    PERFTRAMP_CFI_SAME_VALUE,
    PERFTRAMP_CFI_UNDEFINED,
};
struct perftramp_cfi {
    uint32_t offset;
    uint16_t op;    /* enum perftramp_cfi_op */
    uint16_t reg;
    int32_t value;
};

/* One function of a JIT.  Grows by the same size-safe rule as
 * perftramp_options: zero it or use designated initialisers. */
struct perftramp_code {
    const void *addr;                 /* executable address of the code */
    size_t size;
    const char *name;
    const struct perftramp_cfi *cfi;  /* sorted by offset; NULL with n_cfi 0: the entry rules hold throughout */
    size_t n_cfi;
    const char *file;                 /* optional source file and line, for DEBUG_INFO; NULL/0 for none */
    unsigned line;
    unsigned reserved;                /* must be 0 (keeps the struct free of tail padding) */
};

/* Publishes code the caller generated to every enabled output: a perf map
 * line; a jitdump [UNWINDING_INFO][DEBUG_INFO][LOAD] group written in one
 * write (code bytes copied now); an FDE registered with the in-process
 * unwinders (absolute pointers: the code may be anywhere); a GDB JIT
 * entry.  name, file and the rows are copied.  Returns 0, or -1 with
 * errno and nothing published:
 *   EINVAL   pt, code, addr or name NULL, size 0, an unsorted row, an
 *            offset outside the code, an unknown op or register, a
 *            non-zero reserved field
 *   EEXIST   the range overlaps a published region or a trampoline slot
 *   ENOMEM   out of memory
 * perftramp_publish is a macro passing the struct's size (like
 * perftramp_open); the function reads the struct as 0.2 defined it. */
PERFTRAMP_API int perftramp_publish_sized(perftramp *pt, const struct perftramp_code *code, size_t code_size);
PERFTRAMP_API int perftramp_publish(perftramp *pt, const struct perftramp_code *code);
#define perftramp_publish(pt, ...) perftramp_publish_sized((pt), (__VA_ARGS__), sizeof(struct perftramp_code))

/* Withdraws a published region: its unwinder and GDB registrations are
 * removed.  A perf map line cannot be unwritten and jitdump has no unload
 * record: perf keeps naming the range until other code is published
 * there.  Returns 0, or -1 with errno EINVAL when addr is not the start
 * of a published region. */
PERFTRAMP_API int perftramp_unpublish(perftramp *pt, const void *addr);

/* The library version, "MAJOR.MINOR.PATCH". */
PERFTRAMP_API const char *perftramp_version(void);

#ifdef __cplusplus
}
#endif
#endif /* PERFTRAMP_H */
