/* SPDX-License-Identifier: MIT */
// PERFTRAMP_UNWIND with C++ exceptions: an exception thrown by the target
// crosses the trampoline and is caught by the caller, 1,000 times, while
// trampolines come and go.  The control (no PERFTRAMP_UNWIND) must end in
// std::terminate: the unwinder cannot cross a frame it knows nothing of.
#include "perftramp.h"

#include <check.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <string>

namespace {

struct thrown : std::runtime_error {
    int value;
    explicit thrown(int v) : std::runtime_error("thrown by the target"), value(v) {}
};

__attribute__((noinline)) int target(int x)
{
    if (x >= 0)
        throw thrown(x);
    return x;
}

using int_fn = int (*)(int);

__attribute__((noinline)) int caller(int_fn fn, int x)
{
    try {
        return fn(x);
    } catch (const thrown &e) {
        return e.value + 1000;
    }
}

perftramp *open_with(unsigned outputs)
{
    perftramp_options o{};
    o.outputs = outputs;
    perftramp *pt = perftramp_open(&o);
    ck_assert_msg(pt != nullptr, "perftramp_open: %s", std::strerror(errno));
    return pt;
}

int_fn wrap(perftramp *pt, const std::string &name)
{
    auto f = reinterpret_cast<int_fn>(perftramp_wrap(pt, reinterpret_cast<perftramp_fn>(target), name.c_str()));
    ck_assert_msg(f != nullptr, "perftramp_wrap: %s", std::strerror(errno));
    return f;
}

} // namespace

START_TEST(test_exception_crosses_trampoline_1000_times)
{
    perftramp *pt = open_with(PERFTRAMP_UNWIND);
    int_fn keep = wrap(pt, "py::kept");
    for (int i = 0; i < 1000; i++) {
        int_fn f = (i % 2) ? keep : wrap(pt, "py::f" + std::to_string(i));
        ck_assert_int_eq(caller(f, i), i + 1000);
        ck_assert_int_eq(caller(f, -5), -5); // and the normal return still works
        if (f != keep)
            ck_assert_int_eq(perftramp_release(pt, reinterpret_cast<perftramp_fn>(f)), 0);
    }
    ck_assert_int_eq(perftramp_output_error(pt, PERFTRAMP_UNWIND), 0);
    ck_assert_int_eq(perftramp_close(pt), 0);
}
END_TEST

// Expected to die with SIGABRT (std::terminate).
START_TEST(test_control_without_unwind_info_terminates)
{
    perftramp *pt = open_with(0);
    int_fn f = wrap(pt, "py::unregistered");
    caller(f, 1);
    ck_abort_msg("the exception crossed a trampoline with no unwind info registered");
}
END_TEST

int main()
{
    Suite *s = suite_create("unwind_cxx");
    TCase *tc = tcase_create("exceptions");
    tcase_add_test(tc, test_exception_crosses_trampoline_1000_times);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    bool control = srunner_fork_status(sr) != CK_NOFORK;
    if (!control)
        std::puts("NOTRUN: cxx-eh control: CK_FORK=no: the std::terminate control (no unwind info) needs its own process");
    else
        tcase_add_test_raise_signal(tc, test_control_without_unwind_info_terminates, SIGABRT);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    if (failed)
        std::puts("PROOF: output.cxx-eh failed (see the checks above)");
    else
        std::printf("PROOF: output.cxx-eh proven a C++ exception crossed trampolines 1000 times%s\n",
                    control ? "; without unwind info it terminates (control)" : "");
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
