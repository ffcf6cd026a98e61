#!/bin/sh
# SPDX-License-Identifier: MIT
# The feature test a VM writes, as perftramp_version.h documents it:
#   #if PERFTRAMP_VERSION_NUMBER >= 0x000200  ->  perftramp_wrap_at
# (examples/lua/perftramp_lua.c uses exactly this).  It must take the 0.2
# branch with this build's headers, the program must link and need
# perftramp_wrap_at under the symbol version PERFTRAMP_<MAJOR>.<MINOR> of
# the header, and the header, perftramp.pc and perftramp_version() must say
# the same version.  The Lua port found them disagreeing (0.1.0 everywhere
# while the library exported PERFTRAMP_0.2).
# PROOF id: lua.version-feature-test.
set -u
B=$(cd "${PT_BUILDDIR:-.}" && pwd)
S=$(cd "${PT_SRCDIR:-.}" && pwd)
CC=${PT_CC:-cc}
id=lua.version-feature-test
fail() {
    echo "FAIL: $*"
    echo "PROOF: $id failed $*"
    exit 1
}
lib=$B/.libs/libperftramp.so
[ -f "$lib" ] || fail "$lib not built (a static-only build has no symbol versions)"
tmp=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-feature-XXXXXX") || fail "mktemp"
trap 'rm -rf "$tmp"' EXIT

cat >"$tmp/ft.c" <<'EOF'
#include <perftramp.h>
#include <stdio.h>
static int f(void) { return 7; }
int main(void)
{
    perftramp *pt = perftramp_open(NULL);
    perftramp_fn t;
#if PERFTRAMP_VERSION_NUMBER >= 0x000200
    t = perftramp_wrap_at(pt, (perftramp_fn)f, "ft::f", "ft.c", 3);
    puts("branch 0.2");
#else
    t = perftramp_wrap(pt, (perftramp_fn)f, "ft::f");
    puts("branch 0.1");
#endif
    if (!t || ((int (*)(void))t)() != 7)
        return 1;
    printf("header %s library %s\n", PERFTRAMP_VERSION, perftramp_version());
    return perftramp_close(pt);
}
EOF
# shellcheck disable=SC2086 # PT_CFLAGS is a list of flags
$CC -std=c11 -Wall -Wextra -Werror ${PT_CFLAGS:-} -I"$S/include" -I"$B" -o "$tmp/ft" "$tmp/ft.c" \
    -L"$B/.libs" -lperftramp >"$tmp/cc.log" 2>&1 || fail "compiling the feature test: $(head -5 "$tmp/cc.log")"
out=$(PERFTRAMP= LD_LIBRARY_PATH="$B/.libs" "$tmp/ft") || fail "the feature test program failed: $out"
echo "$out"
hv=$(sed -n 's/^#define PERFTRAMP_VERSION "\(.*\)"$/\1/p' "$B/perftramp_version.h")
mm=${hv%.*}
need=$(objdump -T "$tmp/ft" | awk '$NF == "perftramp_wrap_at" { v = $(NF-1); gsub(/[()]/, "", v); print v }')
pcv=$(sed -n 's/^Version: //p' "$B/perftramp.pc")
echo "header $hv, perftramp.pc $pcv, the program needs perftramp_wrap_at from $need"
case $out in *"branch 0.2"*) ;; *) fail "#if PERFTRAMP_VERSION_NUMBER >= 0x000200 is false with header $hv" ;; esac
case $out in *"header $hv library $hv"*) ;; *) fail "perftramp_version() differs from the header: $out" ;; esac
[ "$pcv" = "$hv" ] || fail "perftramp.pc says $pcv, the header $hv"
[ "$need" = "PERFTRAMP_$mm" ] || fail "perftramp_wrap_at is needed as '$need', the header says $mm (PERFTRAMP_$mm)"
echo "PROOF: $id proven the documented #if takes the 0.2 branch; header, perftramp.pc and perftramp_version() say $hv; perftramp_wrap_at@$need"
