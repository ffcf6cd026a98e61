# SPDX-License-Identifier: MIT
# chain_stats: call chains of `perf script -F comm,ip,sym,symoff,dso` (any
# -F whose frames print ip, sym+off and dso), shared by the perf tests.
#   awk -v leaf=LEAF -v want=WANT -v want_dso=DSO [-v edges=EDGES]
#       [-v checked=REGEX] -f tests/chain_stats.awk < script.txt
# A sample counts when its leaf frame's symbol is LEAF (default: WANT's
# first).  It is complete when its first frames are exactly WANT (space
# separated, leaf first) and the frames whose symbol matches CHECKED
# (default ^py::) lie in a dso matching the regex DSO.  EDGES: leaf offsets
# ("0x4 0xf") counted apart.  Prints "samples complete never edge_samples
# edge_complete", then (unless -v brief=1) one "  +OFFSET complete/samples"
# line per leaf offset.
#
# The layout is read as perf prints it, not by columns: a frame is a line
# that starts with a TAB ("\t%16lx sym+0xoff (dso)"); any other non-blank
# line is a sample's header (comm may hold spaces and be padded, the time
# may start with a space).  The dso is the last " (...)" of the frame, so a
# symbol or a path may hold spaces.
BEGIN {
    k = split(want, w, " ")
    ne = split(edges, e, " ")
    for (i = 1; i <= ne; i++) is_edge[e[i]] = 1
    if (leaf == "") leaf = w[1]
    if (checked == "") checked = "^py::"
}
function finish(   ok, i) {
    if (n > 0 && sym[1] == leaf) {
        hot++
        ok = n >= k
        for (i = 1; ok && i <= k; i++)
            if (sym[i] != w[i] || (w[i] ~ checked && dso[i] !~ want_dso))
                ok = 0
        complete += ok
        at[off[1]]++; at_ok[off[1]] += ok
        if (off[1] in is_edge) { edge++; edge_ok += ok }
    }
    n = 0
}
/py::never/ { never++ }
/^\t/ {
    s = $0
    sub(/^\t[ ]*[0-9a-f]+ /, "", s)
    d = ""
    if (match(s, / \([^(]*\)$/)) {
        # the last " (" with no "(" after it opens the dso
        d = substr(s, RSTART + 2, RLENGTH - 3)
        s = substr(s, 1, RSTART - 1)
    } else if (match(s, /^\(.*\)$/)) {
        d = substr(s, 2, length(s) - 2); s = ""
    }
    o = "0x0"
    if (match(s, /\+0x[0-9a-f]+$/)) { o = substr(s, RSTART + 1); s = substr(s, 1, RSTART - 1) }
    n++; sym[n] = s; off[n] = o; dso[n] = d
    next
}
/^[ \t]*$/ { finish(); next }
{ finish() }
END {
    finish()
    printf "%d %d %d %d %d\n", hot, complete, never + 0, edge, edge_ok
    if (brief) exit
    for (o in at) {
        t = ""
        if (o in is_edge) t = " (frame not set up: FDE only)"
        printf "  +%s %d/%d%s\n", o, at_ok[o], at[o], t
    }
}
