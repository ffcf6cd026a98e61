#!/bin/sh
# SPDX-License-Identifier: MIT
# tools/deps/apt_lib.sh's apt_mirror (tools/guest's Debian mirror) on apt
# sources of every layout it must read: deb822 stanzas (deb-src, Enabled:
# no, several URIs and suites, a continuation line, a vendor's "bookworm
# main" before Debian's, told apart by the Release file apt fetched) and
# one-line files (options in brackets, comments, deb-src, a proxy's URI
# with a port), and none at all.  The hosts are reserved .invalid names;
# the scheme is put together at run time so that no address reads as a
# package server's in the tree.
set -u
S=$(cd "${PT_SRCDIR:-.}" && pwd)
# shellcheck source=tools/deps/apt_lib.sh
. "$S/tools/deps/apt_lib.sh"
t=$(mktemp -d "${TMPDIR:-/tmp}/pt-apt-mirror.XXXXXX") || { echo "FAIL: mktemp"; exit 1; }
trap 'rm -rf "$t"' EXIT
h=http
failed=0
expect() { # CASE SUITE WANT (empty: none)
    got=$(PT_APT_ETC=$t/$1/etc PT_APT_LISTS=$t/$1/lists apt_mirror "$2")
    rc=$?
    if [ -n "$3" ]; then ok=$([ $rc -eq 0 ] && echo y); else ok=$([ $rc -ne 0 ] && echo y); fi
    if [ "$got" = "$3" ] && [ "$ok" = y ]; then
        echo "ok: $1 $2: ${got:-none (status $rc)}"
    else
        echo "FAIL: $1 $2: got '$got' (status $rc), want '${3:-none}'"
        failed=1
    fi
}
mkdir -p "$t/deb822/etc/sources.list.d" "$t/deb822/lists" "$t/oneline/etc/sources.list.d" "$t/none/etc"

# deb822: the vendor's file sorts first; Debian's Release names it
cat > "$t/deb822/etc/sources.list.d/00-vendor.sources" <<S
Types: deb
URIs: $h://vendor.invalid/repo
Suites: bookworm
Components: main
S
cat > "$t/deb822/etc/sources.list.d/debian.sources" <<S
# a comment
Types: deb-src
URIs: $h://src-only.invalid/debian
Suites: bookworm
Components: main

Types: deb
URIs: $h://disabled.invalid/debian
Suites: bookworm
Components: main
Enabled: no

Types: deb
URIs: $h://first.invalid/deb_ian/
 $h://second.invalid/debian
Suites: bookworm bookworm-updates
Components: main contrib
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

types: deb
uris: $h://trixie.invalid/debian
suites: trixie
components: main
S
printf 'Origin: Debian\nLabel: Debian\nSuite: stable\n' > "$t/deb822/lists/first.invalid_deb%5fian_dists_bookworm_InRelease"
expect deb822 bookworm "$h://first.invalid/deb_ian"
expect deb822 trixie "$h://trixie.invalid/debian"
expect deb822 sid ""
# without apt's lists: the first entry, in apt's order
rm "$t/deb822/lists/"*
expect deb822 bookworm "$h://vendor.invalid/repo"

# one-line sources.list, then a .list beside it
cat > "$t/oneline/etc/sources.list" <<S
# deb $h://commented.invalid/debian bookworm main
deb-src $h://src-only.invalid/debian bookworm main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] $h://proxy.invalid:3142/deb.debian.org/debian/ bookworm main contrib # a proxy
deb $h://security.invalid/debian-security bookworm-security main
S
echo "deb [ arch=amd64 ] $h://other.invalid/debian bookworm contrib" > "$t/oneline/etc/sources.list.d/contrib.list"
expect oneline bookworm "$h://proxy.invalid:3142/deb.debian.org/debian"
expect oneline bookworm-security "$h://security.invalid/debian-security"

# no sources at all, and this machine's own (whatever they hold: one URI)
expect none bookworm ""
own=$(apt_mirror)
echo "this machine: ${own:-none}"
case $own in */*) ;; *) [ -z "$own" ] || { echo "FAIL: this machine's mirror '$own' is not a URI"; failed=1; } ;; esac
exit $failed
