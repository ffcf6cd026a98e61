#!/bin/bash
# SPDX-License-Identifier: MIT
# Mutation score: breaks the product on purpose, one mutation at a time,
# and requires every named test to catch each break (docs/testing.md).
#
# Copies the tree (git's tracked and untracked, not ignored, files) to a
# scratch directory, configures and builds it once, and runs every killer
# test unmutated (a killer that does not pass there cannot prove anything).
# Then, per mutation of tests/mutations/list.txt: applies its sed script,
# rebuilds incrementally (the library, the killers' programs and the test
# helper programs only), runs the killers through the automake harness, and
# restores the file.  A mutation is killed when every killer FAILs; it
# survives when any killer passes or skips.  STALE (the sed script changed
# nothing) and NOBUILD (the mutant does not compile) are defects of the
# list.  Exits 1 unless every mutation that ran was killed.
#
# usage: tests/mutate.sh [--only ID[,ID...]]... [--slice N/K] [--baseline-from DIR]
#                        [--list] [--keep] [--scratch DIR]
#   --only ID     run only these mutations (repeatable)
#   --slice N/K   run only the mutations whose rank, counted from 0 in the
#                 list's order, is N modulo K; the mutations an emulated machine
#                 kills (tests/guest/) are ranked apart from the others, so
#                 they spread over the slices (CI runs one slice per commit,
#                 in turn); the others are only checked for STALE
#   --baseline-from DIR  a killer whose DIR/<test>.trs says PASS, written after
#                 DIR's library was built (the README's make check of the same
#                 tree), is not rerun for the baseline
#   --list        print the mutations and exit
#   --keep        keep the scratch directory (printed at the start)
#   --scratch DIR use DIR as the scratch tree; if it already holds a built
#                 copy (from --keep), reuse it without copying or building
# Environment: PT_MUTATE_JOBS (make -j, default 2), PERFTRAMP_CONFIGURE_FLAGS
# (extra configure flags for the scratch build; --enable-werror is always on).
set -u
top=$(cd "$(dirname "$0")/.." && pwd)
list=$top/tests/mutations/list.txt
jobs=${PT_MUTATE_JOBS:-2}
only=() keep=0 scratch='' list_only=0 slice='' base_from=''

usage() { sed -n '/^# usage:/,/^set -u$/{/^set -u$/d;s/^# \{0,1\}//;p;}' "$0"; }
while [ $# -gt 0 ]; do
    case $1 in
        --only) [ $# -ge 2 ] || { usage >&2; exit 2; }; IFS=, read -r -a ids_arg <<< "$2"; only+=("${ids_arg[@]}"); shift 2 ;;
        --list) list_only=1; shift ;;
        --keep) keep=1; shift ;;
        --slice)
            case ${2:-} in [0-9]*/[0-9]*) slice=$2 ;; *) usage >&2; exit 2 ;; esac
            [ "${slice%/*}" -lt "${slice#*/}" ] || { echo "mutate.sh: --slice N/K wants N < K" >&2; exit 2; }
            shift 2 ;;
        --baseline-from) [ $# -ge 2 ] || { usage >&2; exit 2; }; base_from=$2; shift 2 ;;
        --scratch) [ $# -ge 2 ] || { usage >&2; exit 2; }; scratch=$2; shift 2 ;;
        -h | --help) usage; exit 0 ;;
        *) echo "mutate.sh: unknown argument '$1'" >&2; usage >&2; exit 2 ;;
    esac
done
[ -r "$list" ] || { echo "mutate.sh: cannot read $list" >&2; exit 2; }

# ---- the list: id | file | sed | killers | note
m_id=() m_file=() m_sed=() m_killers=() m_note=()
lineno=0
while IFS= read -r line || [ -n "$line" ]; do
    lineno=$((lineno + 1))
    case $line in '' | '#'*) continue ;; esac
    fields=()
    rest=$line
    while :; do
        case $rest in
            *' | '*) fields+=("${rest%% | *}"); rest=${rest#* | } ;;
            *) fields+=("$rest"); break ;;
        esac
    done
    if [ ${#fields[@]} -ne 5 ]; then
        echo "mutate.sh: $list:$lineno: want 5 fields separated by ' | ', found ${#fields[@]}" >&2
        exit 2
    fi
    for id in "${m_id[@]}"; do
        [ "$id" != "${fields[0]}" ] || { echo "mutate.sh: $list:$lineno: duplicate id ${fields[0]}" >&2; exit 2; }
    done
    m_id+=("${fields[0]}") m_file+=("${fields[1]}") m_sed+=("${fields[2]}")
    m_killers+=("${fields[3]}") m_note+=("${fields[4]}")
done < "$list"

# A slice counts the mutations an emulated machine kills (minutes each) apart
# from the others (seconds), so no slice gets two machines while another
# gets none.
selected=() unsliced=()
n_light=0 n_heavy=0
for i in "${!m_id[@]}"; do
    case " ${m_killers[$i]} " in
    *' tests/guest/'*) rank=$n_heavy n_heavy=$((n_heavy + 1)) ;;
    *) rank=$n_light n_light=$((n_light + 1)) ;;
    esac
    if [ -n "$slice" ] && [ $((rank % ${slice#*/})) -ne "${slice%/*}" ]; then unsliced+=("$i"); continue; fi
    if [ ${#only[@]} -eq 0 ]; then selected+=("$i"); continue; fi
    for o in "${only[@]}"; do [ "$o" != "${m_id[$i]}" ] || selected+=("$i"); done
done
for o in "${only[@]}"; do
    found=0
    for i in "${!m_id[@]}"; do [ "$o" != "${m_id[$i]}" ] || found=1; done
    [ $found = 1 ] || { echo "mutate.sh: no mutation '$o' in $list (--list shows them)" >&2; exit 2; }
done

is_pending() { case " $1 " in *' pending:'*) return 0 ;; esac; return 1; }

if [ $list_only = 1 ]; then
    for i in "${selected[@]}"; do
        state=run
        is_pending "${m_killers[$i]}" && state=pending
        printf '%-22s %-8s %-24s %s\n' "${m_id[$i]}" "$state" "${m_file[$i]}" "${m_killers[$i]}"
    done
    exit 0
fi

start=$(date +%s)
say() { echo "mutate: $*"; }
elapsed() { echo $(($(date +%s) - $1)); }

# ---- the scratch tree
if [ -n "$scratch" ] && [ -f "$scratch/Makefile" ] && [ -f "$scratch/libperftramp_core.la" ]; then
    work=$scratch
    say "reusing the built tree in $work"
else
    if [ -n "$scratch" ]; then
        mkdir -p "$scratch" || exit 2
        work=$scratch
    else
        work=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-mutate.XXXXXX") || exit 2
    fi
    git -C "$top" rev-parse --git-dir > /dev/null 2>&1 || { echo "mutate.sh: $top is not a git checkout" >&2; exit 2; }
    say "copying $top to $work"
    (cd "$top" && git ls-files -z -c -o --exclude-standard | tar --null --ignore-failed-read -T - -cf -) |
        tar -C "$work" -xf - || { echo "mutate.sh: copy failed" >&2; exit 2; }
    t0=$(date +%s)
    # shellcheck disable=SC2086 # PERFTRAMP_CONFIGURE_FLAGS: words
    if ! (cd "$work" && autoreconf -fi && ./configure --enable-werror ${PERFTRAMP_CONFIGURE_FLAGS:-} &&
          make -j"$jobs") > "$work/mutate-build.log" 2>&1; then
        tail -n 40 "$work/mutate-build.log"
        echo "mutate.sh: the unmutated tree does not build (log: $work/mutate-build.log)" >&2
        keep=1
        exit 2
    fi
    say "built the unmutated tree in $(elapsed "$t0")s"
fi
if [ $keep = 1 ]; then
    say "keeping $work"
elif [ -z "$scratch" ]; then
    trap 'rm -rf "$work"' EXIT
fi

# make variables of the scratch build (check_PROGRAMS, TESTS)
# shellcheck disable=SC2016 # a make rule, written as is
printf 'pt-mutate-print-%%:\n\t@echo $($*)\n' > "$work/mutate-print.mk"
makevar() { make -s -C "$work" -f Makefile -f mutate-print.mk "pt-mutate-print-$1"; }
check_programs=" $(makevar check_PROGRAMS) "
all_tests=" $(makevar TESTS) "
helpers=()
for p in $check_programs; do
    case $all_tests in *" $p "*) ;; *) helpers+=("$p") ;; esac
done

# Script tests that build what they run from the sources themselves (with
# cross compilers): nothing needs building for them.
self_built=" tests/arch/run_foreign.sh tests/arch/unwind_foreign.sh "

# run_killers WORD...: VAR=value words set the environment, the others are
# tests.  Builds what they need and runs them; result_<n> = each .trs
# result, in order.  Returns 2 when the build fails.
results=() build_s=0 run_s=0
run_killers() {
    local envs=() tests=() progs=() logs=() scripts=0 w t b
    for w in "$@"; do
        case $w in *=*) envs+=("$w") ;; *) tests+=("$w") ;; esac
    done
    for t in "${tests[@]}"; do
        case $check_programs in
            *" $t "*) progs+=("$t") ;;
            *) case $self_built in *" $t "*) ;; *) scripts=1 ;; esac ;;
        esac
        b=${t%.test}
        logs+=("$b.log")
        rm -f "$work/$b.log" "$work/$b.trs"
    done
    [ $scripts = 0 ] || progs+=("${helpers[@]}")
    t_build=$(date +%s)
    # Check suites need only the core library and themselves; a script may
    # run anything `make all` builds.  `all` first, alone: it recurses
    # (all-am), and a parallel top-level build of the same objects would
    # race with it.
    local first=libperftramp_core.la
    [ $scripts = 0 ] || first=all
    if ! (cd "$work" && env "${envs[@]}" make -j"$jobs" $first &&
          { [ ${#progs[@]} -eq 0 ] || env "${envs[@]}" make -j"$jobs" "${progs[@]}"; }) \
            > "$work/mutate-last-build.log" 2>&1; then
        return 2
    fi
    build_s=$(($(date +%s) - t_build))
    t_run=$(date +%s)
    (cd "$work" && env "${envs[@]}" make -k -j"$jobs" "${logs[@]}") > "$work/mutate-last-run.log" 2>&1
    run_s=$(($(date +%s) - t_run))
    results=()
    for t in "${tests[@]}"; do
        b=${t%.test}
        r=$(sed -n 's/^:test-result: *\([A-Z]*\).*/\1/p' "$work/$b.trs" 2>/dev/null | head -n 1)
        results+=("${r:-NORESULT}")
    done
    return 0
}

# ---- baseline: every killer of the selected mutations passes unmutated
declare -A base_env=() base_env_all=() base_tests=()
n_run=0
for i in "${selected[@]}"; do
    is_pending "${m_killers[$i]}" && continue
    n_run=$((n_run + 1))
    for w in ${m_killers[$i]}; do
        case $w in
            *=*) base_env[${w%%=*}]="${base_env[${w%%=*}]:-} ${w#*=}"; base_env_all[${w%%=*}]=$(( ${base_env_all[${w%%=*}]:-0} + 1 )) ;;
            *) base_tests[$w]=1 ;;
        esac
    done
done
words=()
for v in "${!base_env[@]}"; do
    # a variable only narrows the baseline when every mutation sets it
    [ "${base_env_all[$v]}" = "$n_run" ] || continue
    # shellcheck disable=SC2086 # one value per word
    vals=$(printf '%s\n' ${base_env[$v]} | sort -u | tr '\n' ' ')
    words+=("$v=${vals% }")
done
reused=()
for t in "${!base_tests[@]}"; do
    if [ -n "$base_from" ] && [ "$base_from/${t%.test}.trs" -nt "$base_from/libperftramp_core.la" ] &&
            grep -q '^:test-result: PASS' "$base_from/${t%.test}.trs" 2>/dev/null; then
        reused+=("$t"); continue
    fi
    words+=("$t")
done
[ ${#reused[@]} -eq 0 ] || say "baseline: ${#reused[@]} killers passed in $base_from's make check (their .trs): ${reused[*]}"
has_test=0
for w in "${words[@]}"; do case $w in *=*) ;; *) has_test=1 ;; esac; done
[ $has_test = 1 ] || n_run=0
if [ $n_run -gt 0 ]; then
    t0=$(date +%s)
    say "baseline: ${words[*]}"
    if ! run_killers "${words[@]}"; then
        tail -n 40 "$work/mutate-last-build.log"
        echo "mutate.sh: the unmutated killers do not build" >&2
        exit 2
    fi
    k=0 bad=0
    for w in "${words[@]}"; do
        case $w in *=*) continue ;; esac
        if [ "${results[$k]}" != PASS ]; then
            say "baseline: $w ${results[$k]}: a killer must pass on the unmutated tree"
            b=${w%.test}
            tail -n 30 "$work/$b.log" 2>/dev/null | sed 's/^/    /'
            bad=1
        fi
        k=$((k + 1))
    done
    [ $bad = 0 ] || { echo "mutate.sh: baseline failed: no score" >&2; exit 1; }
    say "baseline: every killer passes unmutated ($(elapsed "$t0")s)"
fi

# ---- the mutations
killed=0 survived=0 defects=0 pending=0
survivors=() defect_ids=() pending_ids=()
# outside the slice: the sed script must still change its file
for i in "${unsliced[@]}"; do
    is_pending "${m_killers[$i]}" && continue
    path=$work/${m_file[$i]}
    if [ ! -f "$path" ] || sed -e "${m_sed[$i]}" "$path" | cmp -s - "$path"; then
        say "STALE    ${m_id[$i]}: the sed script changes nothing in ${m_file[$i]} (or it is gone)"
        defects=$((defects + 1)); defect_ids+=("${m_id[$i]}")
    fi
done
[ -z "$slice" ] || say "slice $slice: ${#selected[@]} mutations run, ${#unsliced[@]} others checked for STALE only"
for i in "${selected[@]}"; do
    id=${m_id[$i]} file=${m_file[$i]} script=${m_sed[$i]} killers=${m_killers[$i]}
    if is_pending "$killers"; then
        pending=$((pending + 1)); pending_ids+=("$id")
        for w in $killers; do
            case $w in pending:*) [ ! -e "$work/${w#pending:}" ] || say "note: $id: ${w#pending:} exists now: switch it on (drop 'pending:')" ;; esac
        done
        continue
    fi
    t0=$(date +%s)
    path=$work/$file
    if [ ! -f "$path" ]; then
        say "STALE    $id: $file does not exist"; defects=$((defects + 1)); defect_ids+=("$id"); continue
    fi
    cp "$path" "$path.mutate-orig"
    sed -e "$script" "$path.mutate-orig" > "$path"
    if cmp -s "$path" "$path.mutate-orig"; then
        cp "$path.mutate-orig" "$path"; rm -f "$path.mutate-orig"
        say "STALE    $id: the sed script changes nothing in $file"; defects=$((defects + 1)); defect_ids+=("$id"); continue
    fi
    # shellcheck disable=SC2086 # killers: words
    run_killers $killers
    rc=$?
    # restore with a fresh mtime: the next build recompiles the original
    cp "$path.mutate-orig" "$path"; rm -f "$path.mutate-orig"
    if [ $rc -eq 2 ]; then
        say "NOBUILD  $id: the mutant does not compile ($(elapsed "$t0")s)"
        grep -E 'error|Error' "$work/mutate-last-build.log" | head -n 5 | sed 's/^/    /'
        defects=$((defects + 1)); defect_ids+=("$id"); continue
    fi
    k=0 passed='' caught=''
    for w in $killers; do
        case $w in *=*) continue ;; esac
        case ${results[$k]} in
            FAIL | ERROR) caught="$caught ${w##*/}" ;;
            *) passed="$passed ${w##*/}:${results[$k]}" ;;
        esac
        k=$((k + 1))
    done
    if [ -z "$passed" ]; then
        killed=$((killed + 1))
        say "killed   $id by$caught ($(elapsed "$t0")s: build ${build_s}s, tests ${run_s}s)"
    else
        survived=$((survived + 1)); survivors+=("$id")
        say "SURVIVED $id: not caught by$passed${caught:+; caught by$caught} ($(elapsed "$t0")s: build ${build_s}s, tests ${run_s}s)"
    fi
done

total=$((killed + survived + defects))
say "score: $killed/$total killed, $survived survived, $defects defective (STALE/NOBUILD), $pending pending (not counted) in $(elapsed "$start")s"
[ ${#survivors[@]} -eq 0 ] || say "survived: ${survivors[*]}"
[ ${#defect_ids[@]} -eq 0 ] || say "defective: ${defect_ids[*]}"
[ ${#pending_ids[@]} -eq 0 ] || say "pending: ${pending_ids[*]}"
[ $survived -eq 0 ] && [ $defects -eq 0 ]
