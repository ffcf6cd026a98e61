# SPDX-License-Identifier: MIT
# Counts complete call chains in `perf script -F ip,sym,symoff,dso` output
# (the form tests/guest/proofs.sh asks for: no comm, pid or time fields, so
# no header line whose width depends on the machine).  A sample is its run
# of frame lines "\t<blanks><ip> <sym>+0x<off> (<dso>)", leaf first, ended
# by a blank line.  perf starts every frame line with a TAB; a header line
# (other -F sets) starts with the comm, right-aligned in blanks, or with
# the time, padded with blanks while the machine has been up for fewer than
# 10,000 s: anything but a TAB and a hex address is a header and ends a
# sample.  Runs under busybox awk, mawk and gawk.
#
# Variables (awk -v):
#   leaf    a sample counts when its leaf frame's symbol is this one
#   want    space-separated symbols, leaf first: a counted sample is
#           complete when its first frames are exactly these
#   edges   optional "LO-HI ..." leaf offset ranges (hex, HI exclusive):
#           counted samples whose leaf offset lies in one are also counted
#           apart (the pcs where only the trampoline's FDE unwinds it)
#   never   optional symbol that must appear in no frame
# Prints: samples complete edge_samples edge_complete never_seen frames
function hex(s,   i, c, v) {
    v = 0
    s = tolower(s)
    sub(/^0x/, "", s)
    for (i = 1; i <= length(s); i++) {
        c = index("0123456789abcdef", substr(s, i, 1))
        if (c == 0) break
        v = v * 16 + c - 1
    }
    return v
}
function finish(   ok, i, o) {
    if (n > 0 && sym[1] == leaf) {
        hot++
        ok = n >= k
        for (i = 1; ok && i <= k; i++)
            if (sym[i] != w[i]) ok = 0
        complete += ok
        o = hex(off[1])
        for (i = 1; i <= ne; i++)
            if (o >= elo[i] && o < ehi[i]) { edge++; edge_ok += ok; break }
    }
    n = 0
}
BEGIN {
    k = split(want, w, " ")
    ne = split(edges, e, " ")
    for (i = 1; i <= ne; i++) { split(e[i], r, "-"); elo[i] = hex(r[1]); ehi[i] = hex(r[2]) }
}
/^[ \t]*$/ { finish(); next }
!/^\t[ ]*[0-9a-fA-F]+[ \t]/ { finish(); next }
{
    frames++
    # "<ip> <sym>+0x<off> (<dso>)": the symbol may hold blanks, the dso is
    # the last parenthesised field
    line = $0
    sub(/^[ \t]*[0-9a-fA-F]+[ \t]+/, "", line)
    sub(/[ \t]+\([^()]*\)[ \t]*$/, "", line)
    o = "0"
    if (match(line, /\+0x[0-9a-fA-F]+$/)) { o = substr(line, RSTART + 1); line = substr(line, 1, RSTART - 1) }
    n++
    sym[n] = line
    off[n] = o
    if (never != "" && line == never) never_seen++
}
END {
    finish()
    printf "%d %d %d %d %d %d\n", hot, complete, edge, edge_ok, never_seen, frames
}
