#!/bin/sh
# SPDX-License-Identifier: MIT
# debian/ agrees with the tree, without building a package (make check):
#  - debian/libperftramp0.symbols is what debian/symbols-from-map writes
#    from src/api/libperftramp.map: a symbol added to the version script
#    without the symbols file fails here;
#  - its soname and package name are those of the built library;
#  - debian/changelog's version is configure's (AC_INIT): the package of a
#    release says that release.
set -u
src=${PT_SRCDIR:-$(cd "$(dirname "$0")/../.." && pwd)}
build=${PT_BUILDDIR:-$src}
fails=0
fail() { echo "FAIL: $*"; fails=$((fails + 1)); }

want=$(sh "$src/debian/symbols-from-map" "$src/src/api/libperftramp.map") || fail "debian/symbols-from-map failed"
if [ "$want" != "$(cat "$src/debian/libperftramp0.symbols")" ]; then
    fail "debian/libperftramp0.symbols is not the version script's; rerun debian/symbols-from-map > debian/libperftramp0.symbols:"
    printf '%s\n' "$want" | diff "$src/debian/libperftramp0.symbols" - | sed 's/^/    /'
fi
nsym=$(printf '%s\n' "$want" | grep -c '^ ')
nmap=$(sed -n 's/^[ \t]*\(perftramp_[a-z_]*\);.*/\1/p' "$src/src/api/libperftramp.map" | sort -u | wc -l)
nlisted=$(printf '%s\n' "$want" | grep '^ perftramp_' | cut -d@ -f1 | sort -u | wc -l)
[ "$nmap" -gt 0 ] && [ "$nmap" -eq "$nlisted" ] ||
    fail "the version script names $nmap perftramp_* symbols, the symbols file $nlisted"

so=$build/.libs/libperftramp.so
if [ -f "$so" ]; then
    soname=$(readelf -d "$so" | sed -n 's/.*(SONAME).*\[\(.*\)\]/\1/p')
    header=$(printf '%s\n' "$want" | sed -n '2p')
    pkg=$(printf '%s\n' "$soname" | sed 's/\.so\./ /' | tr -d ' ')
    [ "$header" = "$soname $pkg #MINVER#" ] ||
        fail "the built library's soname is $soname: the symbols file says '$header'"
    grep -q "^Package: $pkg\$" "$src/debian/control" || fail "debian/control has no package $pkg for $soname"
else
    fail "$so is not built"
fi

version=$(sed -n 's/^AC_INIT(\[perftramp\], \[\([^]]*\)\].*/\1/p' "$src/configure.ac")
changelog=$(sed -n '1s/^perftramp (\([^)]*\)).*/\1/p' "$src/debian/changelog")
[ -n "$version" ] && [ "$version" = "$changelog" ] ||
    fail "debian/changelog says ${changelog:-?}, configure.ac ${version:-?}: add a changelog entry for the release"

[ $fails -eq 0 ] || exit 1
echo "debian_sync: symbols file = version script ($nsym lines, $nlisted functions), soname $soname, version $version"
