/* SPDX-License-Identifier: MIT */
/* pyversion.h: everything perftramp's CPython module takes from CPython's
 * internals, for each supported version (3.11, 3.12, 3.13), and nothing
 * else.  perftramp_module.c uses only the pt_py_* names below.
 *
 * What differs, and where it comes from (each version's Include/):
 *   - the frame's code object: _PyInterpreterFrame.f_code (3.11, 3.12;
 *     internal/pycore_frame.h) became f_executable, "code object or None"
 *     (3.13);
 *   - code-object extras: _PyCode_SetExtra and _PyEval_RequestCodeExtraIndex
 *     (3.11) became PyUnstable_Code_SetExtra and
 *     PyUnstable_Eval_RequestCodeExtraIndex (3.12+, cpython/code.h and
 *     cpython/ceval.h; the old names remain as inline wrappers there); the
 *     hook reads the slot in-line (pt_py_code_extra), without the call
 *     CPython's own trampoline makes, from a holder no header declares;
 *   - CPython's own perf trampoline (3.12+, `-X perf`, `-X perf_jit`,
 *     sys.activate_stack_trampoline) installs itself as the PEP 523 hook:
 *     sys.is_stack_trampoline_active() says so;
 *   - modules declare whether they support subinterpreters (3.12+,
 *     Py_mod_multiple_interpreters): this one does not, its state is global.
 * The same on all three: the hook's type _PyFrameEvalFunction
 * (PyObject *(*)(PyThreadState *, struct _PyInterpreterFrame *, int)),
 * _PyInterpreterState_GetEvalFrameFunc / _PyInterpreterState_SetEvalFrameFunc
 * (cpython/pystate.h) and _PyEval_EvalFrameDefault (cpython/ceval.h). */
#ifndef PERFTRAMP_PYVERSION_H
#define PERFTRAMP_PYVERSION_H

#if PY_VERSION_HEX < 0x030B0000 || PY_VERSION_HEX >= 0x030E0000
#error "perftramp's CPython module supports CPython 3.11, 3.12 and 3.13 only"
#endif
#ifdef Py_GIL_DISABLED
#error "perftramp's CPython module needs the GIL: free-threaded builds (3.13t) are not supported"
#endif

#include <internal/pycore_frame.h> /* _PyInterpreterFrame: internal, version-specific */

/* The PEP 523 eval-frame function. */
typedef _PyFrameEvalFunction pt_py_eval_fn;
#define pt_py_default_eval _PyEval_EvalFrameDefault

static inline pt_py_eval_fn pt_py_get_eval(PyInterpreterState *interp)
{
    return _PyInterpreterState_GetEvalFrameFunc(interp);
}

static inline void pt_py_set_eval(PyInterpreterState *interp, pt_py_eval_fn eval)
{
    _PyInterpreterState_SetEvalFrameFunc(interp, eval);
}

/* The code object a frame runs, or NULL when it runs something else. */
static inline PyCodeObject *pt_py_frame_code(struct _PyInterpreterFrame *frame)
{
#if PY_VERSION_HEX >= 0x030D0000
    PyObject *executable = frame->f_executable;
    return PyCode_Check(executable) ? (PyCodeObject *)executable : NULL;
#else
    return frame->f_code;
#endif
}

/* A code object's extra slot `index`, or NULL: what PyUnstable_Code_GetExtra
 * (_PyCode_GetExtra on 3.11) returns for a valid index, without the call.
 * co_extra (cpython/code.h) points at Objects/codeobject.c's private
 * holder, the same on 3.7 to 3.13: { Py_ssize_t ce_size; void *ce_extras[]; }. */
static inline void *pt_py_code_extra(PyCodeObject *co, Py_ssize_t index)
{
    const struct { Py_ssize_t size; void *extras[]; } *holder = co->co_extra;
    return holder && index < holder->size ? holder->extras[index] : NULL;
}

#if PY_VERSION_HEX >= 0x030C0000
#define pt_py_request_extra_index PyUnstable_Eval_RequestCodeExtraIndex
#define pt_py_set_extra PyUnstable_Code_SetExtra
#else
#define pt_py_request_extra_index _PyEval_RequestCodeExtraIndex
#define pt_py_set_extra _PyCode_SetExtra
#endif

/* 1 when CPython's own perf trampoline is active, 0 when not (always on
 * 3.11, which has none), -1 with an exception set when asking failed. */
static inline int pt_py_builtin_trampoline_active(void)
{
#if PY_VERSION_HEX >= 0x030C0000
    PyObject *sys = PyImport_ImportModule("sys");
    PyObject *active = sys ? PyObject_CallMethod(sys, "is_stack_trampoline_active", NULL) : NULL;
    Py_XDECREF(sys);
    if (!active)
        return -1;
    int yes = PyObject_IsTrue(active);
    Py_DECREF(active);
    return yes;
#else
    return 0;
#endif
}

/* Extra module slots of this version. */
#if PY_VERSION_HEX >= 0x030C0000
#define PT_PY_VERSION_SLOTS \
    { Py_mod_multiple_interpreters, Py_MOD_MULTIPLE_INTERPRETERS_NOT_SUPPORTED },
#else
#define PT_PY_VERSION_SLOTS
#endif

#endif /* PERFTRAMP_PYVERSION_H */
