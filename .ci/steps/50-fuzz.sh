#!/bin/bash
# SPDX-License-Identifier: MIT
# CI step: libFuzzer on the untrusted-input parsers (the jitdump validator
# and the .eh_frame/.eh_frame_hdr decoder), built straight from the library
# sources with clang -fsanitize=fuzzer,address,undefined (libclang-rt-14-dev),
# seeded from tests/fuzz/corpus_*, each for a bounded time.  Any crash,
# sanitizer report, leak or timeout fails the step.
# PT_FUZZ_SECONDS (default 60) bounds each harness.
set -euo pipefail
src=$(cd "$(dirname "$0")/../.." && pwd)
secs=${PT_FUZZ_SECONDS:-60}
CLANG=${CLANG:-clang}
work=$(mktemp -d "${TMPDIR:-/tmp}/perftramp-fuzz.XXXXXX")
trap 'rm -rf "$work"' EXIT

flags=(-std=c11 -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=all
       -fno-omit-frame-pointer -I"$src/src" -I"$src/include" -D_GNU_SOURCE)
if ! printf 'int LLVMFuzzerTestOneInput(const char *d, long n) { (void)d; (void)n; return 0; }\n' |
        "$CLANG" "${flags[@]}" -x c - -o "$work/probe" 2>"$work/probe.log"; then
    echo "50-fuzz: $CLANG cannot link -fsanitize=fuzzer (install libclang-rt-14-dev):"
    cat "$work/probe.log"
    exit 1
fi

# harness -> library sources it needs (globs: every table of src/arch/,
# variants included, without a list to keep in step)
declare -A deps=(
    [fuzz_jitdump]="src/read/jitdump_reader.c src/read/jitdump_validate.c src/read/jitdump_maps.c
        src/read/jitdump_seen.c src/read/eh_decode.c src/read/jitdump_rows.c
        src/emit/layout.c src/emit/eh_frame.c src/emit/cfi_state.c src/emit/bytebuf.c src/arch/*.c"
    [fuzz_eh_frame]="src/read/eh_decode.c"
)
declare -A corpus=([fuzz_jitdump]=corpus_jitdump [fuzz_eh_frame]=corpus_eh_frame)

status=0
# build both, then fuzz both at once (one core each): the step takes one
# harness's time, not two
pids=()
for h in fuzz_jitdump fuzz_eh_frame; do
    srcs=()
    for s in ${deps[$h]}; do
        for f in "$src"/$s; do srcs+=("$f"); done
    done
    "$CLANG" "${flags[@]}" "$src/tests/fuzz/$h.c" "${srcs[@]}" -o "$work/$h"
    mkdir -p "$work/$h.corpus" "$work/$h.artifacts"
    # libFuzzer writes new inputs into the first directory: a scratch copy,
    # never the source tree; the seeds are read from the second.
    UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 "$work/$h" \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
        -artifact_prefix="$work/$h.artifacts/" \
        "$work/$h.corpus" "$src/tests/fuzz/${corpus[$h]}" > "$work/$h.log" 2>&1 &
    pids+=($!)
done
i=0
for h in fuzz_jitdump fuzz_eh_frame; do
    if wait "${pids[$i]}"; then
        runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/$h.log" | grep -o '[0-9]*$' || true)
        cov=$(grep -o 'cov: [0-9]* ft: [0-9]*' "$work/$h.log" | tail -1 || true)
        echo "50-fuzz: $h: ${runs:-?} executions in ${secs}s, no finding ($cov, corpus $(ls "$work/$h.corpus" | wc -l) new inputs)"
    else
        echo "50-fuzz: $h: FINDING"
        tail -60 "$work/$h.log"
        for a in "$work/$h.artifacts"/*; do
            [ -e "$a" ] || continue
            echo "--- $(basename "$a") (base64):"
            base64 "$a" | head -40
        done
        status=1
    fi
    i=$((i + 1))
done
exit $status
