# SPDX-License-Identifier: MIT
# What the tests that read perf's call chains share (bash):
#   chain_stats LEAF WANT DSO EDGES < perf script -F comm,ip,sym,symoff,dso
#       tests/lib/chain_stats.awk: "samples complete never edge_samples
#       edge_complete frames", then one "  +OFFSET complete/samples" line per
#       leaf offset.  LEAF "" is WANT's first; CHAIN_CHECKED (default ^py::)
#       names the frames that must lie in DSO.
#   pct N D          "N/D = p.q%"
#   at_least_90 N D  N is at least 90% of D, and D > 0
# shellcheck shell=bash
chain_stats() {
    awk -v leaf="$1" -v want="$2" -v want_dso="$3" -v edges="$4" -v checked="${CHAIN_CHECKED:-}" \
        -f "${PT_SRCDIR:-.}/tests/lib/chain_stats.awk"
}
pct() {
    if [ "$2" -gt 0 ]; then
        local p=$(($1 * 1000 / $2))
        printf '%d/%d = %d.%d%%' "$1" "$2" $((p / 10)) $((p % 10))
    else
        printf '%d/0' "$1"
    fi
}
at_least_90() { [ "$2" -gt 0 ] && [ $(($1 * 10)) -ge $(($2 * 9)) ]; }
