# SPDX-License-Identifier: MIT
# unittest_outcomes: each test's outcome in the output of
# `python -m test -v` (regrtest) or `python -m unittest -v`, CPython 3.11+.
#   awk -f unittest_outcomes.awk < OUTPUT
# Prints one line per test, in the order they ran:
#   ID<TAB>OUTCOME<TAB>DETAIL
# ID is module.Class.method (setUpClass and friends: module.Class.setUpClass;
# a whole module regrtest skipped: its name); OUTCOME is ok, skipped, FAIL,
# ERROR, xfail (expected failure), xpass (unexpected success); DETAIL is
# the skip reason, else empty.  A subtest's failure ("  test (id) [msg]
# ... FAIL") makes its test's outcome FAIL.  A test whose status never came
# (a crash) is printed as ERROR with DETAIL "no status".
#
# The layouts, as unittest's TextTestResult writes them at verbosity 2
# (tests/samples/unittest-verbose-layouts.txt holds each, recorded):
#   test_x (mod.Class.test_x) ... ok            status on the same line
#   test_x (mod.Class.test_x) ... <test output>
#   ok                                          status alone on a later line
#   test_x (mod.Class.test_x)
#   First line of the docstring ... ok          with a docstring
#   setUpClass (mod.Class) ... skipped 'why'    a fixture (_ErrorHolder)
#   test_x (mod.Class.test_x) ... skipped "it's"  reasons are repr()s
# and regrtest's line for a module skipped as a whole:
#   test_mod skipped -- why
function status(s) {
    if (s == "ok" || s == "FAIL" || s == "ERROR") return s
    if (s == "expected failure") return "xfail"
    if (s == "unexpected success") return "xpass"
    if (s ~ /^skipped ('.*'|".*")$/) return "skipped"
    return ""
}
function emit(id, s,   d) {
    d = ""
    if (status(s) == "skipped") d = substr(s, 10, length(s) - 10)
    if (id in outcome) {
        # a subtest's failure, then the test's own line
        if (outcome[id] != "FAIL" && outcome[id] != "ERROR") outcome[id] = status(s)
    } else {
        order[++n] = id
        outcome[id] = status(s)
    }
    if (d != "") detail[id] = d
    pending = ""
}
function no_status(id) {
    emit(id, "ERROR")
    detail[id] = "no status"
}
# "name (dotted.id)" -> the test's id
function test_id(head,   p, name, inner) {
    p = index(head, " (")
    name = substr(head, 1, p - 1)
    inner = substr(head, p + 2)
    sub(/\).*$/, "", inner)
    # a fixture's holder names the class only: "setUpClass (mod.Class)"
    if (substr(inner, length(inner) - length(name)) != "." name) inner = inner "." name
    return inner
}
# a test's description: "name (id)", maybe a subtest's " [msg] (params)"
/^ *[A-Za-z_][A-Za-z0-9_]* \([A-Za-z_][A-Za-z0-9_.]*\)/ {
    line = $0
    sub(/^ +/, "", line)
    id = test_id(line)
    if (pending != "" && pending != id) no_status(pending)
    p = index(line, " ... ")
    if (p == 0) { pending = id; next }    # a docstring line follows
    s = substr(line, p + 5)
    if (status(s) != "") emit(id, s)
    else pending = id
    next
}
pending != "" {
    # the docstring's line, or the status after the test's own output
    s = $0
    p = index(s, " ... ")
    if (p > 0 && status(substr(s, p + 5)) != "") { emit(pending, substr(s, p + 5)); next }
    if (status(s) != "") emit(pending, s)
    next
}
/^[A-Za-z_][A-Za-z0-9_.]* skipped -- / {
    id = $1
    order[++n] = id
    outcome[id] = "skipped"
    detail[id] = substr($0, length(id) + 13)
}
END {
    if (pending != "") no_status(pending)
    for (i = 1; i <= n; i++) {
        id = order[i]
        printf "%s\t%s\t%s\n", id, outcome[id], detail[id]
    }
}
