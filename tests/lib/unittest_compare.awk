# SPDX-License-Identifier: MIT
# unittest_compare: two runs of the same test files side by side, from
# tests/lib/unittest_outcomes.awk's lines (ID<TAB>OUTCOME<TAB>DETAIL).
#   awk -F '\t' -f unittest_compare.awk CONTROL PATCHED
# Prints one row per test (both runs' outcomes; a test one run never
# reached shows "-"), then the line
#   counts: CONTROL_OK CONTROL_SKIPPED CONTROL_OTHER PATCHED_OK PATCHED_SKIPPED PATCHED_OTHER KEPT REGRESSED NEWLY_SKIPPED
# where KEPT counts the tests that pass in both, REGRESSED those that pass
# in CONTROL and not in PATCHED, NEWLY_SKIPPED those CONTROL ran (any
# outcome but skipped) and PATCHED skipped or never reached.  A module
# skipped as a whole (regrtest's "test_x skipped -- why") stands for each
# of its tests the other run reached.  Exit status 1 when REGRESSED or
# NEWLY_SKIPPED is not 0.
FNR == 1 { run++ }
{
    id = $1
    if (!(id in seen)) { seen[id] = 1; order[++n] = id }
    if (run == 1) { c[id] = $2; cd[id] = $3 } else { p[id] = $2; pd[id] = $3 }
    if (length(id) > w) w = length(id)
}
# a module skipped whole: its outcome, for a test id under it
function whole(id, out,   m) {
    m = id
    while (m ~ /\./) {
        sub(/\.[^.]*$/, "", m)
        if (m in out) return out[m]
        sub(/^test\./, "", m)   # regrtest names test.test_x as test_x
        if (m in out) return out[m]
    }
    return "-"
}
function cell(o, d) { return d == "" ? o : o " (" d ")" }
END {
    for (i = 1; i <= n; i++) {
        id = order[i]
        ctext[id] = cell(id in c ? c[id] : whole(id, c), cd[id])
        if (length(ctext[id]) > cw) cw = length(ctext[id])
    }
    for (i = 1; i <= n; i++) {
        id = order[i]
        co = id in c ? c[id] : whole(id, c)
        po = id in p ? p[id] : whole(id, p)
        printf "  %-" w "s  %-" cw "s  %s\n", id, ctext[id], cell(po, pd[id])
        if (id in c) { if (co == "ok") cok++; else if (co == "skipped") csk++; else cother++ }
        if (id in p) { if (po == "ok") pok++; else if (po == "skipped") psk++; else pother++ }
        if (id !~ /\./) continue   # a module's own row
        if (co == "ok" && po == "ok") kept++
        if (co == "ok" && po != "ok") regressed++
        if (co != "skipped" && co != "-" && (po == "skipped" || po == "-")) newly++
    }
    printf "counts: %d %d %d %d %d %d %d %d %d\n", cok, csk, cother, pok, psk, pother, kept, regressed, newly
    exit (regressed + newly) > 0
}
