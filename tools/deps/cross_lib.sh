# SPDX-License-Identifier: MIT
# Sourced (POSIX sh) by tools/deps/prove.sh and the tests that build for
# every table (tests/arch/run_foreign.sh, cross_configure.sh,
# unwind_foreign.sh, tests/guest/perf_guest.sh): the names Debian gives an
# architecture's pieces where they are not its table's GNU triple
# (.clang_target) and name (.name).
#   cross_multiarch TRIPLE   Debian's multiarch tuple, the directory of its
#                            libraries and headers (/usr/lib/<it>), as the
#                            triple's gcc names it (-print-multiarch):
#                            i386-linux-gnu for i686-linux-gnu; the triple
#                            itself when there is no such gcc
#   cross_qemu NAME TRIPLE   the qemu-user that runs its programs:
#                            qemu-NAME-static, else the one named after
#                            the multiarch tuple's CPU (qemu-i386-static
#                            for i686)
#   cross_native TRIPLE DIR  true when this machine's kernel runs the
#                            triple's static programs itself (a 32-bit
#                            mode of the CPU: i686 on x86-64, unless the
#                            kernel's 32-bit emulation is off) and no
#                            binfmt_misc handler would give them to qemu;
#                            builds a probe in DIR
cross_multiarch() {
    _m=$("$1-gcc" -print-multiarch 2> /dev/null) || _m=
    echo "${_m:-$1}"
}
cross_qemu() {
    if command -v "qemu-$1-static" > /dev/null 2>&1; then
        echo "qemu-$1-static"
    else
        _m=$(cross_multiarch "$2")
        echo "qemu-${_m%%-*}-static"
    fi
}
cross_native() {
    _q=$(cross_qemu "" "$1")
    [ ! -e "/proc/sys/fs/binfmt_misc/${_q%-static}" ] &&
        printf 'int main(void) { return 0; }\n' | "$1-gcc" -static -x c -o "$2/probe-$1" - 2> /dev/null &&
        "$2/probe-$1" 2> /dev/null
}
