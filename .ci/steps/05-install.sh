#!/bin/bash
# SPDX-License-Identifier: MIT
# Install into a private prefix, then build a program outside the tree
# against it with pkg-config, as C and as C++, statically and shared; the
# installed libraries show only the public API (docs/abi.md).
# shellcheck disable=SC2046 # pkg-config flag lists are split on purpose
set -euo pipefail
prefix=$(mktemp -d /tmp/perftramp-prefix.XXXXXX)
make install prefix="$prefix" >/dev/null
export PKG_CONFIG_PATH="$prefix/lib/pkgconfig"
pc() { pkg-config --define-variable=prefix="$prefix" "$@"; }
out=$(mktemp -d /tmp/perftramp-consumer.XXXXXX)
cc -std=c11 -Wall -Wextra -Werror -o "$out/consumer" tests/consumer/consumer.c $(pc --cflags --libs perftramp)
LD_LIBRARY_PATH="$prefix/lib" "$out/consumer"
g++ -x c++ -Wall -Wextra -Werror -o "$out/consumer_cxx" tests/consumer/consumer.c $(pc --cflags --libs perftramp)
LD_LIBRARY_PATH="$prefix/lib" "$out/consumer_cxx"
cc -std=c11 -o "$out/consumer_static" tests/consumer/consumer.c $(pc --cflags perftramp) \
  "$prefix/lib/libperftramp.a" $(pc --libs --static libffi) -pthread -ldl
"$out/consumer_static"
# the version macros are installed and agree with the library and the .pc
cat > "$out/version.c" <<'C'
#include <perftramp.h>
#include <stdio.h>
#include <string.h>
int main(void) { puts(PERFTRAMP_VERSION); return strcmp(PERFTRAMP_VERSION, perftramp_version()) != 0; }
C
cc -std=c11 -o "$out/version" "$out/version.c" $(pc --cflags --libs perftramp)
[ "$(LD_LIBRARY_PATH="$prefix/lib" "$out/version")" = "$(pc --modversion perftramp)" ] || {
  echo "PERFTRAMP_VERSION, perftramp_version() and perftramp.pc disagree"; exit 1; }
# only the public API is exported (docs/abi.md), every name versioned, and
# the archive defines no other global: internal pt_* names stay inside
bad=$(nm -D --defined-only "$prefix/lib/libperftramp.so" | awk '$2 != "A" {print $3}' |
  grep -Ev '^perftramp_[a-z_]*@@PERFTRAMP_' || true)
if [ -n "$bad" ]; then echo "libperftramp.so exports internal or unversioned symbols: $bad"; exit 1; fi
bad=$(nm -g --defined-only "$prefix/lib/libperftramp.a" | awk 'NF == 3 {print $3}' | grep -Ev '^perftramp_' || true)
if [ -n "$bad" ]; then echo "libperftramp.a defines internal globals: $bad"; exit 1; fi
# no reader or validator in the runtime library (they are libperftramp_read)
readers=$(nm -g --defined-only .libs/libperftramp_read.a | awk 'NF == 3 {print $3}' | sort -u)
bad=$({ nm "$prefix/lib/libperftramp.a"; nm -D "$prefix/lib/libperftramp.so"; } | awk 'NF >= 2 {print $NF}' |
  sort -u | comm -12 - <(echo "$readers"))
if [ -n "$bad" ]; then echo "reader symbols in the installed library: $bad"; exit 1; fi
# a program with its own pt_buf_init & co. links against both
cc -std=gnu11 -o "$out/private_static" tests/abi/private_names.c $(pc --cflags perftramp) \
  "$prefix/lib/libperftramp.a" $(pc --libs --static libffi) -pthread -ldl
"$out/private_static"
cc -std=gnu11 -o "$out/private_shared" tests/abi/private_names.c $(pc --cflags --libs perftramp)
LD_LIBRARY_PATH="$prefix/lib" "$out/private_shared"
rm -rf "$prefix" "$out"
echo "install + pkg-config consumer: ok"
