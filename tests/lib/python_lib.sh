# SPDX-License-Identifier: MIT
# Shared by tests/python_*.sh: run a test once per supported CPython found
# on this machine (examples/python/pythons.sh: $PT_PYTHONS, else pyenv's
# 3.11, 3.12, 3.13, python3.X and python3 on PATH), each with the module
# `make python` built for it, and print one proof line per version:
#     PROOF: python.<ver>.<test> proven|failed|not-run <detail>
# A version with no interpreter on this machine gets an information line,
# not a proof line: its proofs are not this machine's to make (strict mode,
# docs/testing.md, would otherwise fail every machine without pyenv).  An
# interpreter found but unusable (no module built for it, no venv) is
# not-run: that is a gap strict mode must see.
#
#   . "${PT_SRCDIR:-.}/tests/lib/python_lib.sh"
#   each_python TEST FUNCTION    # FUNCTION runs once per version, in a subshell
#   python_exit                  # 1 if a version failed, 77 if none ran, else 0
#   skip_all REASON TEST...      # the whole test cannot run (no perf, say): the
#                                # not-run line of each TEST per found version, SKIP
#
# A proof that does not apply to an interpreter (the fp proof on a CPython
# built without frame pointers: CPython's own test skips there too) gets an
# information line with what was measured instead.
#
# FUNCTION sees $PYTHON (the interpreter), $PYVER (3.12), $module (the
# built extension), $vtmp (an empty directory of its own, removed after),
# PYTHONPATH pointing at the build tree's package, and run_python, which
# runs $PYTHON with the module importable -- and, when the module was built
# with sanitizers (the CI's ASan pass), with their runtimes preloaded,
# since python itself is not instrumented (`env $python_env CMD` does the
# same for any command).  FUNCTION ends with one of
#     proven DETAIL     fail REASON     not_run REASON     not_applicable DETAIL
# (or exits non-zero: failed).  forget_pid PID removes /tmp/perf-PID.map,
# /tmp/jit-PID.dump and /tmp/jitted-PID-*.so when the test ends: CPython
# writes its own files there whatever the directory asked for.
pt_pkgdir=${PT_BUILDDIR:-.}/examples/python
pt_top=$(mktemp -d "${TMPDIR:-/tmp}/pt-python.XXXXXX") || exit 99
pt_cleanup() {
    if [ -f "$pt_top/pids" ]; then
        while read -r pid; do
            rm -f "/tmp/perf-$pid.map" "/tmp/jit-$pid.dump" "/tmp/jitted-$pid-"*.so
        done < "$pt_top/pids"
    fi
    rm -rf "$pt_top"
}
trap pt_cleanup EXIT
trap 'exit 130' INT TERM
pt_pythons=$(sh "${PT_SRCDIR:-.}/examples/python/pythons.sh")
pt_proven=0 pt_failed=0 pt_inapplicable=0
PYTHONPATH_OUTSIDE=${PYTHONPATH:-}

skip() { # the whole test, before any version ran
    echo "SKIP: $*"
    exit 77
}
proven() {
    echo "$*" > "$vtmp/.result"
    exit 0
}
fail() {
    echo "FAIL: $*"
    echo "$*" > "$vtmp/.result"
    exit 1
}
not_run() {
    echo "not run: $*"
    echo "$*" > "$vtmp/.result"
    exit 77
}
not_applicable() {
    echo "$*" > "$vtmp/.result"
    exit 78
}
skip_all() {
    why=$1
    shift
    echo "$pt_pythons" | while read -r ver exe _; do
        [ "$exe" = - ] && continue
        for t in "$@"; do echo "PROOF: python.$ver.$t not-run $why"; done
    done
    skip "$why"
}
forget_pid() {
    echo "$1" >> "$pt_top/pids"
}
run_python() {
    env $python_env "$PYTHON" "$@"
}

# pt_setup VER EXE: the environment of one version's run (in the subshell)
pt_setup() {
    PYVER=$1 PYTHON=$2
    module=$(ls "$pt_pkgdir"/perftramp/_perftramp.cpython-"$(echo "$PYVER" | tr -d .)"*.so 2> /dev/null | head -n 1)
    [ -n "$module" ] || not_run "the module is not built for $PYTHON (make python PYTHON=$PYTHON)"
    PYTHONPATH=$pt_pkgdir${PYTHONPATH_OUTSIDE:+:$PYTHONPATH_OUTSIDE}
    export PYTHONPATH
    preload=
    for lib in libasan libubsan; do
        path=$(ldd "$module" 2> /dev/null | awk -v l="$lib" 'index($1, l ".so") == 1 { print $3 }')
        [ -n "$path" ] && preload="$preload${preload:+:}$path"
    done
    # `env $python_env CMD` (word splitting intended: no spaces inside).
    # CPython's own allocations are not freed at exit: no leak report.
    python_env="PYTHONPATH=$PYTHONPATH"
    [ -n "$preload" ] &&
        python_env="$python_env LD_PRELOAD=$preload ASAN_OPTIONS=${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
    export PYVER PYTHON module preload python_env
}

each_python() {
    pt_test=$1 pt_fn=$2
    while read -r ver exe why; do
        [ -n "$ver" ] || continue
        if [ "$exe" = - ]; then
            echo "python.$ver.$pt_test: not on this machine: $why"
            continue
        fi
        echo "=== $pt_test, CPython $ver: $exe"
        vtmp=$pt_top/$ver-$pt_test
        mkdir -p "$vtmp"
        (pt_setup "$ver" "$exe" && cd "$vtmp" && "$pt_fn")
        st=$?
        result=$(cat "$vtmp/.result" 2> /dev/null)
        case $st in
        0)
            pt_proven=$((pt_proven + 1))
            line="proven ${result:-ok}"
            ;;
        77) line="not-run ${result:-no reason given}" ;;
        78)
            echo "python.$ver.$pt_test: does not apply here: $result"
            pt_inapplicable=$((pt_inapplicable + 1))
            rm -rf "$vtmp"
            continue
            ;;
        *)
            pt_failed=$((pt_failed + 1))
            line="failed ${result:-exit status $st}"
            ;;
        esac
        echo "PROOF: python.$ver.$pt_test $line"
        rm -rf "$vtmp"
    done << EOF
$pt_pythons
EOF
}

python_exit() {
    [ "$pt_failed" -eq 0 ] || exit 1
    [ "$pt_proven" -gt 0 ] || [ "$pt_inapplicable" -gt 0 ] ||
        skip "no supported CPython ran ($(echo "$pt_pythons" | tr '\n' ';' | sed 's/;$//'))"
    exit 0
}
