/* SPDX-License-Identifier: MIT */
/* perftramp._perftramp: perf support for CPython 3.11, 3.12 and 3.13
 * through PEP 523.
 *
 * The interpreter's frame-evaluation hook (PEP 523,
 * _PyInterpreterState_SetEvalFrameFunc) lets an extension route every
 * Python frame through a function of its own.  Ours calls
 * _PyEval_EvalFrameDefault through a trampoline unique to the frame's code
 * object, named "py::<qualname>:<filename>" as CPython 3.12+ names them, so
 * perf shows one named native frame per Python frame.  The trampoline is
 * made the first time a code object runs and cached in a code-object extra
 * slot (PEP 523's co_extra).  CPython 3.12+ does the same with its own
 * trampoline (-X perf); only one hook can be installed, so enable() refuses
 * while CPython's trampoline or any other hook is active.
 *
 * What differs between versions lives in pyversion.h, and only there.
 *
 * A side effect worth knowing: CPython inlines Python-to-Python calls into
 * one C call of the evaluator only while no eval-frame hook is installed;
 * with ours (or CPython's own trampoline) installed, every Python call is a
 * C call, as it must be for a native frame per Python frame.
 *
 * The perftramp context is opened by the first enable() and lives until
 * the interpreter exits: trampolines may still be running (or suspended
 * generators may resume through the default evaluator later), and reopening
 * would truncate this process's jit-<pid>.dump, which perf has mapped. */
#define PY_SSIZE_T_CLEAN
#define Py_BUILD_CORE_MODULE 1 /* _PyInterpreterFrame lives in the internal headers */
#include <Python.h>

#include "pyversion.h"
#include <perftramp.h>

#include <errno.h>
#include <string.h>

PyMODINIT_FUNC PyInit__perftramp(void);

static perftramp *pt;           /* opened by the first enable(), never reopened */
static unsigned pt_outputs;     /* its outputs */
static char *pt_outputs_text;   /* as the caller spelled them */
static int pt_signal;          /* PERFTRAMP_SIGNAL's signal, 0: none */
static int installed;          /* enable() installed our hook; disable() not yet called */
static Py_ssize_t extra_index = -1;
static pt_py_eval_fn previous_eval; /* what enable() found; disable() puts it back */
static long active_frames;     /* trampoline calls on C stacks (GIL-protected) */

/* A code object's trampoline; NULL-safe to free. */
static void free_code_extra(void *tramp)
{
    /* Trampolines are not released: with a perf map (no timestamps) a
     * reused address would give old samples a new name.  CPython 3.12
     * keeps its trampolines for the life of the process too. */
    (void)tramp;
}

static perftramp_fn new_trampoline(PyCodeObject *co)
{
    const char *qualname = PyUnicode_AsUTF8(co->co_qualname);
    const char *filename = qualname ? PyUnicode_AsUTF8(co->co_filename) : NULL;
    if (!qualname || !filename) {
        PyErr_Clear();
        return NULL;
    }
    /* "py::<qualname>:<filename>", by memcpy: snprintf took ~900
     * instructions a function (callgrind, bench/python_create.py) */
    size_t qlen = strlen(qualname), flen = strlen(filename);
    char short_name[256];
    char *name = qlen + flen + sizeof "py:::" <= sizeof short_name ? short_name
                                                                   : PyMem_RawMalloc(qlen + flen + sizeof "py:::");
    if (!name)
        return NULL;
    memcpy(name, "py::", 4);
    memcpy(name + 4, qualname, qlen);
    name[4 + qlen] = ':';
    memcpy(name + 5 + qlen, filename, flen + 1);
    /* co_filename:co_firstlineno as the trampoline's source position: the
     * jitdump's DEBUG_INFO, so `perf report --sort sym,srcline` shows
     * fib.py:<line> for the frame */
    perftramp_fn t = perftramp_wrap_at(pt, (perftramp_fn)pt_py_default_eval, name, filename,
                                       co->co_firstlineno > 0 ? (unsigned)co->co_firstlineno : 0);
    if (name != short_name)
        PyMem_RawFree(name);
    if (t && pt_py_set_extra((PyObject *)co, extra_index, (void *)t) != 0) {
        PyErr_Clear();
        perftramp_release(pt, t); /* uncached, it would leak one per call */
        t = NULL;
    }
    return t;
}

/* The first call of a code object (or of one whose trampoline could not be
 * made): make its trampoline, or fall back to the default evaluator.  Kept
 * out of line so that the hook's hot path saves no registers for it. */
__attribute__((noinline, cold)) static pt_py_eval_fn first_call(PyCodeObject *co)
{
    perftramp_fn t = co ? new_trampoline(co) : NULL;
    return t ? (pt_py_eval_fn)t : pt_py_default_eval;
}

/* The PEP 523 eval-frame function: the frame's code object's trampoline
 * calls the default evaluator.  throwflag is passed through unchanged, so
 * generators and coroutines resumed with throw() work as before.  The
 * trampoline is read from the code object's extra slot in-line
 * (pt_py_code_extra): CPython's own trampoline pays a call for that. */
static PyObject *trampoline_eval(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag)
{
    PyCodeObject *co = pt_py_frame_code(frame);
    pt_py_eval_fn eval = co ? (pt_py_eval_fn)pt_py_code_extra(co, extra_index) : NULL;
    if (!eval)
        eval = first_call(co);
    active_frames++;
    PyObject *result = eval(ts, frame, throwflag);
    active_frames--;
    return result;
}

/* Benchmarks only (_hook_only): the hook without trampolines, what any
 * PEP 523 hook costs by itself. */
static PyObject *hook_only_eval(PyThreadState *ts, struct _PyInterpreterFrame *frame, int throwflag)
{
    return pt_py_default_eval(ts, frame, throwflag);
}

static pt_py_eval_fn our_eval = trampoline_eval; /* the hook enable() installs */

static int parse_outputs(const char *text, unsigned *bits)
{
    static const struct { const char *word; unsigned bit; } words[] = {
        { "perfmap", PERFTRAMP_PERF_MAP }, { "jitdump", PERFTRAMP_JITDUMP },
        { "unwind", PERFTRAMP_UNWIND }, { "gdb", PERFTRAMP_GDB }, { "all", PERFTRAMP_ALL },
        { "elf", PERFTRAMP_ELF },
    };
    *bits = 0;
    const char *p = text;
    while (*p) {
        size_t len = strcspn(p, ",");
        size_t i;
        for (i = 0; i < sizeof words / sizeof words[0]; i++)
            if (len == strlen(words[i].word) && strncmp(p, words[i].word, len) == 0)
                break;
        if (len > 0 && i == sizeof words / sizeof words[0]) {
            PyObject *word = PyUnicode_DecodeUTF8(p, (Py_ssize_t)len, "replace");
            if (word)
                PyErr_Format(PyExc_ValueError,
                             "unknown perftramp output '%U' (expected a comma list of "
                             "perfmap, jitdump, unwind, gdb, all, elf)", word);
            Py_XDECREF(word);
            return -1;
        }
        if (len > 0)
            *bits |= words[i].bit;
        p += len;
        if (*p == ',')
            p++;
    }
    return 0;
}

/* enable() found `current` installed where it would put its hook: refuse,
 * changing nothing, unless it is CPython's default evaluator. */
static int refuse_other_hook(pt_py_eval_fn current)
{
    if (current == pt_py_default_eval)
        return 0;
    int builtin = pt_py_builtin_trampoline_active();
    if (builtin < 0)
        return -1;
    if (builtin)
        PyErr_SetString(PyExc_RuntimeError,
                        "perftramp.enable(): CPython's own perf trampoline is active (python -X perf, "
                        "-X perf_jit, PYTHONPERFSUPPORT or sys.activate_stack_trampoline()); only one "
                        "eval-frame hook can be installed: call sys.deactivate_stack_trampoline() first");
    else
        PyErr_SetString(PyExc_RuntimeError,
                        "perftramp.enable(): another PEP 523 eval-frame hook is installed (a debugger, "
                        "profiler or JIT?); perftramp does not replace it");
    return -1;
}

static PyObject *py_enable(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = { "outputs", "jitdump_dir", "signal", NULL };
    const char *outputs = "jitdump,perfmap";
    const char *jitdump_dir = NULL;
    int signo = 0;
    unsigned bits;
    (void)self;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|szi:enable", kwlist, &outputs, &jitdump_dir, &signo))
        return NULL;
    if (parse_outputs(outputs, &bits) != 0)
        return NULL;
    /* The code-extra index belongs to the main interpreter. */
    if (PyInterpreterState_Get() != PyInterpreterState_Main()) {
        PyErr_SetString(PyExc_RuntimeError, "perftramp.enable() works in the main interpreter only");
        return NULL;
    }
    PyInterpreterState *interp = PyInterpreterState_Get();
    pt_py_eval_fn current = pt_py_get_eval(interp);
    if (current != our_eval && refuse_other_hook(current) != 0)
        return NULL;
    if (pt && (bits != pt_outputs || signo != pt_signal)) {
        PyErr_Format(PyExc_ValueError,
                     "perftramp is already open with outputs \"%s\" (signal %d) in this process; "
                     "enable() cannot change them (set_outputs() switches the outputs)",
                     pt_outputs_text, pt_signal);
        return NULL;
    }
    if (!pt) {
        /* with a signal (PERFTRAMP_SIGNAL): the outputs start off, and each
         * signal toggles them (on: `outputs`, or $PERFTRAMP's when set) */
        struct perftramp_options opts = {
            .outputs = bits, .jitdump_dir = jitdump_dir,
            .flags = PERFTRAMP_ATFORK | (signo ? PERFTRAMP_SIGNAL : 0), .signal = signo,
        };
        pt = perftramp_open(&opts);
        if (!pt)
            return PyErr_Format(PyExc_OSError, "perftramp_open(outputs=\"%s\", signal=%d): %s", outputs,
                                signo, strerror(errno));
        if (signo && perftramp_set_outputs(pt, 0) != 0) {
            int e = errno;
            perftramp_close(pt);
            pt = NULL;
            return PyErr_Format(PyExc_OSError, "perftramp_set_outputs(0): %s", strerror(e));
        }
        pt_signal = signo;
        pt_outputs = bits;
        pt_outputs_text = PyMem_RawMalloc(strlen(outputs) + 1);
        if (pt_outputs_text)
            strcpy(pt_outputs_text, outputs);
    }
    if (current != our_eval) {
        previous_eval = current;
        pt_py_set_eval(interp, our_eval);
        installed = 1;
    }
    Py_RETURN_NONE;
}

static PyObject *py_disable(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    if (!installed)
        Py_RETURN_NONE;
    PyInterpreterState *interp = PyInterpreterState_Get();
    pt_py_eval_fn current = pt_py_get_eval(interp);
    if (current == previous_eval) { /* someone already put it back */
        installed = 0;
        Py_RETURN_NONE;
    }
    if (current != our_eval) {
        /* Someone installed a hook over ours: putting ours' predecessor back
         * would silently remove theirs. */
        PyErr_SetString(PyExc_RuntimeError,
                        "perftramp.disable(): another eval-frame hook replaced perftramp's after "
                        "enable(); it is left in place (remove it first)");
        return NULL;
    }
    pt_py_set_eval(interp, previous_eval);
    installed = 0;
    Py_RETURN_NONE;
}

/* For bench/python_overhead.py: how much of the cost is PEP 523 itself
 * (CPython stops inlining Python-to-Python calls once a hook is installed). */
static PyObject *py_hook_only(PyObject *self, PyObject *flag)
{
    (void)self;
    int v = PyObject_IsTrue(flag);
    if (v < 0)
        return NULL;
    PyInterpreterState *interp = PyInterpreterState_Get();
    int was_installed = pt_py_get_eval(interp) == our_eval;
    our_eval = v ? hook_only_eval : trampoline_eval;
    if (was_installed)
        pt_py_set_eval(interp, our_eval);
    Py_RETURN_NONE;
}

static PyObject *py_set_outputs(PyObject *self, PyObject *arg)
{
    (void)self;
    const char *text = PyUnicode_AsUTF8(arg);
    unsigned bits;
    if (!text || parse_outputs(text, &bits) != 0)
        return NULL;
    if (!pt) {
        PyErr_SetString(PyExc_RuntimeError, "perftramp.set_outputs(): call enable() first");
        return NULL;
    }
    /* replays every trampoline made so far to the outputs turned on */
    if (perftramp_set_outputs(pt, bits) != 0)
        return PyErr_Format(PyExc_OSError, "perftramp_set_outputs(\"%s\"): %s", text, strerror(errno));
    Py_RETURN_NONE;
}

static PyObject *py_outputs(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    static const struct { const char *word; unsigned bit; } words[] = {
        { "perfmap", PERFTRAMP_PERF_MAP }, { "jitdump", PERFTRAMP_JITDUMP },
        { "unwind", PERFTRAMP_UNWIND }, { "gdb", PERFTRAMP_GDB }, { "elf", PERFTRAMP_ELF },
    };
    unsigned bits = pt ? perftramp_outputs(pt) : 0;
    char text[64] = "";
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (bits & words[i].bit) {
            if (*text)
                strcat(text, ",");
            strcat(text, words[i].word);
        }
    return PyUnicode_FromString(text);
}

static PyObject *py_is_enabled(PyObject *self, PyObject *unused)
{
    (void)self;
    (void)unused;
    return PyBool_FromLong(pt_py_get_eval(PyInterpreterState_Get()) == our_eval);
}

/* At the very end of Py_FinalizeEx no Python code runs any more: write the
 * jitdump CLOSE record.  A daemon thread stopped inside a trampoline keeps
 * the context open (active_frames). */
static void close_at_exit(void)
{
    if (pt && active_frames == 0) {
        perftramp_close(pt);
        pt = NULL;
    }
}

static PyMethodDef methods[] = {
    { "enable", (PyCFunction)(void (*)(void))py_enable, METH_VARARGS | METH_KEYWORDS,
      "enable(outputs=\"jitdump,perfmap\", jitdump_dir=None, signal=0)\n--\n\n"
      "Run every Python frame through a trampoline named py::<qualname>:<filename>,\n"
      "with co_filename:co_firstlineno as its source line (perf report --sort srcline).\n"
      "outputs: comma list of perfmap, jitdump, unwind, gdb, all, elf.  The first call\n"
      "opens perftramp; set_outputs() switches the outputs later.  signal (e.g.\n"
      "signal.SIGUSR2): the outputs start off and each such signal toggles them\n"
      "(kill -USR2 <pid>, then perf record -p <pid>).\n"
      "Raises RuntimeError, changing nothing, while CPython's own perf trampoline\n"
      "(-X perf, 3.12+) or another PEP 523 eval-frame hook is installed." },
    { "disable", py_disable, METH_NOARGS,
      "disable()\n--\n\nStop routing new frames through trampolines.  Frames already\n"
      "running keep theirs; enable() turns it back on with the same outputs.\n"
      "Puts back exactly the hook enable() found (CPython's default evaluator)." },
    { "set_outputs", py_set_outputs, METH_O,
      "set_outputs(outputs)\n--\n\nSwitch the outputs of the running process (a comma list as for\n"
      "enable(); \"\" turns them all off).  Turning one on sends it every trampoline\n"
      "made so far; a jitdump turned off gets its CLOSE record.  Raises OSError,\n"
      "changing nothing, when an output cannot be opened." },
    { "outputs", py_outputs, METH_NOARGS,
      "outputs()\n--\n\nThe outputs working now, as a comma list (\"\" for none)." },
    { "is_enabled", py_is_enabled, METH_NOARGS, "is_enabled()\n--\n\nTrue while perftramp's eval-frame hook is installed." },
    { "_hook_only", py_hook_only, METH_O,
      "_hook_only(flag)\n--\n\nBenchmarks only: while true, the hook runs frames without trampolines." },
    { NULL, NULL, 0, NULL },
};

static int module_exec(PyObject *m)
{
    (void)m;
    if (extra_index < 0) {
        extra_index = pt_py_request_extra_index(free_code_extra);
        if (extra_index < 0) {
            PyErr_SetString(PyExc_RuntimeError, "no free code-object extra slot");
            return -1;
        }
        Py_AtExit(close_at_exit);
    }
    return 0;
}

static PyModuleDef_Slot slots[] = {
    { Py_mod_exec, module_exec },
    PT_PY_VERSION_SLOTS
    { 0, NULL },
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_perftramp",
    "perf support for CPython 3.11-3.13: one perftramp trampoline per code object (PEP 523)",
    0, methods, slots, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__perftramp(void)
{
    return PyModuleDef_Init(&module);
}
