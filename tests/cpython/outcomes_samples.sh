#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lib/unittest_outcomes.awk, the parser of unittest's verbose output,
# on a recording of every layout (tests/samples/unittest-verbose-layouts.txt:
# `python -m test --testdir tests/cpython/layouts -v test_layouts
# test_layouts_skipped` on the stock CPython 3.13.5; to record it again:
# tests/cpython/outcomes_samples.sh --record PYTHON), under every awk here;
# then tests/lib/unittest_compare.awk on that run against itself and
# against a run where one passing test fails and one is skipped.
set -u
S=$(cd "${PT_SRCDIR:-.}" && pwd)
samples=$S/tests/samples/unittest-verbose-layouts
if [ "${1:-}" = --record ]; then
    t=$(mktemp -d)
    (cd "$t" && "$2" -m test --testdir "$S/tests/cpython/layouts" -v test_layouts test_layouts_skipped) \
        > "$samples.txt" 2>&1
    rm -rf "$t"
    awk -f "$S/tests/lib/unittest_outcomes.awk" "$samples.txt" > "$samples.expected"
    echo "recorded $samples.txt; check $samples.expected by eye"
    exit 0
fi
fail=0
awks=
for a in gawk mawk "busybox awk" original-awk; do
    $a 'BEGIN { exit 0 }' 2> /dev/null || continue
    awks="$awks, $a"
    $a -f "$S/tests/lib/unittest_outcomes.awk" "$samples.txt" > outcomes.$$ 2>&1
    if ! cmp -s outcomes.$$ "$samples.expected"; then
        echo "FAIL: $a reads the layouts differently:"
        diff "$samples.expected" outcomes.$$
        fail=1
    fi
done
rm -f outcomes.$$
echo "unittest_outcomes.awk: $(wc -l < "$samples.expected") outcomes read alike by${awks#,}"
# the comparison: the run against itself, then a regression and a skip
tab=$(printf '\t')
same=$(awk -F "$tab" -f "$S/tests/lib/unittest_compare.awk" "$samples.expected" "$samples.expected" | sed -n 's/^counts: //p')
echo "the run against itself: counts $same"
sed -e "s/^\(test_layouts.Outcomes.test_ok\)${tab}ok/\1${tab}FAIL/" \
    -e "s/^\(test_layouts.Outcomes.test_docstring\)${tab}ok${tab}/\1${tab}skipped${tab}why/" \
    "$samples.expected" > worse.$$
worse=$(awk -F "$tab" -f "$S/tests/lib/unittest_compare.awk" "$samples.expected" worse.$$ | sed -n 's/^counts: //p')
rm -f worse.$$
echo "with one test failing and one skipped: counts $worse"
# shellcheck disable=SC2086 # the counts, one word each
set -- $same
[ "$8" = 0 ] && [ "$9" = 0 ] && [ "$7" = "$1" ] || { echo "FAIL: the run against itself is not all kept"; fail=1; }
# shellcheck disable=SC2086
set -- $worse
[ "$8" = 2 ] && [ "$9" = 1 ] || { echo "FAIL: want 2 regressed, 1 newly skipped"; fail=1; }
exit $fail
