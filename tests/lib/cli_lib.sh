# SPDX-License-Identifier: MIT
# Sourced by tests/cli/cli_check.sh and tests/cli/cli_node.sh: runs `perftramp
# check` on a valid dump and on corrupted copies of it.
# Needs PT (the perftramp binary) and work (a scratch directory).

fail=0

# check_expect WANT FILE LABEL: runs check; exit must be WANT, never a crash,
# and an invalid verdict must say why ("error").
check_expect() {
    ce_want=$1 ce_file=$2 ce_label=$3
    "$PT" check "$ce_file" > "$work/out.txt" 2>&1
    rc=$?
    if [ $rc -ge 128 ]; then
        echo "FAIL: $ce_label: perftramp check crashed (exit $rc)"; cat "$work/out.txt"; fail=1; return
    fi
    if [ $rc -ne "$ce_want" ]; then
        echo "FAIL: $ce_label: exit $rc, want $ce_want"; head -30 "$work/out.txt"; fail=1; return
    fi
    if [ "$ce_want" -eq 1 ] && ! grep -q "error" "$work/out.txt"; then
        echo "FAIL: $ce_label: rejected without an error message"; cat "$work/out.txt"; fail=1; return
    fi
    # offsets in one notation: hex with 0x, never "at 1026"
    ce_dec='(offset|LOAD|record|FDE|CIE|entry|\.eh_frame|\.eh_frame_hdr) at [+]?[0-9]+([^0-9x]|$)'
    if grep -qE "$ce_dec" "$work/out.txt"; then
        echo "FAIL: $ce_label: a decimal or relative offset in a message:"; grep -E "$ce_dec" "$work/out.txt"
        fail=1; return
    fi
    echo "ok: $ce_label: exit $rc$( [ "$ce_want" -eq 1 ] && printf ' -- %s' "$(grep -m1 "error *at offset" "$work/out.txt" | sed 's/^ *//')")"
}

# u32 N: N as 4 octal escapes in the dump's byte order (dump_be=1: big).
u32() {
    b0=$(($1 & 255)) b1=$(($1 >> 8 & 255)) b2=$(($1 >> 16 & 255)) b3=$(($1 >> 24 & 255))
    if [ "${dump_be:-0}" = 1 ]; then printf '\\%03o\\%03o\\%03o\\%03o' $b3 $b2 $b1 $b0
    else printf '\\%03o\\%03o\\%03o\\%03o' $b0 $b1 $b2 $b3; fi
}

# rd32 FILE OFFSET: the u32 there, in the dump's byte order.
rd32() {
    od -An -tu1 -j "$2" -N 4 "$1" | awk -v be="${dump_be:-0}" '{ print be == 1 ? (($1 * 256 + $2) * 256 + $3) * 256 + $4 : (($4 * 256 + $3) * 256 + $2) * 256 + $1 }'
}

# poke FILE OFFSET OCTAL-ESCAPES: overwrites bytes in place.
poke() {
    printf "$3" | dd of="$1" bs=1 seek="$2" conv=notrunc status=none
}

# The first record of a kind from --records: prints "OFFSET SIZE".
record_of() {
    "$PT" check --records "$1" | awk -v kind="$2" -v extra="${3:-}" '
        $1 == "record" && $3 == kind && $0 ~ extra { printf "%d %d\n", hex(substr($2, 3)), $5; exit }
        function hex(s,   v, i) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }'
}

# corrupt_all DUMP LABEL: every corruption must be rejected (exit 1).
corrupt_all() {
    dump=$1 label=$2
    size=$(wc -c < "$dump")

    # cut mid-record: half-way through the record that holds the middle byte
    set -- $("$PT" check --records "$dump" | awk -v mid=$((size / 2)) '
        function hex(s,   v, i) { v = 0; for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1; return v }
        $1 == "record" { o = hex(substr($2, 3)); if (o + $5 > mid) { print o, $5; exit } }')
    if [ $# -eq 2 ]; then
        head -c $(($1 + $2 / 2)) "$dump" > "$work/cut.dump"
        check_expect 1 "$work/cut.dump" "$label cut mid-record at $(($1 + $2 / 2))"
    else
        echo "FAIL: $label: no record found to cut"; fail=1
    fi
    head -c 20 "$dump" > "$work/short.dump"
    check_expect 1 "$work/short.dump" "$label cut inside the header"

    cp "$dump" "$work/magic.dump" && poke "$work/magic.dump" 0 'X'
    check_expect 1 "$work/magic.dump" "$label flipped magic"

    cp "$dump" "$work/version.dump" && poke "$work/version.dump" 4 "$(u32 2)"
    check_expect 1 "$work/version.dump" "$label version 2"

    # bad record sizes: the first record's total_size (offset 40 + 4)
    cp "$dump" "$work/size8.dump" && poke "$work/size8.dump" 44 "$(u32 8)"
    check_expect 1 "$work/size8.dump" "$label record size 8"
    cp "$dump" "$work/sizebig.dump" && poke "$work/sizebig.dump" 44 "$(u32 2130706432)"
    check_expect 1 "$work/sizebig.dump" "$label record size past the end"
    cp "$dump" "$work/size17.dump" && poke "$work/size17.dump" 44 "$(u32 17)"
    check_expect 1 "$work/size17.dump" "$label record size 17 (misframes the rest)"

    # corrupted .eh_frame of the first UNWINDING_INFO that has one
    set -- $(record_of "$dump" UNWINDING_INFO 'mapped_size [1-9]')
    if [ $# -eq 2 ]; then
        eh=$(($1 + 40))
        cp "$dump" "$work/ehlen.dump" && poke "$work/ehlen.dump" "$eh" "$(u32 2147483647)"
        check_expect 1 "$work/ehlen.dump" "$label .eh_frame CIE length garbled"
        cp "$dump" "$work/ehver.dump" && poke "$work/ehver.dump" $((eh + 8)) '\011'
        check_expect 1 "$work/ehver.dump" "$label .eh_frame CIE version 9"
        # the CIE id (0) flipped: the message must say what it is
        cp "$dump" "$work/ehid.dump" && poke "$work/ehid.dump" $((eh + 4)) '\001'
        check_expect 1 "$work/ehid.dump" "$label .eh_frame CIE id flipped to 1"
        grep -q "CIE id 0x1" "$work/out.txt" ||
            { echo "FAIL: $label: a flipped CIE id is not reported as one"; grep error "$work/out.txt"; fail=1; }
        # FDE pc_begin pushed away from the code (CIE length + 4 + 8)
        cielen=$(rd32 "$dump" "$eh")
        cp "$dump" "$work/ehpc.dump" && poke "$work/ehpc.dump" $((eh + cielen + 4 + 8)) "$(u32 1073741824)"
        check_expect 1 "$work/ehpc.dump" "$label FDE pc_begin off the code"
    else
        echo "FAIL: $label: no UNWINDING_INFO with .eh_frame to corrupt"; fail=1
    fi

    # garbage: the tool must answer, never crash
    head -c 4096 /dev/urandom > "$work/random.dump"
    check_expect 1 "$work/random.dump" "$label random bytes"
    : > "$work/empty.dump"
    check_expect 1 "$work/empty.dump" "$label empty file"
}
