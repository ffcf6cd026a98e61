# SPDX-License-Identifier: MIT
# tiny_stats: examples/tiny's call chains in `perf script -F ip,sym` (or any
# -F whose frames print ip then sym[+0xoff] [(dso)]), for tests/perf/tiny_perf.sh.
#   awk -f tests/lib/tiny_stats.awk < script.txt  ->  "evaluator-samples complete"
# A sample whose leaf frame is one of the evaluator's functions (exec, eval,
# binop, call, eval_function, entry_of) runs under a tiny:: trampoline; it
# is complete when its chain names a tiny:: function and reaches main.
# The layout is read as perf prints it, not by columns: a frame is a line
# that starts with a TAB ("\t%16lx sym"); any other line ends the sample
# before it (with -F ip,sym the header is an empty line; with comm or time
# it is text that may start with a space, a padded time).
function finish() {
    if (n > 0 && sym[1] ~ /^(exec|eval|binop|call|eval_function|entry_of)$/) {
        hot++
        if (has_tramp && has_main) complete++
    }
    n = 0; has_tramp = 0; has_main = 0
}
/^\t/ {
    s = $0
    sub(/^\t[ ]*[0-9a-f]+ /, "", s)
    if (match(s, / \([^(]*\)$/)) s = substr(s, 1, RSTART - 1)
    sub(/\+0x[0-9a-f]+$/, "", s)
    n++; sym[n] = s
    if (s ~ /^tiny::/) has_tramp = 1
    if (s == "main") has_main = 1
    next
}
{ finish() }
END { finish(); printf "%d %d\n", hot, complete + 0 }
