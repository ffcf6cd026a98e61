#!/bin/sh
# SPDX-License-Identifier: MIT
# cc_eh_frame.sh CC ARGS...: runs CC ARGS with every C source compiled by way
# of assembly whose CFI goes to .eh_frame as well.  For 32-bit Arm: gcc
# (and clang) write an ARM EABI program's unwind tables as .ARM.exidx only,
# and its .cfi_* directives (with -g) to .debug_frame only (".cfi_sections
# .debug_frame"); no option asks for .eh_frame.  perf's DWARF unwinder on
# Debian 12 armhf (libunwind) reads .eh_frame through .eh_frame_hdr and
# nothing else: seen in tests/guest/perf_guest.sh's machine, a plain C
# chain unwinds 0% with .debug_frame only, all of it with .eh_frame.  So
# each C file becomes assembly, its .cfi_sections line asks for both
# sections, and that assembly goes where the C file was.
set -eu
cc=$1
shift
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pt-cc-eh.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
# the options for one compilation: all but -o and the input files
opts=
skip=
for a in "$@"; do
    if [ -n "$skip" ]; then skip=; continue; fi
    case $a in
    -o) skip=1 ;;
    *.c | *.S | *.s | *.o | *.a) ;;
    *) opts="$opts $a" ;;
    esac
done
n=0
set -- "$@" --end
while [ "$1" != --end ]; do
    a=$1
    shift
    case $a in
    *.c)
        n=$((n + 1))
        s=$tmp/$n-$(basename "$a" .c).s
        # shellcheck disable=SC2086 # opts: a list
        "$cc" $opts -S -o "$s" "$a"
        sed -i 's/^[[:space:]]*\.cfi_sections[[:space:]].*/\t.cfi_sections .eh_frame, .debug_frame/' "$s"
        set -- "$@" "$s" ;;
    *) set -- "$@" "$a" ;;
    esac
done
shift # --end
"$cc" "$@"
