# SPDX-License-Identifier: MIT
# Sourced by tools/deps/arch.sh, tools/deps/ffi-static.sh and
# tools/deps/musl.sh: fetch Debian's own libffi (or another) source package
# into a fresh build tree.
#   libffi_source NAME WHAT
#   deb_source PACKAGE NAME WHAT
# needs $logdir, $APT, $SUDO; sets $log ($logdir/NAME.log), $tree
# ($logdir/NAME), $dir (the unpacked PACKAGE-*), and failed(), which prints
# the log's tail, where the whole log and the kept build tree are, every
# config.log in it, and exits 1.  apt_update, deb_src_on: tools/deps/apt_lib.sh.
. "$(dirname "$0")/apt_lib.sh"

failed() {
    tail -n 20 "$log" >&2
    echo "install-deps: $1" >&2
    echo "install-deps: the whole log: $log; the build tree is kept in $tree" >&2
    find "$tree" -name config.log 2> /dev/null | sed 's/^/install-deps: configure said more in /' >&2
    exit 1
}

libffi_source() { deb_source libffi "$@"; }

deb_source() {
    pkg=$1
    shift
    mkdir -p "$logdir"
    log=$logdir/$1.log
    tree=$logdir/$1
    rm -rf "$tree"
    mkdir -p "$tree"
    : > "$log"
    echo "install-deps: building $2 from Debian's source package (log: $log)"
    # Source packages: the machine's own Debian mirror, with deb-src switched on.
    rc=0
    deb_src_on "$log" || rc=$?
    [ "$rc" -ne 2 ] || apt_update "$log" || failed "apt-get update (with deb-src) failed"
    if ! (cd "$tree" && apt-get source "$pkg") >> "$log" 2>&1; then
        # the lists may predate the deb-src entry
        apt_update "$log" || failed "apt-get update failed"
        (cd "$tree" && apt-get source "$pkg") >> "$log" 2>&1 ||
            failed "apt-get source $pkg failed (needs a deb-src entry and dpkg-dev)"
    fi
    dir=$(find "$tree" -maxdepth 1 -type d -name "$pkg-*" | head -n 1)
    [ -n "$dir" ] || failed "apt-get source $pkg left no $pkg-* directory"
}
