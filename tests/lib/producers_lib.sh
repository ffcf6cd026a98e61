# SPDX-License-Identifier: MIT
# Sourced by tests/producers_*.sh: runs a real jitdump producer under
# perf record -k 1, then perf inject --jit and perf script, and compares
# what perf did with what `perftramp check` said about the dump.
# Sets PT, work, fail; needs PROOF_ID (the proofs these lines are about,
# separated by spaces).

: "${PT_BUILDDIR:=.}" "${PT_SRCDIR:=.}"
PT="$PT_BUILDDIR/tools/perftramp"
SAMPLES="$PT_SRCDIR/tests/producers/jitdump_samples.py"
fail=0

not_run() {
    echo "SKIP: $1"
    for id in $PROOF_ID; do echo "PROOF: $id not-run $1"; done
    exit 77
}

failed() {
    echo "FAIL: $1"
    for id in $PROOF_ID; do echo "PROOF: $id failed $1"; done
    exit 1
}

[ -x "$PT" ] || failed "$PT not built"
command -v perf > /dev/null 2>&1 || not_run "perf is not installed"
command -v python3 > /dev/null 2>&1 || not_run "python3 is not installed (tests/producers/jitdump_samples.py)"
work=$(mktemp -d "${TMPDIR:-/tmp}/check_producers.XXXXXX") || exit 1
cleanup_extra=
trap 'rm -rf "$work" $cleanup_extra' EXIT
perf record -q -k 1 -e cpu-clock -o "$work/probe.data" true > /dev/null 2>&1 ||
    not_run "perf record is not permitted here"
rm -f "$work/probe.data"

# perf with a private build-id cache (HOME and --buildid-dir under $work)
p() {
    HOME=$work perf --buildid-dir "$work/buildid" "$@"
}

# record DIR CMD...: perf record -k 1 of CMD, its output in DIR/out.txt;
# REC_CALLGRAPH (e.g. "--call-graph dwarf") adds call chains, whose frames
# jitdump_samples.py checks too (a trampoline is seldom the sampled leaf)
record() {
    rec_dir=$1
    shift
    mkdir -p "$rec_dir"
    # shellcheck disable=SC2086
    p record -q -k 1 -e cpu-clock -F 2000 ${REC_CALLGRAPH:-} -o "$rec_dir/perf.data" "$@" > "$rec_dir/out.txt" 2>&1
}

# inject DIR DUMP: perf inject --jit; sets inject_rc and n_so (the
# jitted-<pid>-*.so perf wrote next to DUMP for it), and DIR/script.txt
inject() {
    inj_dir=$1 inj_dump=$2
    inj_pid=$(basename "$inj_dump" | sed -n 's/^jit-\([0-9]*\)\.dump$/\1/p')
    rm -f "$(dirname "$inj_dump")"/jitted-"${inj_pid:-x}"-*.so
    p inject --jit -i "$inj_dir/perf.data" -o "$inj_dir/jit.data" > "$inj_dir/inject.txt" 2>&1
    inject_rc=$?
    n_so=$(find "$(dirname "$inj_dump")" -maxdepth 1 -name "jitted-${inj_pid:-x}-*.so" | wc -l)
    if [ "$inject_rc" -eq 0 ]; then
        p script -F time,ip,sym,dso --ns -i "$inj_dir/jit.data" > "$inj_dir/script.txt" 2> /dev/null
    else
        : > "$inj_dir/script.txt"
    fi
}

# the installed perf, asked once (the check would ask it at every run)
perf_version=$(perf version 2> /dev/null | sed -n 's/^perf version \([0-9]*\.[0-9]*\).*/\1/p')
[ -n "$perf_version" ] || not_run "cannot tell the perf version"
perf version --build-options 2> /dev/null | grep -q 'libcrypto: \[ on' && perf_version="$perf_version+libcrypto"

# judge DUMP [ARGS]: perftramp check; sets check_rc, check.txt, check.json
# (--all) and records.txt in $work; n_load = LOADs perf reads
judge() {
    j_dump=$1
    shift
    "$PT" check --perf-version "$perf_version" "$@" "$j_dump" > "$work/check.txt" 2>&1
    check_rc=$?
    "$PT" check --perf-version "$perf_version" --json --all "$@" "$j_dump" > "$work/check.json" 2> /dev/null
    "$PT" check --perf-version "$perf_version" --records "$@" "$j_dump" > "$work/records.txt" 2> /dev/null
    n_load=$(python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"][0]; print(f.get("records",{}).get("LOAD",0))' "$work/check.json" 2> /dev/null || echo 0)
    [ $check_rc -lt 128 ] || failed "perftramp check crashed on $j_dump (exit $check_rc)"
}

# has_kind KIND: the check reported a finding of that kind
has_kind() {
    python3 -c 'import json,sys; f=json.load(open(sys.argv[1]))["files"][0]; sys.exit(0 if any(i["kind"] == sys.argv[2] for i in f.get("findings", [])) else 1)' "$work/check.json" "$1"
}

# samples DIR: names perf gave samples against the code that ran there;
# sets s_expected, s_named, s_misnamed, s_predicted, s_reused, s_reused_named
samples() {
    python3 "$SAMPLES" "$work/records.txt" "$1/script.txt" "$work/check.json" > "$1/samples.txt" || failed "jitdump_samples.py"
    grep '^#' "$1/samples.txt"
    s_expected=$(awk '$1 == "expected" { print $2 }' "$1/samples.txt")
    s_named=$(awk '$1 == "named" { print $2 }' "$1/samples.txt")
    s_misnamed=$(awk '$1 == "misnamed" { print $2 }' "$1/samples.txt")
    s_predicted=$(awk '$1 == "predicted" { print $2 }' "$1/samples.txt")
    s_reused=$(awk '$1 == "reused" { print $2 }' "$1/samples.txt")
    s_reused_named=$(awk '$1 == "reused_named" { print $2 }' "$1/samples.txt")
}

# agree LABEL: the check's verdict must match what perf did:
#  valid   <=> perf inject exit 0, one .so per LOAD, and every sample in
#              LOADed code named after the code that ran there (except where
#              the check warned it would not be: overlap.tail_on_code)
agree() {
    ag_label=$1
    perf_ok=1
    [ "$inject_rc" -eq 0 ] || perf_ok=0
    [ "$n_so" -eq "$n_load" ] || perf_ok=0
    [ "${s_misnamed:-0}" -eq "${s_predicted:-0}" ] || perf_ok=0
    echo "$ag_label: check exit $check_rc; perf inject exit $inject_rc, $n_so .so for $n_load LOADs;" \
        "samples in jitted code ${s_expected:-0}, named right ${s_named:-0}, mis-named ${s_misnamed:-0}" \
        "(${s_predicted:-0} where the check warned)"
    if [ $check_rc -eq 0 ] && [ $perf_ok -eq 1 ]; then
        return 0
    fi
    if [ $check_rc -eq 1 ] && [ $perf_ok -eq 0 ]; then
        return 0
    fi
    echo "FAIL: $ag_label: the check (exit $check_rc) and perf disagree"
    head -40 "$work/check.txt"
    head -5 "$inj_dir/inject.txt" 2> /dev/null
    fail=1
    return 1
}
