#!/bin/sh
# SPDX-License-Identifier: MIT
# What the installed libraries show a program (docs/abi.md):
#   - libperftramp.so exports exactly the symbols of its version script,
#     each with a version, and libperftramp.a defines exactly those as
#     globals: every internal pt_* name is hidden or local;
#   - neither holds a reader or validator symbol (src/read/, the readers
#     live in a library of their own, for the tools and tests);
#   - a program that defines pt_buf_init and other internal names links
#     against both, and the library never calls the program's copies.
: "${PT_SRCDIR:=.}" "${PT_BUILDDIR:=.}" "${PT_CC:=cc}"
so=$PT_BUILDDIR/.libs/libperftramp.so
ar=$PT_BUILDDIR/.libs/libperftramp.a
readers=$PT_BUILDDIR/.libs/libperftramp_read.a
map=$PT_SRCDIR/src/api/libperftramp.map
command -v nm >/dev/null 2>&1 || { echo "SKIP: nm is not installed"; exit 77; }
for f in "$so" "$ar" "$readers"; do
    [ -f "$f" ] || { echo "SKIP: $f not built (a --disable-shared or --disable-static build)"; exit 77; }
done
work=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-abi-sym.XXXXXX") || exit 1
trap 'rm -rf "$work"' EXIT
fail=0

# the exported names, from the version script's global: lists
sed -e 's|/\*.*\*/||' -e '/\/\*/,/\*\//d' "$map" | tr -s '[:blank:]' '\n' |
    sed -n '/^global:$/,/^local:$/p' | grep -E '^[A-Za-z_][A-Za-z0-9_]*;$' | tr -d ';' | sort -u > "$work/want"
[ "$(wc -l < "$work/want")" -ge 8 ] || { echo "FAIL: read only $(wc -l < "$work/want") names from $map"; exit 1; }

# libperftramp.so: defined dynamic symbols, minus the version nodes
nm -D --defined-only "$so" | awk '$2 != "A" {print $3}' | sed 's/@.*//' | sort -u > "$work/so"
if ! cmp -s "$work/want" "$work/so"; then
    echo "FAIL: libperftramp.so exports (+) or misses (-):"; diff "$work/want" "$work/so" | grep '^[<>]'; fail=1
else
    echo "ok: libperftramp.so exports exactly the $(wc -l < "$work/so") symbols of the version script"
fi
if objdump -T "$so" | grep -E ' (perftramp_|__jit_debug_)' | grep -vEq 'PERFTRAMP_0\.[0-9]+'; then
    echo "FAIL: an exported symbol without its version node:"; objdump -T "$so" | grep -E ' (perftramp_|__jit_debug_)'; fail=1
else
    echo "ok: every export carries a PERFTRAMP_ version"
fi

# libperftramp.a: defined globals
nm -g --defined-only "$ar" | awk 'NF == 3 {print $3}' | sort -u > "$work/ar"
if ! cmp -s "$work/want" "$work/ar"; then
    echo "FAIL: libperftramp.a defines these globals (+) or lacks (-):"; diff "$work/want" "$work/ar" | grep '^[<>]' | head -20; fail=1
else
    echo "ok: libperftramp.a defines exactly the $(wc -l < "$work/ar") public globals"
fi

# no reader in the runtime: any symbol (local ones too) the readers define
nm -g --defined-only "$readers" | awk 'NF == 3 {print $3}' | sort -u > "$work/readers"
[ -s "$work/readers" ] || { echo "FAIL: no symbols in $readers"; exit 1; }
{ nm "$so" 2>/dev/null; nm -D "$so"; nm "$ar"; } | awk 'NF >= 2 {print $NF}' | sed 's/@.*//' | sort -u > "$work/all"
leaked=$(comm -12 "$work/readers" "$work/all")
if [ -n "$leaked" ]; then
    echo "FAIL: reader symbols in the runtime library:"; echo "$leaked" | head; fail=1
    echo "PROOF: abi.runtime-only failed $(echo "$leaked" | wc -l) reader symbols in libperftramp.so/.a"
else
    echo "PROOF: abi.runtime-only proven 0 of $(wc -l < "$work/readers") reader symbols in libperftramp.so/.a"
    echo "ok: none of the $(wc -l < "$work/readers") reader symbols (src/read/) is in libperftramp.so or .a"
fi

# a program with its own pt_* names: static, then shared
# shellcheck disable=SC2086
ffi_libs=$(pkg-config --libs libffi 2>/dev/null || echo -lffi)
prog=$PT_SRCDIR/tests/abi/private_names.c
inc="-I$PT_SRCDIR/include -I$PT_BUILDDIR"
linked=0
# shellcheck disable=SC2086
if $PT_CC $PT_CFLAGS $inc -o "$work/static" "$prog" "$ar" $ffi_libs -pthread -ldl $PT_LDFLAGS 2>"$work/static.err"; then
    if "$work/static" > "$work/static.out" 2>&1; then
        echo "static: $(cat "$work/static.out")"; linked=$((linked + 1))
    else
        echo "FAIL: static: $(cat "$work/static.out")"; fail=1
    fi
else
    echo "FAIL: a program defining pt_buf_init & co. does not link against libperftramp.a:"
    grep -E 'multiple definition|error' "$work/static.err" | head -5; fail=1
fi
# shellcheck disable=SC2086
if $PT_CC $PT_CFLAGS $inc -o "$work/shared" "$prog" -L"$(dirname "$so")" -lperftramp \
        -Wl,-rpath,"$(cd "$(dirname "$so")" && pwd)" $PT_LDFLAGS 2>"$work/shared.err"; then
    if "$work/shared" > "$work/shared.out" 2>&1; then
        echo "shared: $(cat "$work/shared.out")"; linked=$((linked + 1))
    else
        echo "FAIL: shared: $(cat "$work/shared.out")"; fail=1
    fi
else
    echo "FAIL: linking against libperftramp.so:"; head -5 "$work/shared.err"; fail=1
fi

if [ $fail -eq 0 ]; then
    echo "PROOF: abi.hidden-internals proven $(wc -l < "$work/want") exported symbols, 0 internal globals in .so and .a, program with 9 internal names linked $linked ways"
else
    echo "PROOF: abi.hidden-internals failed see above"
fi
exit $fail
