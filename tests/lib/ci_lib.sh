# SPDX-License-Identifier: MIT
# Shared helpers of the CI steps (.ci/steps/*.sh, bash).
# ci_src DEST: a private copy of the committed tree (what CI's clone
# holds) with fresh autotools output, in DEST.  An in-tree configured
# checkout (CI's quickstart) refuses out-of-tree builds, hence the copy.
# PT_CI_SRC=<dir> uses that ready source tree instead (local runs).
ci_src() {
    local dest=$1
    if [ -n "${PT_CI_SRC:-}" ]; then
        CI_SRC_DIR=$PT_CI_SRC
        return
    fi
    rm -rf "$dest"
    mkdir -p "$dest"
    git archive --format=tar HEAD | tar -C "$dest" -xf -
    (cd "$dest" && autoreconf -fi >/dev/null 2>&1)
    # shellcheck disable=SC2034 # read by the sourcing step
    CI_SRC_DIR=$dest
}

# ci_build SRC BUILD [configure args]: configure and build out of tree.
ci_build() {
    local src=$1 build=$2
    shift 2
    rm -rf "$build"
    mkdir -p "$build"
    (cd "$build" && "$src/configure" -q --enable-werror "$@" && make -j2 -s >/dev/null)
}

# ci_logs BUILD: prints the logs of failed tests.
ci_logs() {
    local build=$1 f
    find "$build" -name "*.trs" 2>/dev/null | while IFS= read -r f; do
        if grep -qE '^:test-result: (FAIL|ERROR)' "$f"; then
            echo "---- ${f%.trs}.log"
            tail -n 60 "${f%.trs}.log"
        fi
    done
}

# ci_plain_tree: true when the current directory holds the tree CI built
# and tested (quickstart configures in-tree) with -g and no sanitizer, so a
# step can use its programs as they are.
ci_plain_tree() {
    local flags
    [ -f Makefile ] && [ -f tests/proof-summary.txt ] || return 1
    flags=$(sed -n 's/^CFLAGS = //p' Makefile)
    case " $flags " in *" -g "*) ;; *) return 1 ;; esac
    case $flags in *sanitize*) return 1 ;; esac
}

# ci_target NAME TARGET: `make TARGET` in the tree CI built (quickstart
# configures in-tree), else in its own build in /tmp/ci-NAME; prints the
# logs of failed tests when it fails.
ci_target() {
    local name=$1 target=$2 build
    if [ -f Makefile ]; then
        build=$PWD
    else
        ci_src "/tmp/ci-$name-src"
        ci_build "$CI_SRC_DIR" "/tmp/ci-$name"
        build=/tmp/ci-$name
    fi
    if ! (cd "$build" && make -s "$target"); then
        ci_logs "$build"
        return 1
    fi
}
