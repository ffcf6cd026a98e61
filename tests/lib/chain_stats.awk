# SPDX-License-Identifier: MIT
# chain_stats: complete call chains in `perf script` output whose frames
# print ip, sym+off and dso (-F ip,sym,symoff,dso with or without comm, pid,
# time).  The one chain counter of the suite: the perf tests on this machine
# (perf_e2e.sh, elf_perf.sh, tcc.sh, the musl build's musl.sh) and the emulated machines
# (tests/guest/proofs.sh, copied into each guest).  Runs under busybox awk
# (the guests'), mawk and gawk.
#   awk -v want=WANT [-v leaf=LEAF] [-v want_dso=DSO] [-v checked=REGEX]
#       [-v edges=EDGES] [-v never=SYM] [-v keep=REGEX] [-v brief=1] -f chain_stats.awk
# A sample counts when its leaf frame's symbol is LEAF (default: WANT's
# first).  It is complete when its first frames are exactly WANT (space
# separated, leaf first) and the frames whose symbol matches CHECKED
# (default ^py::) lie in a dso matching the regex DSO (no DSO: any dso).
# EDGES: leaf offsets counted apart, each an offset ("0x4c") or a range
# "LO-HI" (hex, HI exclusive: the pcs where only the trampoline's FDE
# unwinds it).  NEVER (default py::never): a symbol that must be in no frame.
# A leaf frame whose symbol is CHECKED's and repeats in the next frame is one
# trampoline, seen twice: sampled in code of its own that it calls before its
# target (i686's pc thunk), then at that call's return address; the chain
# is read from the second.
# KEEP: a frame whose symbol does not match it reads as "*", and a run of
# such frames as one "*": for chains whose C frames vary with what an
# interpreter runs (examples/tiny: keep='^(tiny::|main$)', want="* tiny::f
# * tiny::<main> * main").
# Prints "samples complete never edge_samples edge_complete frames", then
# (unless brief) one "  +OFFSET complete/samples" line per leaf offset.
#
# The layout is read as perf prints it, not by columns: a frame is a line
# of a TAB, blanks, a hex ip and a blank; any other non-blank line is a
# sample's header (comm may hold spaces and be padded, the time is padded
# with blanks while the machine has been up for fewer than 10,000 s), and
# a blank line ends the sample.  The dso is the last "(...)" of the frame,
# so a symbol may hold spaces.
function hex(s,   i, c, v) {
    v = 0
    s = tolower(s)
    sub(/^\+/, "", s)
    sub(/^0x/, "", s)
    for (i = 1; i <= length(s); i++) {
        c = index("0123456789abcdef", substr(s, i, 1))
        if (c == 0) break
        v = v * 16 + c - 1
    }
    return v
}
function is_edge(o,   i, v) {
    v = hex(o)
    for (i = 1; i <= ne; i++)
        if (v >= elo[i] && v < ehi[i]) return 1
    return 0
}
BEGIN {
    k = split(want, w, " ")
    ne = split(edges, e, " ")
    for (i = 1; i <= ne; i++) {
        if (split(e[i], r, "-") == 2) { elo[i] = hex(r[1]); ehi[i] = hex(r[2]) }
        else { elo[i] = hex(e[i]); ehi[i] = elo[i] + 1 }
    }
    if (leaf == "") leaf = w[1]
    if (checked == "") checked = "^py::"
    if (never == "") never = "py::never"
}
function finish(   ok, i, o) {
    if (n > 1 && sym[1] == leaf && sym[2] == sym[1] && sym[1] ~ checked && dso[2] == dso[1]) {
        for (i = 2; i <= n; i++) { sym[i - 1] = sym[i]; off[i - 1] = off[i]; dso[i - 1] = dso[i] }
        off[1] = o1
        n--
    }
    if (n > 0 && sym[1] == leaf) {
        hot++
        ok = n >= k
        for (i = 1; ok && i <= k; i++)
            if (sym[i] != w[i] || (want_dso != "" && w[i] ~ checked && dso[i] !~ want_dso))
                ok = 0
        complete += ok
        o = off[1]
        at[o]++; at_ok[o] += ok
        if (is_edge(o)) { edge++; edge_ok += ok; edge_at[o] = 1 }
    }
    n = 0
}
/^[ \t]*$/ { finish(); next }
!/^\t[ ]*[0-9a-fA-F]+[ \t]/ { finish(); next }
{
    frames++
    s = $0
    sub(/^\t[ ]*[0-9a-fA-F]+[ \t]+/, "", s)
    d = ""
    if (match(s, /\([^()]*\)[ \t]*$/)) {
        d = substr(s, RSTART + 1, RLENGTH - 1)
        sub(/\)[ \t]*$/, "", d)
        s = substr(s, 1, RSTART - 1)
        sub(/[ \t]+$/, "", s)
    }
    o = "0x0"
    if (match(s, /\+0x[0-9a-fA-F]+$/)) { o = substr(s, RSTART + 1); s = substr(s, 1, RSTART - 1) }
    if (s == never) never_seen++
    if (keep != "" && s !~ keep) {
        if (n > 0 && sym[n] == "*") next
        s = "*"
    }
    n++; sym[n] = s; off[n] = o; dso[n] = d
    if (n == 1) o1 = o
}
END {
    finish()
    printf "%d %d %d %d %d %d\n", hot, complete, never_seen, edge, edge_ok, frames
    if (brief) exit
    for (o in at) {
        t = ""
        if (o in edge_at) t = " (frame not set up: FDE only)"
        printf "  +%s %d/%d%s\n", o, at_ok[o], at[o], t
    }
}
