#!/bin/sh
# SPDX-License-Identifier: MIT
# Runs inside an emulated machine (tools/guest run), as its /payload/run,
# under busybox sh with Debian's perf and gdb: the x86-64 proofs of
# tests/perf/perf_e2e.sh, tests/perf/elf_perf.sh and tests/gdb/gdb_bt.sh, for the
# trampolines of this machine's architecture.  Prints one line
#   PROOF: arch.<arch>.<id> proven|failed <detail>
# per proof; tests/guest/perf_guest.sh (on the host) collects them.
# The payload (built by perf_guest.sh): bin/perf_workload (tests/perf/perf_workload.c
# with tests/guest/hidden_fp.S), bin/tiny, bin/perftramp, hot.tiny,
# chain_stats.awk, and the file "edges": the trampoline's offset ranges where
# its frame is not set up ("LO-HI ...", from the table's CFI rows).
# Files for the host go to out/.
arch=$(cat arch)
edges=$(cat edges)
export HOME=/tmp/home
mkdir -p "$HOME" out
cd /payload || exit 1
SECS=${PT_GUEST_SECONDS:-1}
MIN=50      # samples a proof must see: fewer is a failed measurement
MIN_EDGE=20 # samples at pcs where only the trampoline's FDE unwinds it
WANT="pt_eval py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main"
EDGE_WANT="py::leaf pt_hidden_loop pt_eval py::inner pt_eval py::middle pt_eval py::outer pt_eval py::main main"
unset PERFTRAMP
# groups to run (file "groups", from $PT_GUEST_PROOFS): fp jitdump elf gdb
# (and ehabi, for a table whose unwinder reads Arm EHABI tables)
groups=$(cat groups 2> /dev/null)
group() { case " ${groups:-fp jitdump elf gdb} " in *" $1 "*) return 0 ;; esac; return 1; }

proof() { echo "PROOF: arch.$arch.$1 $2 $3"; }
# A proof that does not apply: only for a property of perf or the kernel
# established apart from perftramp's own measurement (a control program,
# perf's binary); never because a measurement saw nothing.
na() { echo "NA: arch.$arch.$1 does not apply: $2"; }
pct() { [ "$2" -gt 0 ] && echo "$1/$2 = $(($1 * 100 / $2))%" || echo "$1/0"; }
ok90() { [ "$2" -ge "$3" ] && [ $(($1 * 10)) -ge $(($2 * 9)) ]; }

# script NAME: perf script of NAME.data in the form chain_stats.awk reads; the
# last whole samples of its last 300 lines are kept as a recorded sample of this perf's layout
script() {
    perf script -i "$1.data" -F ip,sym,symoff,dso 2> "$1.script.err" > "$1.script"
    tail -n 300 "$1.script" | sed "1,/^$/d" > "out/$1.script"
}
# judge ID NAME LEAF WANT [EDGES]: PROOF line from NAME.script
judge() {
    set -- "$1" "$2" "$3" "$4" "${5:-}"
    r=$(awk -v leaf="$3" -v want="$4" -v edges="$5" -v never=py::never -v brief=1 -f chain_stats.awk "$2.script")
    set -- "$1" "$2" "$3" "$4" "$5" $r
    n=$6 c=$7 nev=$8 en=$9 ec=${10}
    detail="complete $(pct "$c" "$n") of the samples in $3 ($(wc -l < "$2.script") lines of perf script)"
    [ -n "$5" ] && detail="$detail; at pcs where the frame is not set up: $(pct "$ec" "$en")"
    if [ "$nev" -gt 0 ]; then
        proof "$1" failed "py::never (wrapped, never called) appears $nev times; $detail"
    elif [ -n "$5" ] && ! ok90 "$ec" "$en" "$MIN_EDGE"; then
        proof "$1" failed "$detail (need >= 90% of >= $MIN_EDGE)"
    elif ok90 "$c" "$n" "$MIN"; then
        proof "$1" proven "$detail"
    else
        proof "$1" failed "$detail (need >= 90% of >= $MIN)"
        tail -n 5 "$2.script.err" 2> /dev/null | sed 's/^/#   /'
    fi
}
# record NAME OUTPUT MODE CALLGRAPH [perf options]: the workload under perf
record() {
    name=$1 output=$2 mode=$3 cg=$4
    shift 4
    mkdir -p "/tmp/$name.elf"
    # edges: three times as long; what it judges (py::leaf's samples) is a
    # small share of the run: in one second, s390x's ELF run gave 43 under
    # a loaded host and 32-bit Arm's 50-97 (the floor is 50)
    secs=$SECS
    [ "$mode" = edges ] && secs=$((SECS * 3))
    # the dump in /tmp itself: perf's libdw unwinder (s390x: perf has no
    # libunwind) unwinds perf inject's .so files only as /tmp/jitted-*
    # (docs/facts.md)
    JITDUMPDIR=/tmp PERFTRAMP_ELF_DIR=/tmp/$name.elf \
        perf record -q "$@" -e cpu-clock -F 1000 --call-graph "$cg" -o "$name.data" \
        -- bin/perf_workload "$output" "$secs" "$mode" > "$name.out" 2> "$name.err"
    rc=$?
    pid=$(awk '/^pid /{print $2}' "$name.out")
    [ $rc -eq 0 ] && [ -n "$pid" ] && return 0
    echo "# $name: perf record exit $rc"; sed 's/^/#   /' "$name.err" | tail -n 5
    return 1
}

# control CG: the plain-C control (no perftramp) under --call-graph CG.
# Sets ctl_at (its samples in ctl_spin, by their own pc), ctl_n and ctl_c
# (those with ctl_spin as the leaf, and of them the complete chains), ctl.
# control CG [PROGRAM]: PROGRAM (default fp_control) under --call-graph CG.
control() {
    c=ctl-$1${2:+-$2}
    perf record -q -e cpu-clock -F 1000 --call-graph "$1" -o "$c.data" -- "bin/${2:-fp_control}" "$SECS" > "$c.err" 2>&1
    perf script -i "$c.data" -F ip,sym,symoff,dso > "$c.script" 2> /dev/null
    tail -n 300 "$c.script" | sed "1,/^$/d" > "out/$c.script"
    set -- "$1" $(awk -v leaf=ctl_spin -v want="ctl_spin ctl_inner ctl_outer main" -v brief=1 -f chain_stats.awk "$c.script")
    ctl_n=$2 ctl_c=$3
    ctl_at=$(perf script -i "$c.data" -F ip,sym --hide-call-graph 2> /dev/null | grep -c ' ctl_spin')
    ctl="control (plain C main > ctl_outer > ctl_inner > ctl_spin, no perftramp) under --call-graph $1: $ctl_at samples in ctl_spin by their pc, $(pct "$ctl_c" "$ctl_n") with it as the leaf of a complete chain"
    echo "# $ctl"
}
# The same plain C built the distribution's default way, where the
# machine's programs need special flags for perf's walks (32-bit Arm:
# Thumb-2, unwind tables in .ARM.exidx only): what perf gives that build,
# as a note beside the control the proofs rest on.
default_build() {
    [ -x bin/fp_control_default ] || return 0
    control "$1" fp_control_default > /dev/null
    echo "# note: the same plain C built with the distribution's defaults (bin/fp_control_default) under --call-graph $1: $ctl_at samples in ctl_spin, $(pct "$ctl_c" "$ctl_n") complete"
}

echo "perf: $(perf --version), gdb: $(gdb --version | head -n 1)"

# 1. perf map + frame pointers: examples/tiny, then the workload's exact
#    chain.  First the control: a plain C chain, no perftramp.
t=$(date +%s)
fp_ok=1
if group fp; then
    default_build fp
    control fp
    if [ "$ctl_at" -lt "$MIN" ]; then
        proof perf-fp failed "the fp control: $ctl (need >= $MIN)"
        proof tiny-perf-fp failed "the fp control: $ctl (need >= $MIN)"
        fp_ok=0
    elif [ "$ctl_c" -eq 0 ]; then
        na tiny-perf-fp "perf --call-graph fp records no user frame on this kernel: $ctl"
        na perf-fp "perf --call-graph fp records no user frame on this kernel: $ctl"
        fp_ok=0
    fi
fi
if ! group fp || [ $fp_ok = 0 ]; then :
elif PERFTRAMP=perfmap perf record -q -e cpu-clock -F 1000 --call-graph fp -o tiny.data -- bin/tiny hot.tiny > tiny.out 2> tiny.err; then
    perf script -i tiny.data -F ip,sym,symoff,dso > tiny.script 2> tiny.script.err
    # a sample in tiny's own code is complete when its chain names a tiny::
    # function and reaches main
    set -- $(awk '
        function done() { if (n && first ~ /\/bin\/tiny\)$/) { s++; if (named && reached) c++ } n = named = reached = 0 }
        /^[ \t]*$/ || /^[^ \t]/ { done(); next }
        { if (!n) first = $0; n++; if ($2 ~ /^tiny::/) named = 1; if ($2 ~ /^main(\+0x[0-9a-f]+)?$/) reached = 1 }
        END { done(); print s + 0, c + 0 }' tiny.script)
    if ok90 "$2" "$1" "$MIN"; then
        proof tiny-perf-fp proven "examples/tiny, PERFTRAMP=perfmap, --call-graph fp: $(pct "$2" "$1") of its samples name a tiny:: function and reach main"
    else
        proof tiny-perf-fp failed "examples/tiny, PERFTRAMP=perfmap, --call-graph fp: $(pct "$2" "$1") (need >= 90% of >= $MIN)"
    fi
else
    proof tiny-perf-fp failed "perf record of examples/tiny: $(tail -n 1 tiny.err)"
fi
if group fp && [ $fp_ok = 1 ]; then
    if record fp perfmap eval fp; then script fp; judge perf-fp fp pt_eval "$WANT"
    else proof perf-fp failed "perf record --call-graph fp failed"; fi
    echo "# perf map + fp: $(($(date +%s) - t)) s"
fi

# 2. jitdump, -k 1, dwarf, perf inject --jit; then garbage in the frame
#    pointer: samples on the trampoline's own first instruction
t=$(date +%s)
# The DWARF control: the same plain C chain under --call-graph dwarf.  If
# perf's DWARF unwinder cannot walk even that, the dwarf rows do not apply.
jit_ok=1 dwarf_ok=1
if group jitdump || group elf; then
    default_build dwarf
    control dwarf
    if [ "$ctl_at" -lt "$MIN" ]; then
        for id in perf-jitdump-dwarf perf-jitdump-fdes perf-elf perf-elf-fdes perf-elf-attach; do
            proof $id failed "the dwarf $ctl (need >= $MIN)"
        done
        jit_ok=0 dwarf_ok=0
    elif [ "$ctl_c" -eq 0 ]; then
        for id in perf-jitdump-dwarf perf-jitdump-fdes perf-elf perf-elf-fdes perf-elf-attach; do
            na $id "perf's DWARF unwinder walks no frame past the sampled pc on this machine: $ctl"
        done
        jit_ok=0 dwarf_ok=0
    fi
fi
group jitdump && for mode in eval edges; do
    name=jit-$mode
    if record "$name" jitdump "$mode" dwarf -k 1; then
        dump=/tmp/jit-$pid.dump
        if perf inject --jit -i "$name.data" -o "$name.inj.data" > "$name.inj.log" 2>&1; then
            mv "$name.inj.data" "$name.data"
            script "$name"
            echo "# $name: perf inject --jit wrote $(ls /tmp | grep -c "^jitted-$pid-.*\.so$") jitted-*.so files"
        else
            : > "$name.script"; echo "# perf inject --jit failed: $(tail -n 2 "$name.inj.log")"
        fi
        if [ $jit_ok = 0 ]; then :
        elif [ "$mode" = eval ]; then
            judge perf-jitdump-dwarf "$name" pt_eval "$WANT"
        else
            judge perf-jitdump-fdes "$name" py::leaf "$EDGE_WANT" "$edges"
        fi
        if [ "$mode" = eval ]; then
            cp "$dump" out/
            # the same dump one directory down: the check must warn exactly
            # when this perf unwinds with libdw (no libunwind), the perf that
            # finds JIT .so files only as /tmp/jitted-*
            mkdir -p /tmp/sub && cp "$dump" /tmp/sub/
            libdw=0
            perf version --build-options 2> /dev/null | grep -q ' libunwind: *\[ OFF' && libdw=1
            bin/perftramp check "/tmp/sub/${dump##*/}" > check-sub.out 2>&1
            warned=$(grep -c 'not /tmp: this perf unwinds with libdw' check-sub.out)
            if ! bin/perftramp check "$dump" > check.out 2>&1; then
                proof check failed "perftramp check: $(tail -n 3 check.out | tr '\n' ' ')"
            elif grep -q 'unwinds with libdw' check.out || [ "$warned" != "$libdw" ]; then
                proof check failed "perftramp check: the /tmp rule of a perf without libunwind (here: $libdw) warned $warned times for /tmp/sub, and for /tmp: $(grep -c 'unwinds with libdw' check.out)"
            else
                proof check proven "perftramp check (built for $arch, run here) on the dump: $(tail -n 1 check.out); $([ $libdw = 1 ] && echo 'this perf unwinds with libdw: a copy in /tmp/sub is warned about' || echo 'this perf has libunwind: no /tmp rule')"
            fi
        fi
    else
        [ "$mode" = eval ] && { proof perf-jitdump-dwarf failed "perf record -k 1 failed"; proof check failed "no dump"; }
        [ "$mode" = edges ] && proof perf-jitdump-fdes failed "perf record -k 1 failed"
    fi
done
group jitdump && echo "# jitdump + dwarf: $(($(date +%s) - t)) s"

# 3. EHABI (32-bit Arm): libgcc's unwinder reads .ARM.exidx tables, which it
#    finds for trampolines through libperftramp's __gnu_Unwind_Find_exidx:
#    tests/arch/ehabi_unwind.cc, static and against libperftramp.so as a
#    program links it; its control without unwind tables must abort
if group ehabi; then
    t=$(date +%s)
    bin/ehabi_unwind > ehabi.out 2>&1
    rs=$?
    bin/ehabi_unwind control > ehabi-control.out 2>&1
    rc=$?
    LD_LIBRARY_PATH=/payload/lib bin/ehabi_shared shared > ehabi-shared.out 2>&1
    rd=$?
    ns=$(grep -c '^proof: [a-z]* proven' ehabi.out)
    nd=$(grep -c '^proof: [a-z]* proven' ehabi-shared.out)
    if [ $rs -eq 0 ] && [ "$ns" -eq 3 ] && [ $rc -eq 134 ] && [ $rd -eq 0 ] && [ "$nd" -eq 4 ]; then
        proof ehabi-guest proven "static and against libperftramp.so ($(sed -n 's/^proof: shared proven //p' ehabi-shared.out)): a C++ exception caught through a trampoline 1000/1000, backtrace(3) one frame more than direct; threads: $(sed -n 's/^proof: threads proven //p' ehabi-shared.out); without unwind tables std::terminate (exit $rc)"
    else
        proof ehabi-guest failed "static: $ns/3 parts, exit $rs; shared: $nd/4 parts, exit $rd; control exit $rc (want 134)"
        grep -v '^ok' ehabi.out ehabi-shared.out | tail -n 12 | sed 's/^/#   /'
    fi
    echo "# EHABI: $(($(date +%s) - t)) s"
fi

# 4. ELF arenas: a plain perf record, no -k 1, no inject; the garbage frame
#    pointer; attached later with -p
group elf || { group gdb || exit 0; }
t=$(date +%s)
if ! group elf || [ $dwarf_ok = 0 ]; then :
elif record elf elf eval dwarf; then script elf; judge perf-elf elf pt_eval "$WANT"
else proof perf-elf failed "perf record failed"; fi
if ! group elf || [ $dwarf_ok = 0 ]; then :
elif record elf-edges elf edges dwarf; then script elf-edges; judge perf-elf-fdes elf-edges py::leaf "$EDGE_WANT" "$edges"
else proof perf-elf-fdes failed "perf record failed"; fi
if group elf && [ $dwarf_ok = 1 ]; then
    mkdir -p /tmp/attach.elf
    # a workload that outlives the recording however slowly the machine
    # starts it (the 32-bit Arm one once spent most of 5 s before perf
    # attached, and ended during the recording): ended once perf is done
    : > attach.out
    PERFTRAMP_ELF_DIR=/tmp/attach.elf bin/perf_workload elf $((SECS * 60)) eval > attach.out 2>&1 &
    wpid=$!
    # attach once the trampolines exist (the workload prints its pid then)
    i=0
    while ! grep -q '^pid ' attach.out && [ $i -lt 50 ]; do sleep 0.2; i=$((i + 1)); done
    # perf 6.1 under TCG once refused the attach with exit 255 and no word
    # (seen once in 8 runs, under a loaded host): say so, and attach again
    for try in 1 2; do
        kill -0 "$wpid" 2> /dev/null || { echo "# the workload ended before perf record -p (try $try)"; break; }
        perf record -e cpu-clock -F 1000 --call-graph dwarf -p "$wpid" -o attach.data -- sleep 2 > attach.err 2>&1 && break
        echo "# perf record -p, try $try: exit $?"; grep -v '^\[' attach.err | sed 's/^/#   /' | tail -n 5
        sleep 1
    done
    kill "$wpid" 2> /dev/null
    wait "$wpid"
    script attach
    judge perf-elf-attach attach pt_eval "$WANT"
    echo "# ELF arenas: $(($(date +%s) - t)) s"
fi
group gdb || exit 0

# 5. gdb: bt in tiny's evaluator names the trampolines (GDB JIT interface)
t=$(date +%s)
PERFTRAMP=gdb gdb -q -batch -ex 'set pagination off' -ex 'break eval_function' -ex run \
    -ex continue -ex continue -ex bt --args bin/tiny hot.tiny > gdb.out 2>&1
frames=$(grep -c '^#[0-9]' gdb.out)
named=$(grep '^#[0-9]' gdb.out | grep -c ' tiny::')
if grep -q '^#[0-9].* main ' gdb.out && [ "$named" -ge 2 ] && ! grep -q '^#[0-9].* ?? ' gdb.out; then
    proof gdb-bt proven "bt: $frames frames, $named named tiny::, down to main: $(grep '^#[0-9]' gdb.out | sed 's/^#[0-9]* *\(0x[0-9a-f]* in \)\{0,1\}\([^ ]*\).*/\2/' | tr '\n' ' ')"
else
    proof gdb-bt failed "bt: $frames frames, $named tiny::"
    sed 's/^/#   /' gdb.out | tail -n 20
fi
cp gdb.out out/gdb.out
echo "# gdb: $(($(date +%s) - t)) s"
exit 0
