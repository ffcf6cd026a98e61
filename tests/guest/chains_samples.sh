#!/bin/sh
# SPDX-License-Identifier: MIT
# tests/lib/chain_stats.awk, the parser of the guests' perf script output, on
# recorded samples (tests/guest/samples/): perf 6.1's output of every
# architecture's guest, and hand-made layouts (header lines with a padded
# time, 7-digit pids, a comm with blanks, long names, [unknown] frames).
# Each line of samples/expected.txt: FILE|LEAF|WANT|EDGES|OUTPUT, run with
# every awk on the machine (mawk, gawk, busybox awk: the guests use
# busybox's) and compared with OUTPUT.
set -u
d=${PT_SRCDIR:-.}/tests/guest
awk_file=${PT_SRCDIR:-.}/tests/lib/chain_stats.awk
awks=
for a in mawk gawk original-awk "busybox awk"; do
    command -v "${a%% *}" > /dev/null 2>&1 || continue
    [ "${a%% *}" = busybox ] && ! busybox awk 'BEGIN{}' 2> /dev/null && continue
    awks="$awks${awks:+,}$a"
done
[ -n "$awks" ] || { echo "SKIP: no awk"; exit 77; }
n=0 bad=0
while IFS='|' read -r file leaf want edges expect; do
    case $file in '#'* | '') continue ;; esac
    [ -f "$d/samples/$file" ] || { echo "FAIL: $d/samples/$file missing"; bad=$((bad + 1)); continue; }
    old_ifs=$IFS IFS=,
    for a in $awks; do
        IFS=$old_ifs
        # shellcheck disable=SC2086 # "busybox awk" is a command and its argument
        got=$($a -v leaf="$leaf" -v want="$want" -v edges="$edges" -v never=py::never -v brief=1 -f "$awk_file" "$d/samples/$file")
        n=$((n + 1))
        if [ "$got" != "$expect" ]; then
            echo "FAIL: $a on $file (leaf $leaf): got '$got', want '$expect'"
            bad=$((bad + 1))
        fi
        IFS=,
    done
    IFS=$old_ifs
done < "$d/samples/expected.txt"
[ "$n" -gt 0 ] || { echo "FAIL: no sample was read"; exit 1; }
echo "chain_stats.awk: $((n - bad))/$n sample runs agree ($awks)"
echo "$((n - bad)) passed, $bad failed"
[ "$bad" -eq 0 ]
