# SPDX-License-Identifier: MIT
"""Every outcome layout of unittest's verbose output, for the parser
tests/lib/unittest_outcomes.awk (tests/cpython/outcomes_samples.sh records
them with `python -m test --testdir tests/cpython/layouts -v`)."""
import unittest


class Outcomes(unittest.TestCase):
    def test_ok(self):
        pass

    def test_skipped(self):
        self.skipTest("no reason")

    def test_skipped_quote(self):
        self.skipTest("it's skipped")

    def test_fail(self):
        self.fail("boom")

    def test_error(self):
        raise RuntimeError("boom")

    @unittest.expectedFailure
    def test_xfail(self):
        self.fail("expected")

    @unittest.expectedFailure
    def test_xpass(self):
        pass

    def test_docstring(self):
        """A docstring's first line."""

    def test_output(self):
        print("the test's own output", flush=True)

    def test_subtest(self):
        for i in range(3):
            with self.subTest(i=i):
                self.assertNotEqual(i, 1)


class FixtureSkip(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise unittest.SkipTest("setUpClass says no")

    def test_never(self):
        pass


@unittest.skipUnless(False, "the class is decorated")
class Decorated(unittest.TestCase):
    def test_a(self):
        pass
