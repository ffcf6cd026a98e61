#!/bin/sh
# SPDX-License-Identifier: MIT
# The proof table at the end of `make check` (docs/testing.md).
#
# Reads tests/proofs.expected and, for every test of this run, its .log
# (PROOF:, NOTRUN: and SKIP: lines) and its .trs (PASS, FAIL, SKIP, ...),
# then prints one row per proof: proven, failed, not run or missing, with
# the detail or the reason.  Normally it only reports.  In strict mode any
# expected proof that is not proven, any PROOF line that is failed or
# not-run, any NOTRUN: or SKIP: line and any skipped test fails (exit 1).
#
# Strict mode, first match wins:
#   PERFTRAMP_ALL_PROOFS=1 / =0       on / off (0: the deliberate opt-out,
#                                     e.g. for a packaging pipeline)
#   configure --enable-all-proofs     on  (--configured yes)
#   configure --disable-all-proofs    off (--configured no)
#   CI=true (any value but 0/false/no) on
#
# usage: proof_summary.sh --expected FILE [--configured yes|no|auto]
#          [--tests-enabled yes|no] [--full yes|no] [--out FILE] LOG...
#   LOG...   this run's test logs (automake's $(TEST_LOGS)); NAME.log
#            belongs to test NAME, its result is in NAME.trs
#   --full   yes: TESTS is the whole suite (not overridden on the make
#            command line), so a proof whose test is not in it at all is
#            missing; no: proofs of tests outside this run are left out
set -u
expected='' configured=auto tests_enabled=yes full=yes out=''
while [ $# -gt 0 ]; do
    case $1 in
        --expected) expected=$2; shift 2 ;;
        --configured) configured=$2; shift 2 ;;
        --tests-enabled) tests_enabled=$2; shift 2 ;;
        --full) full=$2; shift 2 ;;
        --out) out=$2; shift 2 ;;
        --) shift; break ;;
        -*) echo "proof_summary.sh: unknown option $1" >&2; exit 2 ;;
        *) break ;;
    esac
done
[ -r "$expected" ] || { echo "proof_summary.sh: cannot read the expected proofs '$expected'" >&2; exit 2; }

truthy() {
    case $(printf '%s' "$1" | tr '[:upper:]' '[:lower:]') in
        '' | 0 | false | no | off) return 1 ;;
        *) return 0 ;;
    esac
}
case ${PERFTRAMP_ALL_PROOFS-} in
    1 | yes | true) strict=yes why="PERFTRAMP_ALL_PROOFS=$PERFTRAMP_ALL_PROOFS" ;;
    0 | no | false) strict=no why="PERFTRAMP_ALL_PROOFS=$PERFTRAMP_ALL_PROOFS: opted out" ;;
    '')
        case $configured in
            yes) strict=yes why="configure --enable-all-proofs" ;;
            no) strict=no why="configure --disable-all-proofs" ;;
            *) if truthy "${CI-}"; then strict=yes why="CI=${CI}"
               else strict=no why="not CI; PERFTRAMP_ALL_PROOFS=1 or configure --enable-all-proofs turns it on"; fi ;;
        esac ;;
    *)
        echo "proof_summary.sh: PERFTRAMP_ALL_PROOFS='$PERFTRAMP_ALL_PROOFS': want 1 (strict) or 0 (opt out)" >&2
        exit 2 ;;
esac

# One stream for awk: "@TEST name result log|nolog", then the test's
# PROOF/NOTRUN/SKIP lines.
stream() {
    for log in "$@"; do
        base=${log%.log}
        result=NONE
        if [ -f "$base.trs" ]; then
            result=$(sed -n 's/^:test-result: *\([A-Z]*\).*/\1/p' "$base.trs" | head -n 1)
            [ -n "$result" ] || result=NONE
        fi
        if [ -f "$log" ]; then
            echo "@TEST $base $result log"
            grep -E '^(PROOF|NOTRUN|SKIP):' "$log"
        else
            echo "@TEST $base $result nolog"
        fi
    done
}

table=$(stream "$@" | awk -v expfile="$expected" -v strict="$strict" -v why="$why" -v full="$full" -v tests_enabled="$tests_enabled" '
function rest(s, nfields) {   # s without its first nfields fields
    while (nfields-- > 0) sub(/^[ \t]*[^ \t]+[ \t]*/, "", s)
    return s
}
# "" when the detail satisfies the count spec, else why not
function count_problem(spec, detail,   label, min, pos, m, s, parts) {
    if (spec == "-" || spec == "") return ""
    pos = index(spec, ">=")
    label = substr(spec, 1, pos - 1); min = substr(spec, pos + 2) + 0
    m = 0
    if (label != "" && match(detail, label "[ :=]*[0-9]+/[0-9]+"))
        m = 1
    else if (match(detail, "[0-9]+/[0-9]+"))
        m = 2
    if (!m) return "no count in the detail (want \"" label " N/N\", N >= " min ")"
    s = substr(detail, RSTART, RLENGTH); sub(/^[^0-9]*/, "", s)
    split(s, parts, "/")
    if (parts[1] + 0 != parts[2] + 0) return "count " s ": not every check passed"
    if (parts[2] + 0 < min) return "count " s ": fewer checks than the " min " expected (" spec ")"
    return ""
}
function row(id, state, detail) {
    printf "  %-30s %-9s %s\n", id, state, detail
}
FNR == NR {                           # tests/proofs.expected
    if ($0 ~ /^[ \t]*(#|$)/) next
    ne++; eid[ne] = $1; etest[$1] = $2; ecount[$1] = $3; ewhen[$1] = $4; isexp[$1] = 1
    next
}
/^@TEST / { t = $2; result[t] = $3; haslog[t] = ($4 == "log"); inrun[t] = 1; tord[++nt] = t; next }
/^PROOF:/ {
    id = $2; v = $3; d = rest($0, 3)
    if (id == "" ) next
    if (!(id in seen)) { seen[id] = 1; sord[++ns] = id }
    if (v == "proven") { pv[id, t] = d; pvt[id] = t; pvd[id] = d }
    else if (v == "failed") { if (!(id in fl)) fl[id] = d " (" t ")" }
    else if (v == "not-run") { if (!(id in nr)) nr[id] = d " (" t ")" }
    else { if (!(id in fl)) fl[id] = "malformed PROOF line (verdict \"" v "\", want proven, failed or not-run) in " t }
    next
}
/^NOTRUN:/ { nn++; notrun[nn] = t ": " rest($0, 1); next }
/^SKIP:/ {
    if (result[t] == "SKIP") { if (!(t in skipwhy)) skipwhy[t] = rest($0, 1) }
    else { np++; partial[np] = t ": " rest($0, 1) }
    next
}
END {
    proven = failed = notrun_n = missing = pending = outside = xbad = 0
    print "=== proofs (" expfile "; strict mode " (strict == "yes" ? "on" : "off") ": " why ")"
    for (i = 1; i <= ne; i++) {
        id = eid[i]; t = etest[id]
        if (!(t in inrun)) {
            if (full != "yes" || ewhen[id] == "target") { outside++; continue }
            if (ewhen[id] == "pending") { pending++; row(id, "pending", t " is not in the tree yet"); continue }
            missing++
            row(id, "MISSING", t " is not in TESTS" (tests_enabled == "no" ? " (configure --disable-tests: unit tests not built)" : " (not built?)"))
            continue
        }
        if (!haslog[t]) { missing++; row(id, "MISSING", t " has no log (interrupted?)"); continue }
        if (id in fl) { failed++; row(id, "FAILED", fl[id]); continue }
        if ((id, t) in pv) {
            p = count_problem(ecount[id], pv[id, t])
            if (p == "") { proven++; row(id, "proven", pv[id, t]) }
            else { failed++; row(id, "FAILED", p ": " pv[id, t]) }
            continue
        }
        if (id in nr) { notrun_n++; row(id, "not run", nr[id]); continue }
        if (id in pvt) { missing++; row(id, "MISSING", "proven by " pvt[id] ", but tests/proofs.expected names " t); continue }
        if (result[t] == "SKIP") {
            notrun_n++; row(id, "not run", t " skipped: " ((t in skipwhy) ? skipwhy[t] : "exit 77 without a SKIP: reason")); continue
        }
        if (result[t] == "FAIL" || result[t] == "ERROR") { failed++; row(id, "FAILED", t " " result[t] " before printing this proof"); continue }
        missing++; row(id, "MISSING", t " (" result[t] ") printed no PROOF line for it")
    }
    extra = 0
    for (i = 1; i <= ns; i++) {
        id = sord[i]
        if (id in isexp) continue
        if (!extra++) print "--- other proofs printed by this run"
        if (id in fl) { xbad++; row(id, "FAILED", fl[id]) }
        else if (id in pvt) row(id, "proven", pvd[id] " (" pvt[id] ")")
        else { xbad++; row(id, "not run", nr[id]) }
    }
    if (nn) { print "--- parts of tests not run (NOTRUN:)"; for (i = 1; i <= nn; i++) print "  " notrun[i] }
    if (np) { print "--- parts of tests skipped (SKIP: lines in tests that ran)"; for (i = 1; i <= np; i++) print "  " partial[i] }
    ns77 = 0
    for (i = 1; i <= nt; i++) if (result[tord[i]] == "SKIP") ns77++
    if (ns77) {
        print "--- tests skipped (exit 77)"
        for (i = 1; i <= nt; i++) {
            t = tord[i]
            if (result[t] == "SKIP") print "  " t ": " ((t in skipwhy) ? skipwhy[t] : "no SKIP: reason printed")
        }
    }
    if (tests_enabled == "no")
        print "--- configure --disable-tests: no unit tests (Check suites) were built; their proofs cannot run"
    printf "=== %d proven, %d failed, %d not run, %d missing", proven, failed, notrun_n, missing
    if (pending) printf ", %d pending", pending
    if (outside) printf ", %d outside this run (TESTS=...)", outside
    printf "\n"
    bad = failed + notrun_n + missing + xbad + nn + np + ns77 + (tests_enabled == "no")
    if (strict == "yes") {
        if (bad) {
            printf "=== strict mode: FAIL: %d expected proof(s) not proven, %d other proof(s) failed or not run, %d NOTRUN, %d SKIP line(s), %d skipped test(s)%s\n", failed + notrun_n + missing, xbad, nn, np, ns77, (tests_enabled == "no" ? ", unit tests disabled" : "")
            print "=== (PERFTRAMP_ALL_PROOFS=0 opts out; docs/testing.md)"
            print "@STRICT-FAIL"
        } else
            print "=== strict mode: every proof of this run is proven"
    }
}' "$expected" -)
status=0
case $table in *@STRICT-FAIL*) status=1 ;; esac
table=$(printf '%s\n' "$table" | grep -v '^@STRICT-FAIL$')
printf '%s\n' "$table"
if [ -n "$out" ]; then printf '%s\n' "$table" > "$out" || status=1; fi
exit $status
