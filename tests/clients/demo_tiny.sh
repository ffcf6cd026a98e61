#!/bin/sh
# SPDX-License-Identifier: MIT
# examples/tiny, the example interpreter: the language works, errors name
# their line, and each interpreted function gets exactly one trampoline,
# named tiny::<name>, made the first time it runs.
set -u
tiny=${PT_BUILDDIR:-.}/examples/tiny/tiny
srcdir=${PT_SRCDIR:-.}
tmp=$(mktemp -d) || exit 1
pids=
trap 'for p in $pids; do rm -f /tmp/perf-$p.map; done; rm -rf "$tmp"' EXIT
fail() {
    echo "FAIL: $*"
    exit 1
}

cat > "$tmp/lang.tiny" << 'T'
# every construct once
fn fact(n) { if (n <= 1) { return 1; } return n * fact(n - 1); }
fn classify(x) {
    if (x < 0) { return -1; } else if (x == 0) { return 0; } else { return 1; }
}
fn is_even(n) { if (n == 0) { return 1; } return is_odd(n - 1); }
fn is_odd(n) { if (n == 0) { return 0; } return is_even(n - 1); }
fn unused(x) { return x; }
fn nothing() { return; }
i = 0; s = 0;
while (i < 10) { s = s + i % 3; i = i + 1; }
print("fact", fact(10), "sum", s);
print(classify(-5), classify(0), classify(7), -(3 - 10), 17 / 5, 17 % 5, -17 / 5);
print(1 < 2 && 2 < 3, 1 > 2 || 0, !0, !5, 3 != 3, 4 >= 4, is_even(11), is_odd(11), nothing());
T
cat > "$tmp/lang.expected" << 'T'
fact 3628800 sum 9
-1 0 1 7 3 2 -3
1 0 1 0 0 1 0 1 0
T
PERFTRAMP=perfmap "$tiny" "$tmp/lang.tiny" > "$tmp/lang.out" 2> "$tmp/lang.err" &
pid=$!
pids="$pids $pid"
wait $pid || fail "lang.tiny failed: $(cat "$tmp/lang.err")"
diff "$tmp/lang.expected" "$tmp/lang.out" || fail "lang.tiny printed the wrong values"
echo "ok: the language (functions, recursion, if/else, while, arithmetic, logic, print)"

map=/tmp/perf-$pid.map
[ -s "$map" ] || fail "PERFTRAMP=perfmap wrote no $map"
for f in '<main>' fact classify is_even is_odd nothing; do
    n=$(grep -c " tiny::$f\$" "$map")
    [ "$n" = 1 ] || fail "$map has $n lines for tiny::$f (expected one trampoline)"
done
grep -q 'tiny::unused' "$map" && fail "a function that never ran got a trampoline"
[ "$(wc -l < "$map")" = 6 ] || fail "$map has $(wc -l < "$map") lines, expected 6: $(cat "$map")"
echo "ok: one trampoline per function that ran, named tiny::<name>, none for a function never called"

# Errors: "tiny: FILE:LINE: kind: message", exit status 2 (syntax) or 1 (runtime).
check_error() {
    status=$1 line=$2 pattern=$3
    printf '%b' "$4" > "$tmp/err.tiny"
    "$tiny" "$tmp/err.tiny" > /dev/null 2> "$tmp/err.out"
    rc=$?
    [ $rc = "$status" ] || fail "exit status $rc, expected $status for: $4"
    grep -q "^tiny: $tmp/err.tiny:$line: $pattern" "$tmp/err.out" ||
        fail "expected 'err.tiny:$line: $pattern', got: $(cat "$tmp/err.out")"
    echo "ok: $(cat "$tmp/err.out")"
}
check_error 2 3 "syntax error: expected an expression but found ';'" 'fn f(x) {\n\n  return x +;\n}\n'
check_error 2 2 "syntax error: expected ')' but found '{'" 'x = 1;\nif (x { print(x); }\n'
check_error 2 1 "syntax error: call of undefined function 'g'" 'print(g(1));\n'
check_error 2 2 "syntax error: 'f' takes 2 arguments but is given 1" 'fn f(a, b) { return a; }\nf(1);\n'
check_error 2 1 "syntax error: unknown variable 'y'" 'x = y + 1;\n'
check_error 2 2 "syntax error: unterminated string" 'x = 1;\nprint("abc);\n'
check_error 2 1 "syntax error: unexpected character '@'" 'x = 1 @ 2;\n'
check_error 2 3 "syntax error: expected '}' but found end of file" 'fn f() {\n  return 1;\n'
check_error 1 3 "runtime error: division by zero" 'x = 0;\n\nprint(5 / x);\n'
check_error 1 1 "runtime error: recursion too deep" 'fn r(x) { return r(x + 1); }\nr(0);\n'

# The bundled scripts run and print their results.
for s in fib hofstadter hot; do
    out=$("$tiny" "$srcdir/examples/tiny/$s.tiny") || fail "examples/tiny/$s.tiny failed"
    [ -n "$out" ] || fail "examples/tiny/$s.tiny printed nothing"
    echo "ok: $s.tiny: $out" | tr '\n' ' '
    echo
done
