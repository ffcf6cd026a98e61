#!/bin/bash
# SPDX-License-Identifier: MIT
# The Debian package, as a Debian maintainer and a user meet it (make
# check-package; docs/testing.md, "The Debian package"):
#  1. `make distdir` (the release tree), its native source package
#     (dpkg-source -b), and the four binary packages (dpkg-buildpackage
#     -us -uc -b: the unit tests of `make check-unit` run inside, and
#     dpkg-gensymbols -c4 holds the library to debian/libperftramp0.symbols);
#  2. lintian on the source and binary packages: no error, no warning
#     (overrides carry their reason in debian/*.lintian-overrides);
#  3. a clean Debian 12 root (tools/debian-root, cached), where apt
#     installs the four .deb files, their dependencies resolved from the
#     archive, and autopkgtest runs debian/tests from the source package
#     (autopkgtest-virt-chroot, in a private mount namespace: /proc, /sys
#     and /dev are the host's, perf samples with the host's kernel).
# PROOF: package.debian.  Root only (chroot, apt): not-run otherwise.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$src}
id=package.debian
t_start=$(date +%s)
notrun() {
    echo "PROOF: $id not-run $*"
    echo "SKIP: $*"
    exit 77
}
fail() {
    echo "FAIL: $*"
    echo "PROOF: $id failed $*"
    exit 1
}
phase() { echo "=== package: $* ($(( $(date +%s) - t_start )) s)"; }

[ "$(id -u)" -eq 0 ] || notrun "needs root (chroot, apt in the clean root)"
grep -q '^VERSION_ID="12"' /etc/os-release 2> /dev/null || notrun "not Debian 12 (the package is built and tested for Debian 12)"
for tool in dpkg-buildpackage dpkg-source dh lintian mmdebstrap autopkgtest unshare; do
    command -v "$tool" > /dev/null || notrun "$tool missing (tools/deps/package.txt)"
done
version=$(sed -n 's/^VERSION = //p' "$build/Makefile")
[ -n "$version" ] || fail "no VERSION in $build/Makefile"
arch=$(dpkg --print-architecture)

work=$(mktemp -d "${TMPDIR:-/tmp}/pt-package.XXXXXX") || exit 99
# The root's /proc, /sys and /dev are mounted only inside the namespace of
# step 3, so removing the tree here never reaches the host's.
trap 'rm -rf --one-file-system "$work"' EXIT

phase "1. source and binary packages of perftramp $version"
tree=$work/perftramp-$version
make -s -C "$build" distdir distdir="$tree" > "$work/distdir.log" 2>&1 ||
    { tail -n 20 "$work/distdir.log"; fail "make distdir failed"; }
(cd "$work" && dpkg-source -b "perftramp-$version") > "$work/source.log" 2>&1 ||
    { tail -n 20 "$work/source.log"; fail "dpkg-source -b failed"; }
dsc=$work/perftramp_$version.dsc
# in a clean environment, as a build daemon builds: Debian's own tools
# first on PATH (not a pyenv python3), nothing of this test's settings
(cd "$tree" && env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME="$work" TMPDIR="${TMPDIR:-/tmp}" LC_ALL=C.UTF-8 \
    ${DEB_BUILD_OPTIONS:+DEB_BUILD_OPTIONS="$DEB_BUILD_OPTIONS"} dpkg-buildpackage -us -uc -b -Jauto) > "$work/build.log" 2>&1 ||
    { tail -n 60 "$work/build.log"; fail "dpkg-buildpackage -us -uc -b failed (log above)"; }
packages="libperftramp0 libperftramp-dev perftramp python3-perftramp"
debs=
for p in $packages; do
    [ -f "$work/${p}_${version}_$arch.deb" ] || fail "dpkg-buildpackage made no $p package"
    debs="$debs $work/${p}_${version}_$arch.deb"
done
units=$(grep -c '^PASS: tests/' "$work/build.log")
case " ${DEB_BUILD_OPTIONS:-} " in
*" nocheck "*) units="nocheck" ;;
*) [ "$units" -gt 0 ] || fail "the package build ran no unit test (make check-unit)" ;;
esac
for p in $debs; do
    echo "  $(basename "$p"): $(dpkg-deb -f "$p" Depends)"
    dpkg-deb -c "$p" | awk '{ print "    " $6 ($7 != "" ? " " $7 " " $8 : "") }' | grep -v '/$'
done
echo "  unit tests in the package build: $units passed"

phase "2. lintian"
lintian --fail-on error,warning --show-overrides --info "$dsc" "$work/perftramp_${version}_$arch.changes" \
    > "$work/lintian.txt" 2>&1
lint_rc=$?
cat "$work/lintian.txt"
lint_e=$(grep -c '^E: ' "$work/lintian.txt")
lint_w=$(grep -c '^W: ' "$work/lintian.txt")
lint_o=$(grep -c '^O: ' "$work/lintian.txt")
[ "$lint_rc" -eq 0 ] && [ "$lint_e" -eq 0 ] && [ "$lint_w" -eq 0 ] ||
    fail "lintian: $lint_e error(s), $lint_w warning(s) (exit $lint_rc)"
echo "  lintian: 0 errors, 0 warnings, $lint_o overridden"

phase "3. a clean Debian 12 root"
tarball=$("$src/tools/debian-root" tarball) || fail "tools/debian-root could not make the clean root"
root=$work/root
mkdir "$root" && tar -C "$root" -xf "$tarball" || fail "cannot unpack $tarball"
cp /etc/resolv.conf "$root/etc/resolv.conf" 2> /dev/null || :
# shellcheck disable=SC2086 # the .deb files
mkdir "$root/debs" && cp $debs "$root/debs/"
dpkg-source -x "$dsc" "$work/source" > /dev/null || fail "dpkg-source -x $dsc failed"
# shellcheck disable=SC2016,SC2086 # expanded by the namespace's shell; the .deb files
unshare --mount --propagation private sh -c '
    set -e
    root=$1; shift
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"
    mount --rbind /dev "$root/dev"
    echo "--- apt-get install ./debs/*.deb in the clean root"
    chroot "$root" sh -c "apt-get -q update && DEBIAN_FRONTEND=noninteractive apt-get -q -y -o Dpkg::Use-Pty=0 install /debs/*.deb" 2>&1 |
        grep -vE "^(Get|Hit|Ign):|^Reading |^Building |^Fetched "
    chroot "$root" sh -c "dpkg-query -W libperftramp0 libperftramp-dev perftramp python3-perftramp"
    echo "--- autopkgtest, tests of the source package"
    exec "$@"' sh "$root" \
    autopkgtest --output-dir "$work/autopkgtest" $debs "$work/source/" -- chroot "$root" > "$work/autopkgtest.log" 2>&1
apt_rc=$?
sed -n '1,/^--- autopkgtest/p' "$work/autopkgtest.log"
# shellcheck disable=SC2086 # the package names
installed=$(chroot "$root" dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' $packages 2> /dev/null |
    grep -c '^ii ')
[ "$installed" -eq 4 ] || { tail -n 40 "$work/autopkgtest.log"; fail "apt installed $installed of the 4 packages in the clean root"; }
# what apt took from the archive besides the four (its "NEW packages" list)
from_archive=$(sed -n '/^The following NEW packages will be installed:/,/^[^ ]/p' "$work/autopkgtest.log" |
    sed '1d;$d' | tr ' ' '\n' | grep -vxE "|${packages// /|}")
echo "  from the archive with them: $(echo "$from_archive" | grep -c .) package(s): $(echo $from_archive)"

phase "4. autopkgtest"
for f in "$work"/autopkgtest/*-stdout; do
    [ -f "$f" ] || continue
    echo "--- $(basename "$f" -stdout)"
    cat "$f"
done
summary=$work/autopkgtest/summary
[ -f "$summary" ] || { tail -n 60 "$work/autopkgtest.log"; fail "autopkgtest wrote no summary (exit $apt_rc)"; }
cat "$summary"
ntests=$(grep -c . "$summary")
npass=$(grep -cE '^[^ ]+ +PASS' "$summary")
[ "$apt_rc" -eq 0 ] && [ "$npass" -eq "$ntests" ] && [ "$ntests" -ge 3 ] ||
    { tail -n 80 "$work/autopkgtest.log"; fail "autopkgtest $npass/$ntests passed (exit $apt_rc)"; }

phase "done"
echo "PROOF: $id proven 4 packages built (dpkg-buildpackage -b, unit tests $units, dpkg-gensymbols -c4), lintian 0 errors 0 warnings ($lint_o overridden), apt installed them in a clean Debian 12 root with $(echo "$from_archive" | grep -c .) package(s) from the archive ($(echo $from_archive)), autopkgtest $npass/$ntests ($(awk '{ print $1 }' "$summary" | tr '\n' ' ' | sed 's/ $//')) in $(( $(date +%s) - t_start )) s"
