#!/bin/bash
# SPDX-License-Identifier: MIT
# Install into a private prefix, then build a program outside the tree
# against it with pkg-config, as C and as C++, statically and shared.
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
# only the public API (and the GDB JIT interface) is exported
nm -D --defined-only "$prefix/lib/libperftramp.so" | awk '{print $3}' | grep -Ev '^(perftramp_|__jit_debug_)' && {
  echo "libperftramp.so exports internal symbols"; exit 1; } || true
rm -rf "$prefix" "$out"
echo "install + pkg-config consumer: ok"
